"""End-to-end fixtures: ``tests/fixtures`` served over http on 127.0.0.1 (random port), and a shared Renderer."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from centrum.annotation.serve import QuietFileHandler, loopback

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class _QuietHandler(QuietFileHandler):
    def end_headers(self) -> None:
        # Fixture pages change while tests are written; never let the browser cache them.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@pytest.fixture(scope="session")
def fixture_server() -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/``) of a threaded HTTP server serving ``tests/fixtures``."""
    with loopback(functools.partial(_QuietHandler, directory=str(FIXTURES))) as base:
        yield f"{base}/"


@pytest.fixture(scope="session")
def renderer() -> Iterator[object]:
    """One headless Chromium (centrum.core.render.Renderer) for every e2e test of the session."""
    from centrum.core.render import Renderer

    with Renderer(window=(1280, 800), timeout_s=15) as r:
        yield r


# ---- the extension UI tests (test_ui_*.py) -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The module's ``PAGES`` (default: the reader test pages) served on 127.0.0.1; a module may override it."""
    from helpers.chromium_ui import PAGES, serve

    yield from serve(getattr(request.module, "PAGES", PAGES))


@pytest.fixture(scope="module")
def ui(playwright: Any, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Any]:
    """One Chromium with the extension and its native host per test module."""
    from helpers.chromium_ui import ui_session

    base = tmp_path_factory.mktemp(request.module.__name__.replace("test_", ""))
    yield from ui_session(playwright, base)


@pytest.fixture(scope="session", autouse=True)
def screenshot_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the UI tests write their screenshots (``helpers.chromium_ui.shot``): the folder CENTRUM_SCREENSHOTS names
    (``CENTRUM_SCREENSHOTS=docs/screenshots`` refreshes the README's), else this run's temporary folder, so that a
    test run leaves the repository's files as they were."""
    named = os.environ.get("CENTRUM_SCREENSHOTS")
    folder = Path(named) if named else tmp_path_factory.mktemp("screenshots")
    os.environ["CENTRUM_SCREENSHOTS"] = str(folder)
    try:
        yield folder
    finally:
        if named is None:
            os.environ.pop("CENTRUM_SCREENSHOTS", None)
