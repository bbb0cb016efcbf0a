"""The local Ray cluster of a ``centrum batch`` run ends with the run, however the driver ends (SIGKILL included).

Ray ties only the driver's own children to it (``PR_SET_PDEATHSIG``): the GCS and the raylet die with a killed
driver, but the processes the raylet started (the dashboard and runtime-env agents, still listening) outlive it. So
the driver marks its cluster: it sets :data:`RUN_ENV` to a random token before Ray starts, and Ray's processes, its
workers and their browsers inherit it. A small reaper process (``python -m centrum.batch.reaper TOKEN``) waits on a
pipe from the driver and, once a second meanwhile, notes the run's processes: those carrying the token and every
process below them. The environment alone is not enough: a process that renames itself (Ray's agents and workers set
their title, "ray::DashboardAgent") may overwrite the memory /proc shows as its environment, and once the raylet is
gone its children no longer hang below a marked process. When the pipe closes (the run is over, or the driver died),
the reaper ends every noted process still alive as itself (same pid and start time) and any marked one: SIGTERM, then
SIGKILL after a grace period. It runs in its own session, so a signal to the driver's process group does not take it
along. Linux only (/proc); elsewhere the run starts no reaper.
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

RUN_ENV = "CENTRUM_BATCH_RUN"
# Seconds between SIGTERM and SIGKILL: enough for a raylet or agent to close its sockets and files.
GRACE_S = 2.0
# Seconds between two notes of the run's processes while the driver lives.
WATCH_S = 1.0

Processes = dict[int, str]  # pid -> start time: one process, whatever later reuses its pid


def supported() -> bool:
    return sys.platform.startswith("linux") and Path("/proc/self/environ").exists()


def start_time(pid: int) -> str | None:
    """A live process's start time (jiffies since boot); None once it is gone (or a zombie)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def _scan(token: str) -> tuple[list[int], dict[int, list[int]]]:
    """One pass over /proc: the processes whose environment carries ``RUN_ENV=token`` (this one excepted), and
    every process's children."""
    mark = f"{RUN_ENV}={token}".encode()
    found: list[int] = []
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            environ = (entry / "environ").read_bytes()
        except (OSError, IndexError, ValueError):  # gone, or another user's
            continue
        children.setdefault(ppid, []).append(int(entry.name))
        if mark in environ.split(b"\0"):
            found.append(int(entry.name))
    return found, children


def marked(token: str) -> list[int]:
    """Process ids of the processes whose environment carries ``RUN_ENV=token``."""
    return _scan(token)[0]


def run_processes(token: str) -> Processes:
    """The run's processes now: those carrying the token and every process below them."""
    found, children = _scan(token)
    for pid in found:  # grows while walked: a breadth-first walk down from each marked process
        found.extend(c for c in children.get(pid, []) if c not in found)
    return {pid: start for pid in found if (start := start_time(pid)) is not None}


def _signal(processes: Processes, sig: int) -> int:
    """Send ``sig`` to each of ``processes`` still alive as itself; returns how many were."""
    alive = 0
    for pid, start in processes.items():
        if start_time(pid) != start:
            continue
        alive += 1
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return alive


def end_run(token: str, noted: Processes | None = None, grace_s: float = GRACE_S) -> int:
    """End the run's processes: ``noted`` earlier and those found now; returns how many were alive. Scans again
    after killing: a process being started while the others die (a worker the raylet was spawning) is caught too."""
    targets: Processes = {}
    pending = {pid: start for pid, start in (noted or {}).items() if start_time(pid) == start}
    for _ in range(5):
        pending.update(run_processes(token))
        pending = {pid: start for pid, start in pending.items() if pid not in targets}
        if not pending:
            break
        targets.update(pending)
        _signal(targets, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and _signal(targets, 0):
            time.sleep(0.1)
        _signal(targets, signal.SIGKILL)
        time.sleep(0.2)
        pending = {}
    return len(targets)


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


def watch(token: str, pipe: int) -> Processes:
    """Until ``pipe`` reaches its end (the driver closed it or died): the run's processes, noted once a second."""
    noted: Processes = {}
    while True:
        ready, _, _ = select.select([pipe], [], [], WATCH_S)
        if ready and not os.read(pipe, 4096):
            return noted
        noted.update(run_processes(token))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m centrum.batch.reaper TOKEN (started by centrum batch)", file=sys.stderr)
        return 2
    ended = end_run(argv[0], watch(argv[0], sys.stdin.fileno()))
    if ended:  # a run that ends normally has shut its cluster down already: this is after a killed driver
        print(f"centrum batch: ended {ended} process(es) left by the run (its workers, browsers or local Ray "
              "cluster)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
