"""centrum.batch without Ray: record discovery in WARCs, folders and URL lists, the archived charset rule, whole
shards, the command's input errors (all raised before a cluster would start), the input limits (a gzip bomb, an
overlong record, an oversized file, subresources past a page's budget) and the reaper of a run's processes."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
import tomllib
import zlib
from pathlib import Path

import pytest

from centrum.batch.crawl import (
    HOST,
    bomb_record,
    gzip_zeros,
    long_record,
    page_html,
    page_url,
    response_record,
    write_crawl,
)
from centrum.batch.inputs import InputError, TooLarge, archived, follow, index_warc, iter_inputs, read_response
from centrum.batch.shards import ShardWriter, done_ids, read_rows, shard_files
from centrum.cli import main
from centrum.core.limits import (
    BODY_BYTES,
    INPUT_LIMITS,
    LIMITS,
    MIB,
    PAGE_ARCHIVE_BYTES,
    PAGE_FILE_BYTES,
    WARC_RECORD_BYTES,
)


def test_warc_index_has_every_response_and_a_task_per_response_only_html_ones_to_extract(tmp_path: Path) -> None:
    warc = tmp_path / "c.warc.gz"
    write_crawl(warc, 12)
    index, tasks = index_warc(warc)
    statics = [f"{HOST}/p/static/site.css", *(f"{HOST}/p/static/img{k}.png" for k in range(3))]
    assert [t.url for t in tasks] == statics + [page_url(i) for i in range(12)]
    assert [t.status for t in tasks] == ["skipped: not HTML"] * 4 + [""] * 12  # "": sent to a worker
    assert len({t.record_id for t in tasks}) == 16 and all(t.record_id.startswith("<urn:uuid:") for t in tasks)
    assert f"{HOST}/p/static/site.css" in index and f"{HOST}/p/static/img2.png" in index
    css = archived(str(warc), index[f"{HOST}/p/static/site.css"])
    assert css.status == 200 and css.headers["content-type"] == "text/css" and b"font-family" in css.body
    # Page 9 is windows-1252 declared only by HTTP: served with that charset spelled out.
    page = archived(str(warc), index[page_url(9)], page=True)
    assert page.headers["content-type"] == "text/html; charset=windows-1252"
    assert "café" in page.body.decode("cp1252")


def test_folders_url_lists_and_bad_inputs(tmp_path: Path) -> None:
    (tmp_path / "pages" / "sub").mkdir(parents=True)
    (tmp_path / "pages" / "a.html").write_text("<p>a</p>")
    (tmp_path / "pages" / "sub" / "b.htm").write_text("<p>b</p>")
    (tmp_path / "pages" / "c.css").write_text("p{}")
    urls = tmp_path / "urls.txt"
    urls.write_text("# comment\nhttps://example.org/a\n\nhttps://example.org/a\nhttp://example.org/b\n")
    got = {str(p): [t.kind for t in ts] for p, _, ts in iter_inputs([tmp_path / "pages", urls])}
    assert got == {str(tmp_path / "pages"): ["file", "file"], str(urls): ["url", "url"]}
    bad = tmp_path / "bad.txt"
    bad.write_text("https://ok.example/\nftp://nope/\n")
    with pytest.raises(InputError, match=r"bad.txt:2: not an http\(s\) URL"):
        list(iter_inputs([bad]))
    broken = tmp_path / "broken.warc.gz"
    broken.write_bytes(response_record(page_url(0), "text/html", b"<p>x</p>")[:40])
    with pytest.raises(InputError, match="not a readable WARC"):
        index_warc(broken)


def test_shards_are_whole_and_numbered_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    w = ShardWriter(out, "parquet", rows_per_shard=2)
    for i in range(5):
        w.add({"record_id": f"r{i}", "url": f"u{i}", "status": "ok", "node_paths": ["html:1"], "attempts": 1})
    w.flush()
    assert [p.name for p in shard_files(out)] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    (out / ".part-00003.parquet.tmp").write_bytes(b"torn")  # an interrupted write
    w2 = ShardWriter(out, "jsonl", rows_per_shard=10)
    assert not list(out.glob(".*.tmp")) and w2.next_index == 3
    w2.add({"record_id": "r5", "url": "u5", "status": "failed", "error_code": "E_EMPTY"})
    w2.flush()
    assert done_ids(out) == {f"r{i}" for i in range(6)}
    assert [r["record_id"] for r in read_rows(out)] == [f"r{i}" for i in range(6)]


def test_command_refuses_bad_usage_before_any_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warc = tmp_path / "c.warc.gz"
    write_crawl(warc, 1)
    assert main(["batch", str(warc), "--out", str(tmp_path / "o"), "-a", "nope"]) == 2
    assert "unknown algorithm 'nope'" in capsys.readouterr().err
    assert main(["batch", str(warc), "--out", str(tmp_path / "o"), "--no-render", "-a", "ensemble"]) == 2
    assert "--no-render works only with source, dana, danag, addanag" in capsys.readouterr().err
    assert main(["batch", str(warc), "--out", str(tmp_path / "o"), "--no-render", "-p", "block_threshold=7"]) == 2
    assert "block_threshold" in capsys.readouterr().err
    assert main(["batch", str(tmp_path / "missing.warc"), "--out", str(tmp_path / "o")]) == 2
    assert "no such input" in capsys.readouterr().err
    w = ShardWriter(tmp_path / "used", "jsonl")
    w.add({"record_id": "x"})
    w.flush()
    assert main(["batch", str(warc), "--out", str(tmp_path / "used")]) == 2
    assert "pass --resume" in capsys.readouterr().err


def test_archived_redirects_are_followed_inside_the_archive_only(tmp_path: Path) -> None:
    warc = tmp_path / "r.warc.gz"
    warc.write_bytes(response_record(f"{HOST}/old", "text/html", b"", 301, location="/new.html")
                     + response_record(f"{HOST}/gone", "text/html", b"", 302, location="http://elsewhere.test/")
                     + response_record(f"{HOST}/loop", "text/html", b"", 302, location="/loop")
                     + response_record(f"{HOST}/new.html", "text/html", b"<p>new</p>"))
    index, _ = index_warc(warc)
    new = follow(str(warc), index, f"{HOST}/old")
    assert new is not None and archived(str(warc), new).body == b"<p>new</p>"
    assert follow(str(warc), index, f"{HOST}/gone") is None  # the target is not archived: refused
    assert follow(str(warc), index, f"{HOST}/loop") is None
    assert follow(str(warc), index, f"{HOST}/missing") is None


# ---- bounded inputs (centrum.core.limits.INPUT_LIMITS)
# -------------------------------------------------------------------
# The reader's peak is VmHWM, this process's own: getrusage's ru_maxrss would include its parent's RSS at the fork
# (Linux carries it over the exec).
BOMB_READER = """
import sys, time
from centrum.batch.inputs import TooLarge, read_response
t0 = time.monotonic()
try:
    read_response(sys.argv[1], int(sys.argv[2]))
    print("read whole")
except TooLarge as e:
    print(e)
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(hwm.split()[1]) * 1024, time.monotonic() - t0)
"""


def test_a_gzip_bomb_body_is_refused_at_body_bytes_in_bounded_memory(tmp_path: Path) -> None:
    warc = tmp_path / "bomb.warc.gz"
    warc.write_bytes(bomb_record(f"{HOST}/bomb.html", 1 << 30)
                     + response_record(page_url(1), "text/html", b"<p>ok</p>"))
    _index, tasks = index_warc(warc)
    bomb, page = tasks
    assert read_response(str(warc), page.offset)[2] == b"<p>ok</p>"  # the record after the bomb reads as before
    # In a fresh process, so that its peak memory is the read's: 1 GiB inflated whole would show.
    p = subprocess.run([sys.executable, "-c", BOMB_READER, str(warc), str(bomb.offset)], capture_output=True,
                       text=True, timeout=120, check=True)
    message, usage = p.stdout.strip().splitlines()
    assert message == (f"record {bomb.record_id}: its decoded body is over the body_bytes limit ({BODY_BYTES} bytes, "
                       "16 MiB); refused without reading further")
    peak, seconds = usage.split()
    assert int(peak) < 128 * MIB, f"peak RSS {int(peak) / MIB:.0f} MiB"
    assert float(seconds) < 30


def test_the_bomb_fixture_really_inflates_to_a_gibibyte() -> None:
    """The fixture above is a real 1 GiB bomb (checked by streaming it through zlib, never whole)."""
    body = gzip_zeros(1 << 30)
    assert len(body) < 2 * MIB
    inflater, size, rest = zlib.decompressobj(31), 0, body
    while rest:
        size += len(inflater.decompress(rest, MIB))
        rest = inflater.unconsumed_tail
    assert inflater.eof and size == 1 << 30


def test_a_record_over_warc_record_bytes_is_refused_before_its_body(tmp_path: Path) -> None:
    warc = tmp_path / "long.warc.gz"
    warc.write_bytes(long_record(f"{HOST}/long.html", WARC_RECORD_BYTES + 1)
                     + response_record(page_url(1), "text/html", b"<p>ok</p>"))
    _index, tasks = index_warc(warc)
    assert [t.url for t in tasks] == [f"{HOST}/long.html", page_url(1)]  # a row for each
    with pytest.raises(TooLarge, match=rf"record {re.escape(tasks[0].record_id)}: its stored length of \d+ bytes is "
                                       rf"over the warc_record_bytes limit \({WARC_RECORD_BYTES} bytes, 64 MiB\)"):
        read_response(str(warc), tasks[0].offset)
    assert read_response(str(warc), tasks[1].offset)[2] == b"<p>ok</p>"


def test_pages_over_a_limit_are_too_large_rows_and_the_rest_go_on(tmp_path: Path) -> None:
    """--no-render's worker (no Ray, no browser): a folder's oversized file and a WARC's bomb page each become an
    E_TOO_LARGE row naming the limit, its value and the record; the pages beside them are extracted."""
    from centrum.batch.worker import E_TOO_LARGE, BatchWorker, WorkerOptions

    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "big.html").write_bytes(b"<p>" + b"a" * PAGE_FILE_BYTES + b"</p>")
    (pages / "ok.html").write_text(page_html(3), encoding="utf-8")
    warc = tmp_path / "bomb.warc.gz"
    warc.write_bytes(bomb_record(f"{HOST}/bomb.html", 1 << 30)
                     + response_record(page_url(0), "text/html", page_html(0).encode()))
    tasks = [t for _path, _index, ts in iter_inputs([pages, warc]) for t in ts]
    worker = BatchWorker(WorkerOptions(algorithm="source", render=False, markdown=False))
    rows = {Path(r["url"]).name: r for r in (worker.process(t) for t in tasks)}
    big, bomb = rows["big.html"], rows["bomb.html"]
    assert (big["status"], big["error_code"]) == ("failed", E_TOO_LARGE)
    assert big["error_message"] == (f"file {pages / 'big.html'}: the file is over the page_file_bytes limit "
                                    f"({PAGE_FILE_BYTES} bytes, 16 MiB); refused without reading further")
    assert (bomb["status"], bomb["error_code"]) == ("failed", E_TOO_LARGE)
    assert bomb["record_id"] in bomb["error_message"] and f"body_bytes limit ({BODY_BYTES} bytes" in bomb[
        "error_message"]
    assert rows["ok.html"]["status"] == "ok" and rows["0.html"]["status"] == "ok"
    assert "Story number 0" in rows["0.html"]["text"]


def test_archived_subresources_are_refused_past_a_limit_with_a_note(tmp_path: Path) -> None:
    """What the renderer is served for an archived page: a bomb stylesheet is refused (body_bytes), and so is
    whatever would take the page's archived bodies past page_archive_bytes; each refusal is noted for the row."""
    from centrum.batch.worker import BatchWorker, WorkerOptions

    image = 15 * MIB  # under body_bytes; five of them pass page_archive_bytes
    assert image < BODY_BYTES and 5 * image > PAGE_ARCHIVE_BYTES >= 4 * image
    warc = tmp_path / "sub.warc.gz"
    with warc.open("wb") as f:
        f.write(response_record(page_url(0), "text/html", page_html(0).encode()))
        f.write(bomb_record(f"{HOST}/static/site.css", 1 << 30, "text/css"))
        for k in range(5):
            f.write(long_record(f"{HOST}/img{k}.png", image, "image/png"))
    index, tasks = index_warc(warc)
    worker = BatchWorker(WorkerOptions(algorithm="source", render=False))
    worker.set_index(str(warc), index)
    notes: list[str] = []
    lookup = worker._lookup(tasks[0], notes)
    page = lookup(page_url(0))
    assert page is not None and b"Story number 0" in page.body
    assert lookup(f"{HOST}/static/site.css") is None
    served = [lookup(f"{HOST}/img{k}.png") for k in range(5)]
    assert [len(s.body) if s else None for s in served] == [image] * 4 + [None]
    assert len(notes) == 2
    assert notes[0].startswith(f"refused {HOST}/static/site.css: record <urn:uuid:") and "body_bytes" in notes[0]
    assert notes[1] == (f"refused {HOST}/img4.png: the page's archived bodies would pass the page_archive_bytes "
                        f"limit ({PAGE_ARCHIVE_BYTES} bytes)")


def test_input_limits_are_documented_with_a_reason() -> None:
    assert set(INPUT_LIMITS) == {"warc_record_bytes", "body_bytes", "page_file_bytes", "page_archive_bytes",
                                 "row_text_chars"}
    for name, limit in INPUT_LIMITS.items():
        assert limit.name == name and limit.value > 0 and len(limit.why) > 40
    assert not set(INPUT_LIMITS) & set(LIMITS)  # PROTOCOL.md's table stays the protocol's


def test_the_batch_extra_installs_fastwarc_at_the_constrained_version() -> None:
    host = Path(__file__).resolve().parents[2] / "host"
    extra = tomllib.loads((host / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    pinned = [line for line in (host / "constraints.txt").read_text(encoding="utf-8").splitlines()
              if line.lower().startswith("fastwarc==")]
    assert len(pinned) == 1 and pinned[0] in extra["batch"]


# ---- the run's processes end with its driver ------------------------------------------------------------------------
def test_the_reaper_ends_the_processes_carrying_its_token_and_no_other() -> None:
    from centrum.batch.reaper import RUN_ENV, end_run, marked

    token = secrets.token_hex(8)
    # A shell whose background child is orphaned when the shell dies: found by its mark, not by its parent.
    tree = subprocess.Popen(["sh", "-c", "sleep 300 & exec sleep 301"], env={**os.environ, RUN_ENV: token})
    other = subprocess.Popen(["sleep", "302"], env={**os.environ, RUN_ENV: "another-run"})
    try:
        deadline = time.monotonic() + 10
        while len(marked(token)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(marked(token)) == 2
        assert end_run(token, grace_s=1.0) == 2
        assert marked(token) == [] and tree.wait(timeout=5) != 0
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_the_reaper_ends_an_unmarked_child_it_noted_below_a_marked_process_after_that_one_died() -> None:
    """As Ray's agents: started without the mark showing (or with it overwritten) by a marked raylet that then dies
    first. Noted while below it, ended by pid and start time once orphaned."""
    from centrum.batch.reaper import RUN_ENV, end_run, run_processes, start_time

    token = secrets.token_hex(8)
    parent = subprocess.Popen(["sh", "-c", f"env -u {RUN_ENV} sleep 303 & wait"], env={**os.environ, RUN_ENV: token})
    try:
        deadline = time.monotonic() + 10
        while len(noted := run_processes(token)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        (child,) = set(noted) - {parent.pid}
        assert b"sleep" in Path(f"/proc/{child}/cmdline").read_bytes()
        parent.kill()  # the child is orphaned: no longer below a marked process
        parent.wait()
        assert child not in run_processes(token) and start_time(child) is not None
        assert end_run(token, noted, grace_s=1.0) == 1
        assert start_time(child) is None
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
