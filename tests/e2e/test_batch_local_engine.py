"""The local engine of `centrum batch` (worker processes on this machine, each with its own headless Chromium, no
Ray), as tests/e2e/test_batch.py tests the Ray engine: a run SIGKILLed mid-way keeps its whole shards and leaves no
process behind, --resume then writes exactly the missing records; a worker killed mid-run has its records re-run
and nothing is lost or written twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from centrum.batch.crawl import HOST, page_url, write_crawl
from centrum.batch.reaper import start_time
from centrum.batch.shards import read_rows, shard_files
from centrum.evaluation.runner import _descendants

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}
PAGES = 40
STATICS = (f"{HOST}/p/static/site.css", *(f"{HOST}/p/static/img{k}.png" for k in range(3)))


def batch_popen(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "centrum.cli", "batch", "--no-progress", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=REPO)


def batch(*args: str) -> dict[str, Any]:
    p = batch_popen(*args)
    stdout, stderr = p.communicate(timeout=400)
    assert p.returncode == 0, stderr[-3000:]
    return json.loads(stdout.strip().splitlines()[-1])


def wait_for_rows(out: Path, count: int, proc: subprocess.Popen[str], limit_s: float = 240) -> list[dict[str, Any]]:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        rows = list(read_rows(out)) if out.is_dir() else []
        if len(rows) >= count:
            return rows
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.3)
    raise AssertionError(f"fewer than {count} rows within {limit_s} s")


@pytest.fixture(scope="module")
def warc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crawl") / "crawl.warc.gz"
    write_crawl(path, PAGES)
    return path


def test_a_sigkilled_run_keeps_whole_shards_leaves_no_process_and_resume_writes_only_the_missing(
        warc: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    n = 18
    args = (str(warc), "--out", str(out), "--workers", "2", "--limit", str(n), "--rows-per-shard", "3")
    proc = batch_popen(*args)
    try:
        wait_for_rows(out, 7, proc)  # the 4 static records' rows, then rendered pages
        # A process already gone (or a zombie) when listed has no start time: it cannot outlive anything.
        processes = {pid: t for pid in _descendants(proc.pid) if (t := start_time(pid)) is not None}
        comms = " ".join(Path(f"/proc/{pid}/comm").read_text().strip() for pid in processes
                         if Path(f"/proc/{pid}/comm").exists())
        assert "chrom" in comms or "headless_shell" in comms, comms  # each worker's own browser is up
    finally:
        proc.send_signal(signal.SIGKILL)  # no clean-up at all: only whole shards survive
        proc.communicate()
    deadline = time.monotonic() + 60
    alive = processes
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = {pid: t for pid, t in processes.items() if start_time(pid) == t}
    assert not alive, f"{len(alive)} process(es) of the run outlived its SIGKILLed driver"
    before = list(read_rows(out))
    shards_before = set(shard_files(out))
    assert 7 <= len(before) < n
    summary = batch(*args, "--resume")
    assert summary["engine"] == "local"
    new_rows = [r for path in set(shard_files(out)) - shards_before for r in read_rows_file(path)]
    assert summary["already_done"] == len(before) and summary["records"] == n - len(before)
    assert {r["record_id"] for r in new_rows}.isdisjoint({r["record_id"] for r in before})
    rows = list(read_rows(out))
    assert len(rows) == n and len({r["record_id"] for r in rows}) == n
    assert {r["url"] for r in rows} == set(STATICS) | {page_url(i) for i in range(n - len(STATICS))}
    pages = [r for r in rows if r["url"] not in STATICS]
    assert all(r["status"] == "ok" and r["render_class"] == "styled" for r in pages), pages
    # Running again with --resume has nothing left to do.
    assert batch(*args, "--resume")["records"] == 0


def test_a_killed_worker_has_its_records_rerun_and_loses_nothing(warc: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    n = 24
    proc = batch_popen(str(warc), "--out", str(out), "--workers", "2", "--limit", str(n), "--rows-per-shard", "1",
                       "--format", "jsonl")
    try:
        first = wait_for_rows(out, 6, proc)
        victim = next(int(r["worker_pid"]) for r in first if r["url"] not in STATICS)
        os.kill(victim, signal.SIGKILL)  # a worker dies mid-run, records in flight
        stdout, stderr = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr[-3000:]
    summary = json.loads(stdout.strip().splitlines()[-1])
    rows = list(read_rows(out))
    assert len(rows) == n and max(Counter(r["record_id"] for r in rows).values()) == 1
    pages = [r for r in rows if r["url"] not in STATICS]
    assert all(r["status"] == "ok" for r in pages), [r["error_message"] for r in pages if r["status"] != "ok"]
    assert summary["worker_deaths"] >= 1 and summary["engine"] == "local", summary
    assert any(r["attempts"] >= 2 for r in pages)  # the dead worker's records ran again on its replacement
    assert len({r["worker_pid"] for r in pages}) >= 3  # two workers and the replacement


def read_rows_file(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()
