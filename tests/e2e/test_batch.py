"""`centrum batch` end to end: a real Ray (a local one, and a two-node cluster on 127.0.0.1), real Chromium, and
WARC files written here (pages, their stylesheet and images as separate records; pages served from the WARC)."""

from __future__ import annotations

import codecs
import ipaddress
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray", reason="the batch extra (pip install 'centrum[batch]') is installed by tox")

from centrum.batch.crawl import HOST, page_url, write_crawl  # noqa: E402
from centrum.batch.engine import LOCAL_IP, LOOPBACK_ENV  # noqa: E402
from centrum.batch.shards import read_rows, shard_files  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).parent / "ray"
ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "RAY_USAGE_STATS_ENABLED": "0"}
PAGES = 204
IPV4 = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")
# The second node of the two-node cluster: `ray start --address` refuses to add a node in Ray's local-only mode
# (LOOPBACK_ENV), and without that mode turns 127.0.0.1 into this machine's outward address. So this starts it as
# `ray start --address GCS --node-ip-address IP --num-cpus N --object-store-memory B` does (ray/scripts/scripts.py),
# leaving both addresses as given; its processes outlive this script, and `ray stop` ends them.
JOIN_NODE = """
import sys
from ray._private.node import Node
from ray._private.parameter import RayParams
gcs, ip, cpus, store = sys.argv[1:]
params = RayParams(gcs_address=gcs, node_ip_address=ip, node_name=ip, num_cpus=int(cpus),
                   object_store_memory=int(store))
Node(params, head=False, shutdown_at_exit=False, spawn_reaper=False)
"""


# These are the Ray engine's tests (the local engine's: tests/e2e/test_batch_local_engine.py); Ray is the default
# only with --address, so it is asked for.
RAY_ENGINE = ("--engine", "ray")
# The crawl's stylesheet and images (written first): each a row "skipped: not HTML".
STATICS = (f"{HOST}/p/static/site.css", *(f"{HOST}/p/static/img{k}.png" for k in range(3)))


def batch(*args: str, env: dict[str, str] | None = None, timeout: float = 400) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-m", "centrum.cli", "batch", "--no-progress", *RAY_ENGINE, *args],
                       capture_output=True, text=True, timeout=timeout, env=env or ENV, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def batch_popen(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "centrum.cli", "batch", "--no-progress", *RAY_ENGINE, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)


def rows_of(out: Path) -> list[dict[str, Any]]:
    return list(read_rows(out))


def wait_for_rows(out: Path, count: int, proc: subprocess.Popen[str], limit_s: float = 240) -> list[dict[str, Any]]:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        rows = rows_of(out) if out.is_dir() else []
        if len(rows) >= count:
            return rows
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.3)
    raise AssertionError(f"fewer than {count} rows in {out} after {limit_s:g} s")


def _listening() -> dict[str, str]:
    """Socket inode -> local address of every listening TCP socket of this network namespace."""
    found: dict[str, str] = {}
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        for line in table.read_text(encoding="ascii").splitlines()[1:] if table.exists() else []:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            raw = bytes.fromhex(fields[1].rpartition(":")[0])
            # The kernel prints the address as 32-bit words in host order (little-endian here).
            found[fields[9]] = str(ipaddress.ip_address(b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))))
    return found


def _loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped  # a dual-stack socket bound to ::ffff:127.0.0.1
    return address.is_loopback


def beyond_loopback(key: str, value: str) -> tuple[set[str], list[str]]:
    """(names of the processes whose environment sets key=value, what they name on their command lines or listen
    on that is not loopback). Those processes are a Ray cluster of ours and its drivers: every one inherits the
    environment of the command that started it, even after Ray renamed it (``ray::IDLE``)."""
    listening, mark = _listening(), f"{key}={value}".encode()
    names: set[str] = set()
    outside: list[str] = []
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or mark not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            name = (proc / "comm").read_text(encoding="utf-8").strip()
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            sockets = [os.readlink(fd)[8:-1] for fd in (proc / "fd").iterdir()]  # "socket:[inode]"
        except OSError:
            continue  # ended meanwhile
        names.add(name)
        ips = IPV4.findall(args) + [listening[s] for s in sockets if s in listening]
        outside += [f"{name} (pid {proc.name}): {ip}" for ip in ips if not _loopback(ip)]
    return names, outside


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(WARC of PAGES pages, folder with the same pages as files)."""
    root = tmp_path_factory.mktemp("crawl")
    warc = root / "crawl.warc.gz"
    write_crawl(warc, PAGES, root / "files")
    return warc, root / "files"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """(address, environment) of two Ray nodes on 127.0.0.1 (one CPU each), started once for the module and stopped
    after it. The cluster authenticates with a token of its own (Ray's token mode), given to drivers by the
    environment: every node and driver must hold it. Ray's local-only mode (the engine's LOOPBACK_ENV) keeps every
    node's servers on 127.0.0.1 and the addresses they give out too."""
    token = tmp_path_factory.mktemp("ray") / "auth_token"
    token.write_text(secrets.token_hex(32), encoding="ascii")
    token.chmod(0o600)
    env = {**ENV, **LOOPBACK_ENV, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    with socket.socket() as s:
        s.bind((LOCAL_IP, 0))
        port = s.getsockname()[1]
    address = f"{LOCAL_IP}:{port}"
    store = str(200 * 1024 ** 2)
    try:
        subprocess.run([str(RAY), "start", "--head", "--port", str(port), "--include-dashboard", "false",
                        "--node-ip-address", LOCAL_IP, "--num-cpus", "1", "--object-store-memory", store,
                        "--disable-usage-stats"], check=True, capture_output=True, timeout=120, env=env)
        subprocess.run([sys.executable, "-c", JOIN_NODE, address, LOCAL_IP, "1", store], check=True,
                       capture_output=True, timeout=120, env=env)
        yield address, env
    finally:
        subprocess.run([str(RAY), "stop", "--force"], capture_output=True, timeout=120, env=env)


def test_local_ray_over_a_warc_every_record_once_as_extract_styled(crawl: tuple[Path, Path], tmp_path: Path) -> None:
    warc, files = crawl
    out = tmp_path / "out"
    summary = batch(str(warc), "--out", str(out), "--actors", "2", "--rows-per-shard", "64")
    every = rows_of(out)
    # One row per response record: every page exactly once, the stylesheet and images as rows that say why they
    # were not extracted.
    expected = Counter({page_url(i): 1 for i in range(PAGES)} | dict.fromkeys(STATICS, 1))
    assert Counter(r["url"] for r in every) == expected
    assert {r["status"] for r in every if r["url"] in STATICS} == {"skipped: not HTML"}
    rows = [r for r in every if r["url"] not in STATICS]
    assert len({r["record_id"] for r in every}) == PAGES + len(STATICS)
    assert summary["records"] == PAGES + len(STATICS) and summary["failed"] == 0, summary
    assert summary["ok"] == PAGES and summary["skipped_by_reason"] == {"not HTML": len(STATICS)}, summary
    assert len(shard_files(out)) == -(-(PAGES + len(STATICS)) // 64)
    by_url = {r["url"]: r for r in rows}
    for r in rows:
        assert r["status"] == "ok" and r["error_code"] == "", r
        # The stylesheet came from the WARC: rendered styled, and the paragraph it hides is not in the text.
        assert r["render_class"] == "styled" and r["stylesheets_loaded"] == 1, r
        assert "Only visible without the stylesheet" not in r["text"]
        # The uncaptured tracker on another host was refused, not fetched.
        assert any("not in the archive" in w for w in r["warnings"]), r["warnings"]
        assert r["node_paths"] and r["markdown"] and json.loads(r["metadata"])["title"].startswith("Page")
    # Pages whose charset only the HTTP header gives (windows-1252 bytes, no <meta>) decode as such.
    latin = by_url[page_url(9)]
    assert codecs.lookup(latin["charset"]).name == "cp1252" and "café" in latin["text"]  # "windows-1252" (WHATWG)

    # Texts equal to `centrum extract` on the same pages (saved as files beside their stylesheet): the CLI itself on
    # one page, its in-process pipeline (Renderer -> parse_snapshot -> algorithm -> outputs) on a sample.
    p = subprocess.run([sys.executable, "-m", "centrum.cli", "extract", str(files / "p" / "9.html")],
                       capture_output=True, text=True, timeout=120, env=ENV, cwd=REPO)
    assert p.returncode == 0, p.stderr
    assert p.stdout.rstrip("\n") == latin["text"]
    from centrum import algorithms
    from centrum.core.render import Renderer
    from centrum.core.snapshot import parse_snapshot
    from centrum.output import outputs

    with Renderer() as renderer:
        for i in range(0, PAGES, 17):
            snap = parse_snapshot(renderer.render(files / "p" / f"{i}.html").raw)
            text = outputs.Outputs(snap, algorithms.run(algorithms.DEFAULT_ALGORITHM, snap)).text
            assert text == by_url[page_url(i)]["text"], i


def test_the_local_cluster_listens_on_and_advertises_loopback_only() -> None:
    """The engine's own cluster (as `centrum batch` without --address starts it), checked while a worker runs."""
    mark = secrets.token_hex(8)
    code = ("import os, sys\nfrom centrum.batch.engine import init_ray\nray = init_ray(None, 100)\n"
            "def pid() -> int:\n    return os.getpid()\n"
            "assert ray.get(ray.remote(pid).remote()) != os.getpid()\n"
            "print(ray.get_runtime_context().gcs_address, flush=True)\nsys.stdin.read()\nray.shutdown()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**ENV, "CENTRUM_TEST_RAY": mark}, cwd=REPO)
    try:
        assert proc.stdout is not None
        gcs_address = proc.stdout.readline().strip()
        names, outside = beyond_loopback("CENTRUM_TEST_RAY", mark)
    finally:
        _stdout, stderr = proc.communicate("", timeout=120)  # the cluster stops with the driver
    assert proc.returncode == 0, stderr[-3000:]
    assert gcs_address.rpartition(":")[0] == LOCAL_IP, (gcs_address, stderr[-3000:])
    assert {"gcs_server", "raylet"} <= names and outside == [], (names, outside)


def test_two_node_cluster_both_nodes_work_and_a_killed_worker_loses_nothing(
        crawl: tuple[Path, Path], cluster: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    warc, _ = crawl
    out = tmp_path / "out"
    address, env = cluster
    n = 24
    proc = batch_popen(str(warc), "--out", str(out), "--address", address, "--limit", str(n), "--rows-per-shard", "2",
                       "--format", "jsonl", env=env)
    try:
        first = wait_for_rows(out, 6, proc)  # the 4 static records' rows (written by the driver), then pages
        # Mid-run, both nodes, their workers and the driver listen on and name loopback addresses only.
        names, outside = beyond_loopback("RAY_AUTH_TOKEN_PATH", env["RAY_AUTH_TOKEN_PATH"])
        assert {"gcs_server", "raylet"} <= names and outside == [], (names, outside)
        victim = next(int(r["worker_pid"]) for r in first if r["worker_pid"])  # a row a worker made
        os.kill(victim, signal.SIGKILL)  # a worker (its actor process) dies mid-run, records in flight
        stdout, stderr = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr[-3000:]
    summary = json.loads(stdout.strip().splitlines()[-1])
    rows = rows_of(out)
    ids = Counter(r["record_id"] for r in rows)
    assert len(rows) == n and max(ids.values()) == 1  # nothing lost, nothing duplicated
    assert {r["url"] for r in rows} == {page_url(i) for i in range(n - len(STATICS))} | set(STATICS)
    pages = [r for r in rows if r["url"] not in STATICS]
    assert all(r["status"] == "ok" for r in pages), [r["error_message"] for r in pages if r["status"] != "ok"]
    assert summary["worker_deaths"] >= 1, summary
    assert any(r["attempts"] >= 2 for r in pages)  # the dead worker's records ran again elsewhere
    assert len({r["worker_node"] for r in pages}) == 2  # both nodes processed records (the driver the statics)
    pids_after = {int(r["worker_pid"]) for r in pages} - {victim}
    assert len(pids_after) >= 2


def test_resume_after_an_interrupted_run_writes_only_the_missing(
        crawl: tuple[Path, Path], cluster: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    warc, _ = crawl
    out = tmp_path / "out"
    address, env = cluster
    n = 18
    args = (str(warc), "--out", str(out), "--address", address, "--limit", str(n), "--rows-per-shard", "3")
    proc = batch_popen(*args, env=env)
    try:
        wait_for_rows(out, 6, proc)
    finally:
        proc.send_signal(signal.SIGKILL)  # no clean-up at all: only whole shards survive
        proc.wait()
    before = rows_of(out)
    shards_before = set(shard_files(out))
    assert 6 <= len(before) < n
    summary = batch(*args, "--resume", env=env)
    new_shards = set(shard_files(out)) - shards_before
    new_rows = [r for path in new_shards for r in read_rows_file(path)]
    assert summary["already_done"] == len(before) and summary["records"] == n - len(before)
    assert {r["record_id"] for r in new_rows}.isdisjoint({r["record_id"] for r in before})
    rows = rows_of(out)
    assert len(rows) == n and len({r["record_id"] for r in rows}) == n
    # Running again with --resume has nothing left to do.
    assert batch(*args, "--resume", env=env)["records"] == 0


def read_rows_file(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def test_a_hanging_page_is_killed_retried_on_a_fresh_browser_then_failed_with_its_reason(
        cluster: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    from centrum.batch.crawl import response_record

    warc = tmp_path / "hang.warc.gz"
    hang = b"<!DOCTYPE html><html><body><p>Before the loop.</p><script>for (;;) {}</script></body></html>"
    fine = b"<!DOCTYPE html><html><body><article><h1>Fine</h1><p>" + b"A calm page of prose. " * 40 + b"</p></article>"
    warc.write_bytes(response_record(f"{HOST}/hang.html", "text/html; charset=utf-8", hang)
                     + response_record(f"{HOST}/fine.html", "text/html; charset=utf-8", fine))
    address, env = cluster
    out = tmp_path / "out"
    summary = batch(str(warc), "--out", str(out), "--address", address, "--timeout", "2", "--page-timeout", "8",
                    env=env)
    rows = {r["url"]: r for r in rows_of(out)}
    assert summary["records"] == 2 and set(rows) == {f"{HOST}/hang.html", f"{HOST}/fine.html"}
    bad = rows[f"{HOST}/hang.html"]
    assert bad["status"] == "failed" and bad["error_code"] == "E_TIMEOUT", bad
    assert bad["attempts"] == 2 and "attempt 2" in bad["error_message"] and "--page-timeout" in bad["error_message"]
    # The worker went on with a fresh browser: the other page is extracted.
    assert rows[f"{HOST}/fine.html"]["status"] == "ok" and "calm page" in rows[f"{HOST}/fine.html"]["text"]
