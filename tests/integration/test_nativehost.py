"""The native host as the browser sees it: a real ``centrum-host`` subprocess driven over its stdin/stdout pipes."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.host import HostProcess, article_page
from hypothesis import given, settings
from hypothesis import strategies as st

from centrum.core.builders import E, T, build
from centrum.native.framing import MAX_MESSAGE_BYTES, encode_message

REPO = Path(__file__).resolve().parents[2]



def test_ping_then_clean_exit(host: HostProcess, tmp_path: Path) -> None:
    reply = host.ask({"v": 1, "id": "p1", "type": "ping"})
    assert reply["status"] == "ok" and reply["type"] == "ping" and reply["id"] == "p1"
    assert reply["result"]["protocol"] == 1 and "semantic" in reply["result"]["algorithms"]
    assert reply["result"]["default"] in reply["result"]["algorithms"]
    assert reply["result"]["needs_source"]["semantic"] is False
    assert host.close() == 0
    assert "started" in (tmp_path / "host.log").read_text()


def test_extract_semantic(host: HostProcess) -> None:
    built = article_page()
    reply = host.ask({"v": 1, "id": 7, "type": "extract", "algorithm": "semantic", "debug": True,
                      "snapshot": built.raw})
    assert reply["status"] == "ok", reply
    result = reply["result"]
    assert result["algorithm"] == "semantic"
    assert result["nodes"] == [built.ids["article"]]
    assert result["debug"]["chosen"] == built.ids["article"]
    assert result["timing_ms"]["parse"] >= 0 and result["timing_ms"]["algorithm"] >= 0
    # Without debug the payload is omitted.
    reply = host.ask({"v": 1, "id": 8, "type": "extract", "algorithm": "semantic", "snapshot": built.raw})
    assert "debug" not in reply["result"]


def test_extract_all(host: HostProcess) -> None:
    built = article_page()
    reply = host.ask({"v": 1, "id": "a", "type": "extract", "algorithm": "all", "snapshot": built.raw})
    assert reply["status"] == "ok"
    assert reply["result"]["semantic"]["nodes"] == [built.ids["article"]]


def test_algorithms_listing(host: HostProcess) -> None:
    reply = host.ask({"v": 1, "id": "l", "type": "algorithms"})
    by_name = {a["name"]: a for a in reply["result"]}
    assert by_name["semantic"]["available"] and by_name["semantic"]["needs_source"] is False
    assert by_name["semantic"]["params"]["tags"] == ["main", "article"]


def test_malformed_snapshot_names_field_and_host_keeps_serving(host: HostProcess) -> None:
    raw = json.loads(json.dumps(article_page().raw))
    raw["elements"]["parent"][3] = 5  # a parent after its child: not pre-order
    reply = host.ask({"v": 1, "id": "bad", "type": "extract", "algorithm": "semantic", "snapshot": raw})
    assert reply["status"] == "error" and reply["id"] == "bad"
    assert reply["error"]["code"] == "E_SNAPSHOT"
    assert reply["error"]["field"] == "elements.parent[3]"
    assert "elements.parent[3]" in reply["error"]["message"]
    # The next request is still answered.
    assert host.ask({"v": 1, "id": "next", "type": "ping"})["status"] == "ok"


def test_garbage_json_and_bad_requests(host: HostProcess) -> None:
    host.send_raw(struct.pack("=I", 9) + b"{not json")
    reply = host.receive()
    assert reply["error"]["code"] == "E_JSON" and reply["id"] is None
    host.send_raw(struct.pack("=I", 2) + b"\xff\xfe")
    assert host.receive()["error"]["code"] == "E_JSON"
    assert host.ask([1, 2])["error"]["code"] == "E_REQUEST"
    reply = host.ask({"v": 1, "type": "ping"})
    assert reply["error"]["code"] == "E_REQUEST" and reply["error"]["field"] == "id" and reply["id"] is None
    assert host.ask({"v": 1, "id": "t"})["error"]["field"] == "type"
    assert host.ask({"v": 1, "id": "u", "type": "dance"})["error"]["code"] == "E_UNKNOWN_TYPE"
    reply = host.ask({"v": 1, "id": "s", "type": "extract", "snapshot": "nope"})
    assert reply["error"]["code"] == "E_REQUEST" and reply["error"]["field"] == "snapshot"
    assert host.ask({"v": 2, "id": "v", "type": "ping"})["error"]["field"] == "v"
    assert host.ask({"v": 1, "id": "ok", "type": "ping"})["status"] == "ok"


def test_unknown_algorithm_and_bad_params(host: HostProcess) -> None:
    raw = article_page().raw
    reply = host.ask({"v": 1, "id": 1, "type": "extract", "algorithm": "nosuch", "snapshot": raw})
    assert reply["error"]["code"] == "E_UNKNOWN_ALGORITHM" and "nosuch" in reply["error"]["message"]
    reply = host.ask({"v": 1, "id": 2, "type": "extract", "algorithm": "semantic", "params": {"rows": 3},
                      "snapshot": raw})
    assert reply["error"]["code"] == "E_PARAMS" and "rows" in reply["error"]["message"]
    reply = host.ask({"v": 1, "id": 3, "type": "extract", "algorithm": "semantic",
                      "params": {"visible_only": "maybe"}, "snapshot": raw})
    assert reply["error"]["code"] == "E_PARAMS"
    assert host.ask({"v": 1, "id": 4, "type": "ping"})["status"] == "ok"


def test_impossible_and_oversized_frames(host: HostProcess) -> None:
    host.send_raw(b"\xff\xff\xff\xff")  # 4 GiB: not a message, not skipped
    reply = host.receive()
    assert reply["error"]["code"] == "E_FRAME" and reply["id"] is None
    assert host.ask({"v": 1, "id": "after", "type": "ping"})["status"] == "ok"
    over = 64 * 1024 * 1024 + 1  # just over the limit: skipped, so the stream stays aligned
    host.send_raw(struct.pack("=I", over) + b" " * over)
    assert host.receive()["error"]["code"] == "E_TOO_LARGE"
    assert host.ask({"v": 1, "id": "after2", "type": "ping"})["status"] == "ok"


@pytest.mark.parametrize("cut", ["header", "body"])
def test_truncated_frame_answered_then_exit(host: HostProcess, cut: str) -> None:
    host.send_raw(b"\x10\x00" if cut == "header" else struct.pack("=I", 100) + b'{"v":1')
    assert host.proc.stdin
    host.proc.stdin.close()
    reply = host.receive()
    assert reply["error"]["code"] == "E_FRAME" and "truncated" in reply["error"]["message"]
    assert host.proc.wait(timeout=10) == 1


def big_page(paragraphs: int = 4000) -> Any:
    paras = [E("p", (100, 100 + 20 * i, 800, 20), [T(f"段落 {i} " + "日本語の文。" * 20)]) for i in range(paragraphs)]
    return build(E("html", (0, 0, 1200, 90000), [E("body", (0, 0, 1200, 90000), [
        E("article", (100, 100, 800, 85000), paras, name="article")])]))


def test_huge_response_is_chunked(host: HostProcess) -> None:
    # Zoning's debug trace on 4,000 paragraphs (every zone's box) is over 1 MB: it must arrive in several chunks.
    reply = host.ask({"v": 1, "id": "big", "type": "extract", "algorithm": "zoning", "debug": True,
                      "snapshot": big_page().raw})
    assert reply["status"] == "ok", reply
    assert len(host.sizes) >= 2 and all(size < MAX_MESSAGE_BYTES for size in host.sizes)
    assert host.ask({"v": 1, "id": "after", "type": "ping"})["status"] == "ok"


def test_big_page_all_algorithms(host: HostProcess) -> None:
    built = big_page()
    reply = host.ask({"v": 1, "id": "all", "type": "extract", "algorithm": "all", "debug": True,
                      "snapshot": built.raw})
    assert reply["status"] == "ok"
    assert reply["result"]["semantic"]["nodes"] == [built.ids["article"]]
    assert all(size < MAX_MESSAGE_BYTES for size in host.sizes)


def test_stray_print_cannot_corrupt_stdout(tmp_path: Path) -> None:
    # An algorithm that prints: run the host in-process with a handler that prints, over real pipes.
    code = (
        "import sys\n"
        "from centrum.native import nativehost\n"
        "def noisy(req):\n"
        "    print('stray output from an algorithm')\n"
        "    return {'ok': True}\n"
        "nativehost.HANDLERS['noisy'] = noisy\n"
        "sys.exit(nativehost.main([]))\n"
    )
    env = {**os.environ, "CENTRUM_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", code], input=encode_message({"v": 1, "id": 1, "type": "noisy"}),
                          capture_output=True, env=env, timeout=30)
    assert proc.returncode == 0
    assert b"stray output" in proc.stderr
    body = json.loads(json.loads(proc.stdout[4:])["data"])
    assert body["result"] == {"ok": True}


def test_cold_start_to_first_ping(tmp_path: Path) -> None:
    """Spawn -> first answered ping, as the browser pays it on connectNative (reported in the README)."""
    t0 = time.perf_counter()
    h = HostProcess(tmp_path)
    assert h.ask({"v": 1, "id": 1, "type": "ping"})["status"] == "ok"
    elapsed = time.perf_counter() - t0
    h.close()
    print(f"host cold start to first ping: {elapsed * 1000:.0f} ms")
    assert elapsed < 5.0  # generous on a loaded 2-core machine; typical is a few hundred ms


def test_centrum_host_command(tmp_path: Path) -> None:
    """`centrum host` is the same loop (what a hand-written launcher may call)."""
    env = {**os.environ, "CENTRUM_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "centrum.cli", "host", "chrome-extension://x/"],
                          input=encode_message({"v": 1, "id": "c", "type": "ping"}), capture_output=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(json.loads(proc.stdout[4:])["data"])["result"]["protocol"] == 1


def test_debug_dropped_over_the_response_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    from centrum.native import nativehost

    built = article_page()
    request = {"v": 1, "id": 1, "type": "extract", "algorithm": "semantic", "debug": True, "snapshot": built.raw}
    full = nativehost.handle_extract(request)
    assert "bfs_order" in full["debug"]
    # Half the debug payload below the full size: timings vary by a few digits between runs, the debug does not.
    cap = len(nativehost.dumps(full)) - len(nativehost.dumps(full["debug"])) // 2
    monkeypatch.setattr(nativehost, "RESPONSE_CAP_BYTES", cap)
    trimmed = nativehost.handle_extract(request)
    assert trimmed["debug"] == {"trimmed": True, "bytes": len(nativehost.dumps(full["debug"]))}
    assert trimmed["nodes"] == full["nodes"]


def test_non_finite_numbers_become_null() -> None:
    import numpy as np

    from centrum.native.nativehost import dumps

    text = dumps({"a": float("nan"), "b": [np.float64("inf"), np.int64(3)], "c": np.array([1.5, np.nan])})
    assert json.loads(text) == {"a": None, "b": [None, 3], "c": [1.5, None]}


def test_unencodable_answer_is_an_internal_error_and_the_host_goes_on() -> None:
    import io

    from centrum.native.framing import read_message
    from centrum.native.nativehost import Host

    cyclic: dict[str, object] = {}
    cyclic["self"] = cyclic
    stdin = io.BytesIO(encode_message({"v": 1, "id": 1, "type": "cycle"}) + encode_message({"v": 1, "id": 2,
                                                                                            "type": "ok"}))
    stdout = io.BytesIO()
    host = Host(stdin, stdout, {"cycle": lambda r: cyclic, "ok": lambda r: "fine"})
    assert host.serve() == 0
    stdout.seek(0)
    first = json.loads(read_message(stdout)["data"])
    second = json.loads(read_message(stdout)["data"])
    assert first["error"]["code"] == "E_INTERNAL" and "encodable" in first["error"]["message"]
    assert second["result"] == "fine"


# ---- issue #20: a host no request can kill; parameters are data ------------------------------------------------


def ping_ok(host: HostProcess) -> None:
    reply = host.ask({"v": 1, "id": "ping-after", "type": "ping"})
    assert reply["status"] == "ok" and reply["id"] == "ping-after", reply


def send_body(host: HostProcess, body: bytes) -> dict[str, Any]:
    host.send_raw(struct.pack("=I", len(body)) + body)
    return host.receive()


def test_deep_json_is_refused_before_decoding(host: HostProcess) -> None:
    from centrum.core.limits import JSON_DEPTH

    deep = 100_000
    for body in (b"[" * deep + b"]" * deep, b'{"a":' * deep + b"1" + b"}" * deep, b"[" * deep,
                 b'{"v":1,"id":"d","type":"extract","params":' + b"[" * deep + b"]" * deep + b"}"):
        reply = send_body(host, body)
        assert reply["status"] == "error" and reply["error"]["code"] == "E_JSON", reply
        assert f"json_depth = {JSON_DEPTH}" in reply["error"]["message"]
        ping_ok(host)
    # Exactly json_depth levels (the request object is one) are decoded and reach the handler; one more is refused.
    inner = JSON_DEPTH - 1
    ok_body = b'{"v":1,"id":"d","type":"ping","x":' + b"[" * inner + b"]" * inner + b"}"
    assert send_body(host, ok_body)["status"] == "ok"
    too_deep = b'{"v":1,"id":"d","type":"ping","x":' + b"[" * (inner + 1) + b"]" * (inner + 1) + b"}"
    assert send_body(host, too_deep)["error"]["code"] == "E_JSON"
    # Brackets inside strings (escaped quotes and backslashes included) are text, not nesting.
    text = json.dumps({"v": 1, "id": "s", "type": "ping", "x": '\\"' + "[" * 1000 + '"\\\\'}).encode()
    assert send_body(host, text)["status"] == "ok"


def test_lone_surrogates_get_answers(host: HostProcess) -> None:
    reply = host.ask({"v": 1, "id": "\ud800", "type": "dance"})
    assert reply["error"]["code"] == "E_UNKNOWN_TYPE" and reply["id"] == "\ud800"
    ping_ok(host)
    reply = host.ask({"v": 1, "id": "t", "type": "\ud800"})
    assert reply["error"]["code"] == "E_UNKNOWN_TYPE" and reply["type"] == "\ud800"
    ping_ok(host)
    assert host.ask({"v": 1, "id": "\udfff", "type": "ping"})["id"] == "\udfff"
    reply = host.ask({"v": 1, "id": "l", "type": "label.save", "label": {"\ud800": 1}})
    assert reply["status"] == "error" and reply["error"]["code"] == "E_REQUEST", reply
    ping_ok(host)
    reply = host.ask({"v": 1, "id": "p", "type": "extract", "algorithm": "r4", "params": {"\ud800x": 1},
                      "snapshot": article_page().raw})
    assert reply["error"]["code"] == "E_PARAMS" and "unknown parameter '\\ud800x'" in reply["error"]["message"]
    ping_ok(host)


def test_v_must_be_the_integer_1(host: HostProcess) -> None:
    for v in ("absent", None, True, 1.0, "1", 2, [1]):
        request = {"id": "v", "type": "ping"} | ({} if v == "absent" else {"v": v})
        reply = host.ask(request)
        assert reply["status"] == "error" and reply["error"]["code"] == "E_REQUEST", (v, reply)
        assert reply["error"]["field"] == "v"
    ping_ok(host)


def test_nan_infinity_and_huge_numbers(host: HostProcess) -> None:
    raw = json.dumps(article_page().raw)
    for literal in ("NaN", "Infinity", "-Infinity"):
        body = ('{"v":1,"id":"n","type":"extract","snapshot":' + raw.replace('"dpr": 1', f'"dpr": {literal}')
                + "}").encode()
        assert send_body(host, body)["error"]["code"] == "E_JSON"
    # 1e400 is JSON (it decodes to inf): the snapshot validator names the field.
    for where, field in (('"stylesheets": {"loaded": 1e400}', "page.stylesheets.loaded"),
                         ('"timing": {"collect_ms": -1e400}', "page.timing.collect_ms")):
        snap = json.loads(raw)
        key, value = where.split(": ", 1)
        snap["page"][key.strip('"')] = "PLACEHOLDER"
        body = ('{"v":1,"id":"n","type":"extract","snapshot":' + json.dumps(snap).replace('"PLACEHOLDER"', value)
                + "}").encode()
        reply = send_body(host, body)
        assert reply["error"]["code"] == "E_SNAPSHOT" and reply["error"]["field"] == field, reply
    body = b'{"v":1,"id":"n","type":"extract","algorithm":"r4","params":{"c":' + b"9" * 5000 + b"}}"
    assert send_body(host, body)["error"]["code"] == "E_JSON"  # beyond Python's int-string limit
    ping_ok(host)


def test_gce_cols_out_of_range(host: HostProcess) -> None:
    raw = article_page().raw
    for params in ({"cols": 40000000}, {"cols": 4e7}, {"cols": "40000000"}, {"alpha": 1e308}, {"alpha": "nan"},
                   {"rows": 0}):
        reply = host.ask({"v": 1, "id": "g", "type": "extract", "algorithm": "gce", "params": params,
                          "snapshot": raw})
        assert reply["error"]["code"] == "E_PARAMS", (params, reply)
        assert next(iter(params)) in reply["error"]["message"]
    reply = host.ask({"v": 1, "id": "g", "type": "extract", "algorithm": "gce", "params": {"cols": 40000000},
                      "snapshot": raw})
    assert reply["error"]["message"] == "cols: 40000000 is outside its range [1, 32]"
    # "all" reports the refused parameters in gce's slot and runs the others.
    reply = host.ask({"v": 1, "id": "g", "type": "extract", "algorithm": "all",
                      "params": {"gce": {"cols": 40000000}}, "snapshot": raw})
    assert reply["result"]["gce"]["error"]["code"] == "E_PARAMS"
    assert reply["result"]["semantic"]["nodes"] == [article_page().ids["article"]]
    ping_ok(host)


def test_weights_are_model_names_never_paths(host: HostProcess, tmp_path: Path) -> None:
    """A path-like weights value gets the same E_PARAMS answer whether the file exists or not."""
    shipped = (REPO / "models" / "ensemble-v4.json").read_text(encoding="utf-8")
    raw = article_page().raw
    target = tmp_path / "probe" / "weights.json"
    for key in ("weights", "block_weights"):
        for value in (str(target), "../probe/weights.json", "probe/weights", "/dev/zero", "/proc/self/fd/0", ".hidden",
                      "weights.json/.."):
            answers = []
            for exists in (True, False):
                if exists:
                    target.parent.mkdir(exist_ok=True)
                    target.write_text(shipped, encoding="utf-8")
                else:
                    target.unlink(missing_ok=True)
                reply = host.ask({"v": 1, "id": "w", "type": "extract", "algorithm": "ensemble",
                                  "params": {key: value}, "snapshot": raw})
                assert reply["error"]["code"] == "E_PARAMS" and reply["error"]["message"].startswith(key), reply
                answers.append(reply)
            assert answers[0] == answers[1]
    ping_ok(host)


def test_snapshot_element_limit_before_work(host: HostProcess) -> None:
    from centrum.core.limits import ELEMENTS

    snap = json.loads(json.dumps(article_page().raw))
    snap["elements"]["parent"] = [0] * (ELEMENTS + 1)
    reply = host.ask({"v": 1, "id": "big", "type": "extract", "algorithm": "semantic", "snapshot": snap})
    assert reply["error"]["code"] == "E_SNAPSHOT" and reply["error"]["field"] == "elements.parent"
    assert f"limit of {ELEMENTS}" in reply["error"]["message"]
    ping_ok(host)


def test_installed_model_by_name(tmp_path: Path) -> None:
    """`centrum models install` is the only way a file becomes usable; a request then names it."""
    home = tmp_path / "home"
    trained = tmp_path / "trained.json"
    trained.write_text((REPO / "models" / "ensemble-v4.json").read_text(encoding="utf-8"), encoding="utf-8")
    env = {**os.environ, "CENTRUM_HOME": str(home)}

    def models(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "centrum.cli", "models", *args], capture_output=True, text=True,
                              env=env, timeout=60)

    done = models("install", str(trained), "--name", "mine")
    assert done.returncode == 0 and "weights=mine" in done.stdout, done.stderr
    assert (home / "models" / "mine.json").read_text(encoding="utf-8") == trained.read_text(encoding="utf-8")
    assert models("install", str(trained), "--name", "mine").returncode == 2  # no silent replacement
    assert models("install", str(trained), "--name", "../evil").returncode == 2
    assert models("install", "/etc/hostname", "--name", "junk").returncode == 2
    assert not (home / "models" / "junk.json").exists()
    assert "mine\tinstalled" in models("list").stdout
    env_host = HostProcess(home)  # CENTRUM_HOME = home
    try:
        built = article_page()
        by_name = env_host.ask({"v": 1, "id": 1, "type": "extract", "algorithm": "ensemble",
                                "params": {"weights": "mine"}, "snapshot": built.raw})
        shipped = env_host.ask({"v": 1, "id": 2, "type": "extract", "algorithm": "ensemble", "snapshot": built.raw})
        assert by_name["status"] == "ok" and by_name["result"]["nodes"] == shipped["result"]["nodes"]
        wrong_kind = env_host.ask({"v": 1, "id": 3, "type": "extract", "algorithm": "ensemble",
                                   "params": {"block_weights": "mine"}, "snapshot": built.raw})
        assert wrong_kind["error"]["code"] == "E_PARAMS" and "block filter" in wrong_kind["error"]["message"]
    finally:
        env_host.close()
    assert models("remove", "mine").returncode == 0 and not (home / "models" / "mine.json").exists()


def test_id_and_type_are_bounded(host: HostProcess) -> None:
    from centrum.core.limits import ID_CHARS

    assert host.ask({"v": 1, "id": "i" * ID_CHARS, "type": "ping"})["status"] == "ok"
    reply = host.ask({"v": 1, "id": "i" * (ID_CHARS + 1), "type": "ping"})
    assert reply["error"]["field"] == "id" and reply["id"] is None and reply["type"] == "ping"
    assert host.ask({"v": 1, "id": 2**53, "type": "ping"})["error"]["field"] == "id"
    assert host.ask({"v": 1, "id": -(2**53) + 1, "type": "ping"})["id"] == -(2**53) + 1
    frames = len(host.sizes)
    reply = host.ask({"v": 1, "id": "t", "type": "x" * 2_000_000})
    assert reply["error"]["code"] == "E_REQUEST" and reply["error"]["field"] == "type" and reply["type"] is None
    assert host.sizes[frames:] and max(host.sizes[frames:]) < 1000  # the 2 MB type is not echoed
    ping_ok(host)


def _depth(obj: Any) -> int:
    if isinstance(obj, dict):
        return 1 + max((_depth(v) for v in obj.values()), default=0)
    if isinstance(obj, list):
        return 1 + max((_depth(v) for v in obj), default=0)
    return 0


_BRACKETY = st.text(alphabet='[]{}"\\ a', max_size=8)
_NESTED = st.recursive(
    st.one_of(st.none(), st.integers(), _BRACKETY),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_BRACKETY, inner, max_size=3)),
    max_leaves=30)


@settings(derandomize=True, max_examples=400, deadline=None, database=None)
@given(obj=_NESTED, limit=st.integers(1, 6))
def test_depth_scan_agrees_with_the_real_nesting(obj: Any, limit: int) -> None:
    """Brackets, quotes and backslashes inside strings never count; nesting outside them always does."""
    from centrum.native.nativehost import json_depth_over

    for text in (json.dumps(obj), json.dumps(obj, ensure_ascii=False, indent=1)):
        assert json_depth_over(text.encode(), limit) == (_depth(obj) > limit), text
        # The scan goes slice by slice: a backslash run, a string or a nesting cut by a slice boundary counts alike.
        for slice_bytes in (1, 2, 3, 7):
            assert json_depth_over(text.encode(), limit, slice_bytes) == (_depth(obj) > limit), (text, slice_bytes)


# ---- compressed snapshots (PROTOCOL.md "Compressed snapshot") --------------------------------------------------------

PAGES = Path(__file__).resolve().parents[1] / "pages"


def gzip_b64(data: bytes) -> str:
    import base64
    import gzip

    return base64.b64encode(gzip.compress(data)).decode()


def without_timing(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("timing_ms", "page")}


@pytest.mark.parametrize("name", ["article-comments", "cjk-news", "rtl-article"])
def test_compressed_snapshot_gives_the_same_answer(host: HostProcess, name: str) -> None:
    """Golden pages (real Chromium snapshots with their source), default algorithm: the same answer either way."""
    import gzip

    text = gzip.decompress((PAGES / name / "snapshot.json.gz").read_bytes())
    plain = host.ask({"v": 1, "id": "p", "type": "extract", "snapshot": json.loads(text)})
    packed = host.ask({"v": 1, "id": "z", "type": "extract", "snapshot": {"gzip": gzip_b64(text)}})
    as_text = host.ask({"v": 1, "id": "j", "type": "extract", "snapshot": {"json": text.decode("utf-8")}})
    assert plain["status"] == "ok" and packed["status"] == "ok" and as_text["status"] == "ok", (packed, as_text)
    assert plain["result"]["nodes"] and without_timing(packed["result"]) == without_timing(plain["result"])
    assert without_timing(as_text["result"]) == without_timing(plain["result"])


def test_bad_compressed_snapshots_are_refused_and_the_host_goes_on(host: HostProcess) -> None:
    import base64
    import gzip

    from centrum.core.limits import JSON_DEPTH, REQUEST_BYTES

    snapshot = json.dumps(article_page().raw).encode()
    whole = gzip.compress(snapshot)
    cases = {
        "not base64": ({"gzip": "@@@ not base64 @@@"}, "E_REQUEST"),
        "not gzip": ({"gzip": base64.b64encode(snapshot).decode()}, "E_REQUEST"),
        "zlib, not gzip": ({"gzip": base64.b64encode(__import__("zlib").compress(snapshot)).decode()}, "E_REQUEST"),
        "truncated": ({"gzip": base64.b64encode(whole[: len(whole) // 2]).decode()}, "E_REQUEST"),
        "trailing data": ({"gzip": base64.b64encode(whole + b"more").decode()}, "E_REQUEST"),
        "a field more": ({"gzip": gzip_b64(snapshot), "protocol": 1}, "E_REQUEST"),
        "not a string": ({"gzip": 5}, "E_REQUEST"),
        "not JSON": ({"gzip": gzip_b64(b"<html>")}, "E_JSON"),
        "not UTF-8": ({"gzip": gzip_b64(b'{"a": "\xff"}')}, "E_JSON"),
        "NaN": ({"gzip": gzip_b64(b'{"a": NaN}')}, "E_JSON"),
        "a list": ({"gzip": gzip_b64(b"[1, 2]")}, "E_REQUEST"),
        "too deep": ({"gzip": gzip_b64(b"[" * JSON_DEPTH + b"]" * JSON_DEPTH)}, "E_JSON"),
        # A bomb: 100 kB that inflate past request_bytes; the host inflates one byte beyond the limit, no more.
        "bomb": ({"gzip": gzip_b64(b" " * (REQUEST_BYTES + 1024))}, "E_TOO_LARGE"),
    }
    for what, (packed, code) in cases.items():
        reply = host.ask({"v": 1, "id": what, "type": "extract", "algorithm": "semantic", "snapshot": packed})
        assert reply["status"] == "error" and reply["error"]["code"] == code, (what, reply)
        assert reply["error"]["field"] == "snapshot.gzip" and len(reply["error"]["message"]) < 300, (what, reply)
    # A valid one right after: the host kept serving, and a bad snapshot inside the packing is E_SNAPSHOT as ever.
    reply = host.ask({"v": 1, "id": "ok", "type": "extract", "algorithm": "semantic", "snapshot": {"gzip": gzip_b64(
        snapshot)}})
    assert reply["status"] == "ok" and reply["result"]["nodes"]
    raw = json.loads(snapshot)
    raw["elements"]["parent"][3] = 5
    reply = host.ask({"v": 1, "id": "bad", "type": "extract", "algorithm": "semantic", "snapshot": {
        "gzip": gzip_b64(json.dumps(raw).encode())}})
    assert reply["error"]["code"] == "E_SNAPSHOT" and reply["error"]["field"] == "elements.parent[3]"


def test_bad_snapshot_texts_are_refused_and_the_host_goes_on(host: HostProcess) -> None:
    from centrum.core.limits import JSON_DEPTH

    snapshot = json.dumps(article_page().raw)
    cases = {
        "a field more": ({"json": snapshot, "protocol": 1}, "E_REQUEST"),
        "not a string": ({"json": 5}, "E_REQUEST"),
        "not JSON": ({"json": "<html>"}, "E_JSON"),
        "NaN": ({"json": '{"a": NaN}'}, "E_JSON"),
        "a list": ({"json": "[1, 2]"}, "E_REQUEST"),
        "too deep": ({"json": "[" * JSON_DEPTH + "]" * JSON_DEPTH}, "E_JSON"),
    }
    for what, (packed, code) in cases.items():
        reply = host.ask({"v": 1, "id": what, "type": "extract", "algorithm": "semantic", "snapshot": packed})
        assert reply["status"] == "error" and reply["error"]["code"] == code, (what, reply)
        assert reply["error"]["field"] == "snapshot.json" and len(reply["error"]["message"]) < 300, (what, reply)
    reply = host.ask({"v": 1, "id": "ok", "type": "extract", "algorithm": "semantic", "snapshot": {"json": snapshot}})
    assert reply["status"] == "ok" and reply["result"]["nodes"]


def test_text_on_demand(host: HostProcess) -> None:
    """``"text": false``: the answer leaves the Result's text out and says how long it is; ``outputs: ["text"]``
    gives exactly that text (PROTOCOL.md "Text on demand")."""
    import gzip

    raw = json.loads(gzip.decompress((PAGES / "article-comments" / "snapshot.json.gz").read_bytes()))
    full = host.ask({"v": 1, "id": "f", "type": "extract", "algorithm": "zoning", "snapshot": raw})
    lean = host.ask({"v": 1, "id": "l", "type": "extract", "algorithm": "zoning", "snapshot": raw, "text": False})
    text = full["result"]["text"]
    assert isinstance(text, str) and len(text) > 100
    assert lean["result"]["text"] is None and lean["result"]["text_chars"] == len(text)
    assert lean["result"]["nodes"] == full["result"]["nodes"]
    got = host.ask({"v": 1, "id": "t", "type": "outputs", "page": lean["result"]["page"], "outputs": ["text"]})
    assert got["status"] == "ok" and got["result"]["text"] == text
    semantic = host.ask({"v": 1, "id": "s", "type": "extract", "algorithm": "semantic", "snapshot": raw, "text": False})
    assert semantic["result"]["text"] is None and semantic["result"]["text_chars"] == 0  # it states no text
    for bad in ("no", 0, None):
        reply = host.ask({"v": 1, "id": "b", "type": "extract", "algorithm": "semantic", "snapshot": raw, "text": bad})
        assert reply["error"]["code"] == "E_REQUEST" and reply["error"]["field"] == "text", reply
