"""What a large request brings is freed once it is used, before the algorithm runs: the host never holds the decoded
snapshot (on a large page more memory than the parsed arrays) beside the algorithm's own arrays.

Structural, not measured: a probe object put into the decoded snapshot right after the parse must be gone when the
algorithm starts, by reference counting alone (no garbage-collector pass). Memory figures live in ``centrum bench``.
"""

from __future__ import annotations

import io
import json
import weakref
from typing import Any

import pytest

from centrum.core import snapshot as snapshot_module
from centrum.core.builders import E, T, build
from centrum.native import nativehost
from centrum.native.framing import encode_message, read_frame


class Probe:
    """A weak-referenceable object (a dict is not)."""


def page() -> dict[str, Any]:
    words = "The harbour opened again on Saturday after two years of works. "
    built = build(E("html", (0, 0, 1000, 1200), [E("body", (0, 0, 1000, 1200), [
        E("nav", (0, 0, 1000, 40), [E("a", (0, 0, 80, 20), [T("Home")])]),
        E("article", (100, 100, 800, 900), [E("p", (100, 100 + 100 * k, 800, 90), [T(words * 3)]) for k in range(5)]),
    ])]))
    raw: dict[str, Any] = built.raw
    return raw


@pytest.mark.parametrize("entry", ["serve", "handle_frame"])
def test_the_decoded_snapshot_is_freed_before_the_algorithm_runs(entry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    probes: list[weakref.ref[Probe]] = []
    alive_when_run: list[bool] = []
    parse, run = snapshot_module.parse_snapshot, nativehost._run

    def probed_parse(raw: dict[str, Any]) -> Any:
        snap = parse(raw)
        probe = Probe()
        raw["probe"] = probe  # lives exactly as long as the decoded snapshot object
        probes.append(weakref.ref(probe))
        return snap

    def probed_run(*args: Any, **kwargs: Any) -> Any:
        alive_when_run.append(probes[-1]() is not None)
        return run(*args, **kwargs)

    monkeypatch.setattr(snapshot_module, "parse_snapshot", probed_parse)
    monkeypatch.setattr(nativehost, "_run", probed_run)
    frame = encode_message({"v": 1, "id": 1, "type": "extract", "algorithm": "semantic", "snapshot": page()})
    out = io.BytesIO()
    host = nativehost.Host(io.BytesIO(frame), out)
    if entry == "serve":
        assert host.serve() == 0
    else:
        host.handle_frame(frame[4:])
    out.seek(0)
    body = read_frame(out)
    assert body is not None
    answer = json.loads(json.loads(body)["data"])
    assert answer["status"] == "ok" and answer["result"]["nodes"], answer
    assert alive_when_run == [False]


def test_an_extract_handler_called_directly_leaves_the_callers_request_whole() -> None:
    # The host frees the request by handing it over; a caller that keeps its dict keeps all of it.
    request = {"v": 1, "id": 1, "type": "extract", "algorithm": "semantic", "snapshot": page()}
    first = nativehost.handle_extract(request)
    assert isinstance(request["snapshot"], dict)
    assert nativehost.handle_extract(request)["nodes"] == first["nodes"]


def test_a_request_large_enough_to_carry_a_snapshot_drops_the_kept_page_before_it_is_decoded() -> None:
    # The reader's outputs come from the kept page; a small request keeps it, a large one that names a snapshot (an
    # extract, a label.save) drops it before decoding, so that two pages are never held at once.
    host = nativehost.Host(io.BytesIO(), io.BytesIO())
    extract = {"v": 1, "id": 1, "type": "extract", "algorithm": "semantic", "snapshot": page()}
    host.handle_frame(encode_message(extract)[4:])
    kept = nativehost._LastPage.handle
    assert kept is not None
    host.handle_frame(encode_message({"v": 1, "id": 2, "type": "ping"})[4:])
    assert nativehost._LastPage.handle == kept
    padding = "x" * nativehost.DROP_PAGE_ABOVE_BYTES
    # The reader's outputs with the page's HTML (a press-profile page): large, no snapshot, about the kept page. A
    # string that spells the key does not count: its quotes are escaped in the request's JSON.
    source = '<p data-cx="0">"snapshot": ' + padding + "</p>"
    host.handle_frame(encode_message({"v": 1, "id": 3, "type": "outputs", "page": kept, "outputs": ["metadata"],
                                      "source": source})[4:])
    assert nativehost._LastPage.handle == kept
    host.handle_frame(encode_message({"v": 1, "id": 4, "type": "no.such.type", "snapshot": padding})[4:])
    assert nativehost._LastPage.handle is None
