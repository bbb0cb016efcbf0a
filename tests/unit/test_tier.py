"""The unit tier starts no process: its conftest refuses them, so a test that needs one fails here, saying where it
belongs, instead of passing on a machine that happens to have the browser or the host."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import pytest


def test_a_subprocess_is_refused_with_where_it_belongs() -> None:
    with pytest.raises(AssertionError, match="belongs in tests/integration"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    with pytest.raises(AssertionError):
        os.system("true")


def test_a_forked_worker_is_refused() -> None:
    with pytest.raises(AssertionError):
        multiprocessing.get_context("fork").Process(target=print).start()
