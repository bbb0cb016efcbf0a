"""Shared fixtures. Browser tests use Debian's Chromium (Playwright cannot download browsers here)."""

from __future__ import annotations

import argparse
import os

# LightGBM's OpenMP threads spin while they wait by default; on a busy machine (tests beside browsers) a small fit then
# crawls at a few per cent of a core. Passive waiting changes no result (the thread count, and so the model, are the
# same). Set before any test imports LightGBM.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.host import host  # noqa: F401 - the fixture: a real centrum-host process
from hypothesis import settings

# CI runs the property tests on a fixed sequence of examples (a red CI must be reproducible); locally each run
# explores new ones. A failure found locally is kept in hypothesis' example database and replayed.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATASETS = REPO.parent / "shared" / "datasets"


TIERS = {"integration": "integration", "e2e": "browser"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked with its tier, from the folder it lives in (tox.ini lists the markers)."""
    for item in items:
        tier = Path(str(item.fspath)).relative_to(REPO / "tests").parts[0]
        if tier in TIERS:
            item.add_marker(TIERS[tier])


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


@pytest.fixture
def former_models(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$CENTRUM_HOME`` with every former model (the repository's ``models/``, not in the package) installed
    by name, as ``centrum models install NAME --from models/`` does."""
    from centrum.commands import models

    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("CENTRUM_HOME", str(home))
    for name in models.former_models():
        args = argparse.Namespace(models_command="install", file=Path(name), source=str(REPO / "models"), name=None,
                                  force=False)
        assert models.run(args) == 0, name
    return home


def chromium_path() -> str:
    for candidate in (os.environ.get("CENTRUM_CHROMIUM"), "/usr/lib/chromium/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail("Chromium not found: install Debian's chromium (apt-get install chromium) or set CENTRUM_CHROMIUM")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright: launch Debian's Chromium instead of a downloaded build."""
    return {**browser_type_launch_args, "executable_path": chromium_path()}
