"""The local Ray cluster of a ``centrum batch`` run ends with the run, however the driver ends (SIGKILL included).

Ray ties only the driver's own children to it (``PR_SET_PDEATHSIG``): the GCS and the raylet die with a killed
driver, but the processes the raylet started (the dashboard and runtime-env agents, still listening) outlive it. So
the driver marks every process of its cluster: it sets :data:`RUN_ENV` to a random token before Ray starts, and Ray's
processes, its workers and their browsers inherit it. A small reaper process (``python -m centrum.batch.reaper``)
waits on a pipe from the driver; when the pipe closes (the run is over, or the driver died), it ends every process
still carrying the token: SIGTERM, then SIGKILL after a grace period. It runs in its own session, so a signal to the
driver's process group does not take it along. Linux only (/proc); elsewhere the run starts no reaper.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

RUN_ENV = "CENTRUM_BATCH_RUN"
# Seconds between SIGTERM and SIGKILL: enough for a raylet or agent to close its sockets and files.
GRACE_S = 2.0


def supported() -> bool:
    return sys.platform.startswith("linux") and Path("/proc/self/environ").exists()


def marked(token: str) -> list[int]:
    """Process ids of this user's processes whose environment carries ``RUN_ENV=token`` (this one excepted)."""
    mark = f"{RUN_ENV}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or another user's
            continue
        if mark in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _start_time(pid: int) -> str | None:
    """A live process's start time (with its pid, names one process across pid reuse); None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def end_run(token: str, grace_s: float = GRACE_S) -> int:
    """End every process carrying ``token``; returns how many there were. Each one found is remembered (pid and
    start time) and killed by that identity: a process shutting down may no longer show its environment. Scans again
    after killing: a process being started while the others die (a worker the raylet was spawning) is caught too."""
    found: dict[int, str] = {}
    for _ in range(5):
        new = {pid: start for pid in marked(token) if (start := _start_time(pid)) is not None}
        if not new:
            break
        found.update(new)
        _signal(found, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and _signal(found, 0):
            time.sleep(0.1)
        _signal(found, signal.SIGKILL)
        time.sleep(0.2)
    return len(found)


def _signal(processes: dict[int, str], sig: int) -> int:
    """Send ``sig`` to each of ``processes`` (pid -> start time) still alive as itself; returns how many were."""
    alive = 0
    for pid, start in processes.items():
        if _start_time(pid) != start:
            continue
        alive += 1
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return alive


class Reaper:
    """The reaper of one run: :meth:`start` before Ray starts (it sets :data:`RUN_ENV` in this process, so the
    cluster inherits it), :meth:`stop` after ``ray.shutdown()`` (it ends what is left and waits for that)."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(16)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if not supported():
            return
        env = {k: v for k, v in os.environ.items() if k != RUN_ENV}
        self.proc = subprocess.Popen([sys.executable, "-m", "centrum.batch.reaper", self.token], stdin=subprocess.PIPE,
                                     env=env, start_new_session=True, close_fds=True)
        os.environ[RUN_ENV] = self.token

    def stop(self, timeout_s: float = 60.0) -> None:
        if os.environ.get(RUN_ENV) == self.token:
            del os.environ[RUN_ENV]
        if self.proc is None:
            return
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the same signal as the driver's death: end what is left of the run
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m centrum.batch.reaper TOKEN (started by centrum batch)", file=sys.stderr)
        return 2
    while sys.stdin.buffer.read(4096):  # EOF: the driver closed the pipe or died
        pass
    ended = end_run(argv[0])
    if ended:  # a run that ends normally has shut its cluster down already: this is after a killed driver
        print(f"centrum batch: ended {ended} process(es) left by the run's local Ray cluster", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
