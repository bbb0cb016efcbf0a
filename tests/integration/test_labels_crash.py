"""Labels survive the real host being killed, and every file the host keeps is private (issue #20).

The host is the real ``centrum-host`` process over real native-messaging framing (``test_nativehost.HostProcess``);
it is killed with SIGKILL by its pid while a stream of ``label.save`` requests is in flight.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.host import HostProcess

from centrum.annotation import labels as L
from centrum.core.builders import E, T, build
from centrum.native.framing import MAX_MESSAGE_BYTES, FrameError, read_frame

WORDS = 40_000  # ~300 KB of text per label: a save takes long enough that a kill often lands inside one
BUILT = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [
    E("p", (0, 0, 100, 20), [T(" ".join(f"w{k}" for k in range(WORDS)))], name="p")])]),
    source='<p data-cx="2">words</p><input type="hidden" value="csrf-secret" data-cx="3">')


def request(k: int) -> dict[str, Any]:
    return {"v": 1, "id": f"s{k}", "type": "label.save",
            "label": {"url": f"http://crash.test/page/{k}?session=secret", "annotator": "alice",
                      "nodes": [BUILT.ids["p"]], "snapshot": BUILT.raw, "save_id": f"crash-test-{k:06d}"}}


def drain(host: HostProcess, acked: dict[str, int]) -> None:
    """Read the answers a killed host wrote before it died (a frame cut by the kill is not an answer)."""
    assert host.proc.stdout
    while True:
        try:
            frame = read_frame(host.proc.stdout, MAX_MESSAGE_BYTES)
        except FrameError:
            return
        if frame is None:
            return
        body = json.loads(json.loads(frame)["data"])  # label answers are one chunk
        assert body["status"] == "ok", body
        acked[body["id"]] = body["result"]["label_id"]


def stream_and_kill(home: Path, first: int, count: int, kill_after: int, acked: dict[str, int]) -> int:
    """Send requests first..first+count-1 from a thread, SIGKILL the host after ``kill_after`` answers plus a random
    moment; returns how many requests had been sent, or were being sent, at the kill."""
    host = HostProcess(home)
    sent = 0

    def writer() -> None:
        nonlocal sent
        try:
            for k in range(first, first + count):
                # Counted once it starts: a request the host's full pipe holds half-written is in flight too.
                sent += 1
                host.send(request(k))
        except (BrokenPipeError, OSError):  # the host died: the rest is never sent
            return

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    for _ in range(kill_after):
        body = host.receive()
        assert body["status"] == "ok", body
        acked[body["id"]] = body["result"]["label_id"]
    # The kill must find requests in flight: on a loaded machine the writer thread can lag behind the answers read.
    deadline = time.monotonic() + 10
    while sent <= kill_after + 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(random.uniform(0, 0.05))
    sent_at_kill = sent
    os.kill(host.proc.pid, signal.SIGKILL)
    assert host.proc.wait(timeout=30) == -signal.SIGKILL
    drain(host, acked)
    thread.join(timeout=30)
    assert host.proc.stdin
    try:
        host.proc.stdin.close()
    except BrokenPipeError:
        pass
    return sent_at_kill


def check_store(db: Path, acked: dict[str, int]) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        keys = [r[0] for r in conn.execute("SELECT save_id FROM labels")]
    assert len(keys) == len(set(keys))  # none twice
    rows = L.list_labels(db)
    urls = [r["url"] for r in rows]
    assert len(urls) == len(set(urls))
    by_id = {r["id"]: r for r in rows}
    text = BUILT.snapshot.text_of([BUILT.ids["p"]])
    for rid, label_id in acked.items():  # every acknowledged label is there, whole
        k = int(rid[1:])
        row = by_id[label_id]
        assert row["url"] == f"http://crash.test/page/{k}" and row["text"] == text and row["nodes"] == [2]
        full = L.load_label(db, label_id)
        assert full["snapshot"]["elements"] == BUILT.raw["elements"]
        assert full["source"] == '<p data-cx="2">words</p><input type="hidden" data-cx="3">'
    return rows


def test_killed_host_keeps_every_acknowledged_label_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db = home / L.DB_NAME
    acked: dict[str, int] = {}
    total = 0
    for round_ in range(3):  # three kills, each at another moment of the stream
        sent = stream_and_kill(home, total, 40, kill_after=3 + 2 * round_, acked=acked)
        assert sent > len([k for k in acked if int(k[1:]) >= total])  # requests were in flight at the kill
        total += 40
        check_store(db, acked)
    # The browser retries what got no answer (and, here, what did): with the same save_id nothing is stored
    # twice and each retry of an acknowledged save answers that label's id.
    host = HostProcess(home)
    try:
        for k in range(total):
            body = host.ask(request(k))
            assert body["status"] == "ok", body
            if f"s{k}" in acked:
                assert body["result"]["label_id"] == acked[f"s{k}"]
            acked[f"s{k}"] = body["result"]["label_id"]
    finally:
        assert host.close() == 0
    rows = check_store(db, acked)
    assert len(rows) == total


# ---------------------------------------------------------------------------------------------- file modes


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)  # child processes inherit it: the host and the installer run under it too
    try:
        yield
    finally:
        os.umask(old)


def save_one(home: Path, k: int) -> None:
    host = HostProcess(home)
    try:
        body = host.ask(request(k))
        assert body["status"] == "ok", body
    finally:
        assert host.close() == 0


def test_private_files_under_umask_022(tmp_path: Path, umask022: None) -> None:
    home, fake_home = tmp_path / "centrum", tmp_path / "home"
    env = {**os.environ, "CENTRUM_HOME": str(home), "HOME": str(fake_home)}
    out = subprocess.run([sys.executable, "-m", "centrum.cli", "install-host", "--browser", "chromium"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    launcher = home / "bin" / "centrum-host"
    assert mode(launcher) == 0o700
    save_one(home, 1)  # the first host start closes the folder install-host made and creates the database
    db = home / L.DB_NAME
    # A second SQLite client holds the database open, so the host's -wal and -shm stay after its save.
    reader = sqlite3.connect(db)
    try:
        assert reader.execute("SELECT count(*) FROM labels").fetchone()[0] == 1
        save_one(home, 2)
        files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"), home / "host.log"]
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
    finally:
        reader.close()
    assert mode(home) == 0o700
    # The umask really was 022: what is not private (the browser's host manifest) got 0644.
    assert mode(fake_home / ".config" / "chromium" / "NativeMessagingHosts" / "org.centrum.host.json") == 0o644


def test_an_older_install_is_closed_on_the_next_start(tmp_path: Path, umask022: None) -> None:
    home = tmp_path / "centrum"
    home.mkdir()
    L.save_label(home / L.DB_NAME, request(1)["label"])
    for name in (L.DB_NAME, f"{L.DB_NAME}-wal", "host.log"):  # as the host before issue #20 left them
        (home / name).touch()
        (home / name).chmod(0o644)
    home.chmod(0o755)
    save_one(home, 2)
    assert mode(home) == 0o700
    assert {p.name: mode(p) for p in home.iterdir() if p.name != "stderr.txt"} == {
        L.DB_NAME: 0o600, "host.log": 0o600} | ({f"{L.DB_NAME}-wal": 0o600}
                                                 if (home / f"{L.DB_NAME}-wal").exists() else {})
    assert [r["id"] for r in L.list_labels(home / L.DB_NAME)] == [1, 2]
