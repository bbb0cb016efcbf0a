"""Shared fixtures. Browser tests use Debian's Chromium (Playwright cannot download browsers here)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
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


@pytest.fixture
def shared_pages() -> Callable[[int], list[Path]]:
    """``shared_pages(count)``: ``count`` pages of the shared data sets, the first few of each set in name order.
    Where the sets are absent (a clone outside the project's folder) the test is skipped, saying why; in CI, where
    they must be (the README's set-up links them), it fails instead of passing unseen."""

    def pages(count: int) -> list[Path]:
        sets = sorted(d for d in DATASETS.glob("*") if (d / "pages").is_dir())
        per = -(-count // max(len(sets), 1))
        found = [p for d in sets for p in sorted((d / "pages").glob("*.html"))[:per]][:count]
        if len(found) < count:
            why = f"the shared data sets are absent ({DATASETS} holds {len(found)} pages, {count} needed)"
            if os.environ.get("CI"):
                pytest.fail(why)
            pytest.skip(why)
        return found

    return pages


def chromium_path() -> str:
    for candidate in (os.environ.get("CENTRUM_CHROMIUM"), "/usr/lib/chromium/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail("Chromium not found: install Debian's chromium (apt-get install chromium) or set CENTRUM_CHROMIUM")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright: launch Debian's Chromium instead of a downloaded build."""
    return {**browser_type_launch_args, "executable_path": chromium_path()}
