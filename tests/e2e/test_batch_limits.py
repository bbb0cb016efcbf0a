"""`centrum batch` against hostile input, end to end (issue #40): a real local Ray cluster, real Chromium.

- A WARC holding a 1 GiB gzip bomb beside a normal page whose stylesheet is another: one E_TOO_LARGE row naming the
  limit, one good row noting its refused stylesheet, and the run costs no more memory than with ordinary records.
- Records sharing a WARC-Record-ID: one row each, the repeats with status "skipped: duplicate record id".
- A driver killed with SIGKILL: every process of its local cluster ends too (Ray's agents used to stay, listening).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray", reason="the batch extra (pip install 'centrum[batch]') is installed by tox")

from centrum.batch.crawl import CSS, HOST, bomb_record, page_html, page_url, response_record, write_crawl  # noqa: E402
from centrum.batch.engine import E_DUPLICATE_ID, SKIPPED_DUPLICATE  # noqa: E402
from centrum.batch.shards import read_rows  # noqa: E402
from centrum.core.limits import BODY_BYTES, MIB  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "RAY_USAGE_STATS_ENABLED": "0"}
GIB = 1024 * MIB


def cli(*args: str) -> list[str]:
    # The Ray engine (the default only with --address): its cluster's processes are what these tests watch.
    return [sys.executable, "-m", "centrum.cli", "batch", "--no-progress", "--engine", "ray", *args]


# ---- the process tree of a run ---------------------------------------------------------------------------------------
def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    return children


def tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    children, found = _children(), [root]
    for pid in found:
        found.extend(children.get(pid, []))
    return found


def start_time(pid: int) -> str | None:
    """The start time (jiffies since boot) of a live process: with the pid, it names one process across pid reuse.
    None for a process gone or dead (a zombie its new parent has not reaped yet)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# Ray's own service processes (the cluster's fixed cost, the same whatever the input): the rest of a run's tree is
# the driver, the reaper, and each worker with its Playwright driver and browser.
RAY_SERVICES = ("gcs_server", "raylet", "monitor.py", "log_monitor.py", "dashboard.py", "ray::DashboardAgent",
                "ray::RuntimeEnvAgent")


def ray_service(command: str) -> bool:
    """Whether a command line is one of Ray's services: its program, or the script Python runs (after an option)."""
    return any(name in word for word in command.split()[:3] for name in RAY_SERVICES)


class MemorySampler:
    """Samples a process tree's memory until it ends: the peak of the summed PSS (each shared page divided among the
    processes that map it, so the browsers' shared libraries count once, not once per process), of the same without
    Ray's service processes, and of the summed RSS (every shared page counted again in each process: an upper
    bound); and each process's own peak RSS (VmHWM)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.peak_pss = self.peak_run_pss = self.peak_rss = 0
        self.hwm: dict[int, tuple[int, str]] = {}  # pid -> (its peak RSS, its command line)
        self.processes = 0

    def sample(self) -> None:
        pss = run_pss = rss = 0
        pids = tree(self.root)
        self.processes = max(self.processes, len(pids))
        for pid in pids:
            try:
                rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            fields = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in rollup.splitlines()[1:]}
            command = cmdline(pid)
            pss += fields.get("Pss", 0)
            run_pss += 0 if ray_service(command) else fields.get("Pss", 0)
            rss += fields.get("Rss", 0)
            hwm = next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmHWM:")), 0)
            if hwm > self.hwm.get(pid, (0, ""))[0]:
                self.hwm[pid] = (hwm, command[:100].strip())
        self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)
        self.peak_run_pss = max(self.peak_run_pss, run_pss)

    def largest(self) -> tuple[int, str]:
        return max(self.hwm.values(), default=(0, ""))

    def report(self) -> str:
        largest, who = self.largest()
        return (f"peak PSS {self.peak_pss / MIB:.0f} MiB (without Ray's services: {self.peak_run_pss / MIB:.0f} "
                f"MiB), peak RSS sum {self.peak_rss / MIB:.0f} MiB, over {self.processes} processes; largest "
                f"process {largest / MIB:.0f} MiB ({who})")


def run_sampled(args: list[str], timeout_s: float = 600) -> tuple[subprocess.CompletedProcess[str], MemorySampler]:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=REPO)
    sampler = MemorySampler(proc.pid)
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None:
        assert time.monotonic() < deadline, "the run outlasted its time"
        sampler.sample()
        time.sleep(0.2)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(args, proc.returncode, out, err), sampler


# ---- the acceptance: a gzip bomb beside a page ----------------------------------------------------------------------
def test_a_gzip_bomb_is_one_too_large_row_beside_a_good_one_and_the_run_stays_under_1_gib(tmp_path: Path) -> None:
    """The bomb run against the same run with an ordinary page in the bomb's place: it costs no memory beyond it.
    The whole tree's figure is mostly Ray's fixed service processes (~0.4 GiB PSS) and the browser, so the 1 GiB bound
    is asserted on the run without Ray's services (driver, worker, browser), the bomb's cost on the whole tree."""
    warc, plain = tmp_path / "bomb.warc.gz", tmp_path / "plain.warc.gz"
    page = response_record(page_url(0), "text/html", page_html(0).encode("utf-8"))
    css = f"{HOST}/p/static/site.css"  # the page's stylesheet: a bomb too, served to the browser while it renders
    # Each 1 GiB body is ~1 MB of gzip, built in bounded memory (crawl.gzip_zeros).
    warc.write_bytes(bomb_record(f"{HOST}/bomb.html", GIB) + bomb_record(css, GIB, "text/css") + page)
    plain.write_bytes(response_record(f"{HOST}/bomb.html", "text/html", page_html(1).encode("utf-8"))
                      + response_record(css, "text/css", CSS) + page)
    assert warc.stat().st_size < 2 * MIB
    base, base_mem = run_sampled(cli(str(plain), "--out", str(tmp_path / "base"), "--format", "jsonl",
                                     "--actors", "1"))
    assert base.returncode == 0, base.stderr[-3000:]
    out = tmp_path / "out"
    p, mem = run_sampled(cli(str(warc), "--out", str(out), "--format", "jsonl", "--actors", "1"))
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    # The stylesheet bomb is a row too (skipped: not HTML; never inflated for it).
    assert (summary["records"], summary["ok"], summary["failed"], summary["skipped"]) == (3, 1, 1, 1)
    rows = {r["url"]: r for r in read_rows(out)}
    bomb, good = rows[f"{HOST}/bomb.html"], rows[page_url(0)]
    assert (bomb["status"], bomb["error_code"]) == ("failed", "E_TOO_LARGE")
    assert bomb["error_message"] == (f"record {bomb['record_id']}: its decoded body is over the body_bytes limit "
                                     f"({BODY_BYTES} bytes, 16 MiB); refused without reading further")
    assert good["status"] == "ok" and "Story number 0" in good["text"]
    # Its stylesheet was refused over the same limit (the page rendered unstyled), and the row says so.
    refused = [w for w in good["warnings"] if w.startswith(f"refused {css}: record <urn:uuid:")]
    assert len(refused) == 1 and f"body_bytes limit ({BODY_BYTES} bytes" in refused[0], good["warnings"]
    assert good["stylesheets_loaded"] == 0
    report = f"bomb run: {mem.report()}\nplain run: {base_mem.report()}"
    print(report)
    assert mem.peak_run_pss < GIB, report
    assert mem.peak_pss < base_mem.peak_pss + 128 * MIB, report  # the bomb adds at most a body_bytes read
    assert mem.largest()[0] < 512 * MIB, report  # no process came near inflating it


# ---- duplicate record ids --------------------------------------------------------------------------------------------
def test_records_sharing_a_warc_record_id_each_get_a_row(tmp_path: Path) -> None:
    shared = "<urn:uuid:00000000-0000-4000-8000-000000000001>"
    first, second = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    records = [response_record(page_url(i), "text/html", page_html(i).encode(), record_id=shared) for i in range(3)]
    first.write_bytes(b"".join(records) + response_record(page_url(3), "text/html", page_html(3).encode()))
    second.write_bytes(response_record(page_url(4), "text/html", page_html(4).encode(), record_id=shared))
    out = tmp_path / "out"
    args = cli(str(first), str(second), "--out", str(out), "--no-render", "--format", "jsonl", "--actors", "1")
    p = subprocess.run(args, capture_output=True, text=True, timeout=400, env=ENV, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert (summary["records"], summary["ok"], summary["duplicates"], summary["failed"]) == (5, 2, 3, 0)
    assert "3 WARC record(s) repeat an earlier record's WARC-Record-ID" in p.stderr
    rows = {r["url"]: r for r in read_rows(out)}
    assert rows[page_url(0)]["record_id"] == shared and rows[page_url(0)]["status"] == "ok"
    offsets = [0, len(records[0]), len(records[0]) + len(records[1])]
    for i, key in ((1, f"a.warc.gz@{offsets[1]}"), (2, f"a.warc.gz@{offsets[2]}"), (4, "b.warc.gz@0")):
        row = rows[page_url(i)]
        assert (row["record_id"], row["status"], row["error_code"]) == (key, SKIPPED_DUPLICATE, E_DUPLICATE_ID)
        assert shared in row["error_message"] and row["text"] is None
    # Every record has its row already: a resumed run adds nothing, the repeats included.
    again = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=400, env=ENV, cwd=REPO)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout.strip().splitlines()[-1])["already_done"] == 5
    assert len(list(read_rows(out))) == 5


# ---- a killed driver ------------------------------------------------------------------------------------------------
def test_a_driver_killed_with_sigkill_takes_its_whole_local_cluster_along(tmp_path: Path) -> None:
    warc = tmp_path / "crawl.warc.gz"
    write_crawl(warc, 60)
    out = tmp_path / "out"
    proc = subprocess.Popen(cli(str(warc), "--out", str(out), "--actors", "1", "--rows-per-shard", "1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=REPO)
    try:
        deadline = time.monotonic() + 300
        # A row written by a worker (the crawl's static records' rows come from the driver first): Ray, its worker
        # and browser are up.
        while not (out.is_dir() and any(r["worker_pid"] for r in read_rows(out))):
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no row within 300 s"
            time.sleep(0.3)
        # A process already gone (or a zombie) when listed has no start time: it cannot outlive anything.
        processes = {pid: (t, cmdline(pid)) for pid in tree(proc.pid)
                     if pid != proc.pid and (t := start_time(pid)) is not None}
        names = " ".join(c for _s, c in processes.values())
        for part in ("raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent", "ray::BatchWorker", "chromium",
                     "centrum.batch.reaper"):
            assert part in names, f"no {part} among the run's processes"
        os.kill(proc.pid, signal.SIGKILL)
        _out, err = proc.communicate()  # until the reaper, which shares the driver's stderr, is done too
        deadline = time.monotonic() + 60
        alive: dict[int, Any] = processes
        while alive and time.monotonic() < deadline:
            time.sleep(0.5)
            alive = {pid: v for pid, v in processes.items() if start_time(pid) == v[0]}
        reaper = next((f"{pid} {start_time(pid) is not None}" for pid, (_s, c) in processes.items()
                       if "centrum.batch.reaper" in c), "")
        assert not alive, f"{len(alive)} process(es) outlived the driver (reaper pid, alive: {reaper}): " + "; ".join(
            c[:100].strip() for _s, c in alive.values()) + "\n" + err[-2000:]
        assert "process(es) left by the run (its workers, browsers or local Ray cluster)" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
