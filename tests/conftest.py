"""Shared fixtures. Browser tests use Debian's Chromium (Playwright cannot download browsers here)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests on a fixed sequence of examples (a red CI must be reproducible); locally each run
# explores new ones. A failure found locally is kept in hypothesis' example database and replayed.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATASETS = REPO.parent / "shared" / "datasets"


def chromium_path() -> str:
    for candidate in (os.environ.get("CENTRUM_CHROMIUM"), "/usr/lib/chromium/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail("Chromium not found: install Debian's chromium (apt-get install chromium) or set CENTRUM_CHROMIUM")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright: launch Debian's Chromium instead of a downloaded build."""
    return {**browser_type_launch_args, "executable_path": chromium_path()}
