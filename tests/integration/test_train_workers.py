"""A training run's worker processes end with their driver, however the driver ends (real processes, Linux /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The driver queues a task that would keep its worker busy for a minute, then waits: a worker that outlived a killed
# driver would still be sleeping when the test looks.
DRIVER = """
import sys, time
from centrum.training import learner
with learner.worker_pool(1) as pool:
    pool.apply_async(time.sleep, (60,))
    pool.apply_async(time.sleep, (60,))
    print(*(p.pid for p in pool._pool), flush=True)
    time.sleep(120)
"""


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting for a reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tie to the driver is Linux's PR_SET_PDEATHSIG")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_driver_takes_its_workers_along(sig: signal.Signals) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "host")}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert driver.stdout is not None
        workers = [int(p) for p in driver.stdout.readline().split()]
        assert workers and all(alive(p) for p in workers)
        time.sleep(3.0)  # the worker has taken its minute-long task
        assert all(alive(p) for p in workers)
        driver.send_signal(sig)
        driver.wait(timeout=10)
        deadline = time.monotonic() + 5.0
        while any(alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(p) for p in workers), "a worker outlived its driver"
    finally:
        driver.kill()
        driver.wait()
