"""The unit tier: no browser and no subprocess. Every test here runs with process creation refused, so a test that
needs a host process, a browser or node belongs in tests/integration or tests/e2e instead (tests/README.md)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest


class SubprocessInUnitTest(AssertionError):
    pass


def _refuse(*args: object, **kwargs: object) -> None:
    raise SubprocessInUnitTest("a unit test started a process: it belongs in tests/integration (tests/e2e for a "
                               "browser)")


@pytest.fixture(scope="session", autouse=True)
def matplotlib_font_list() -> None:
    """matplotlib builds its font list with ``fc-list`` (a process) the first time it is imported with an empty cache
    (a fresh HOME): made here, before any test refuses processes, so a unit test that plots passes in any order."""
    try:
        import matplotlib.font_manager  # noqa: F401
    except ImportError:
        pass


@pytest.fixture(autouse=True)
def no_subprocess(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """subprocess (and so Playwright's browser launch, asyncio's subprocesses, multiprocessing's spawn) and fork
    refuse to start anything for the test's duration."""
    monkeypatch.setattr(subprocess, "_fork_exec", _refuse)
    monkeypatch.setenv("CENTRUM_COMPILE", "off")  # a host's warm-up would start the models' compilation process
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "system"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refuse)
    yield
