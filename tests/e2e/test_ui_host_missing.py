"""The message of a press without the native host, in Debian's Chromium with the unpacked extension: the plain
sentence (not installed, run centrum install-host) once, then only what the browser said and the code, for a bug
report; it used to repeat "not installed: run centrum install-host" in the technical line (issue #45)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Playwright

from centrum.bench.extension_browser import extension_world_eval, launch
from centrum.native.install import HOST_NAME

TOAST = """() => { const view = globalThis[Symbol.for('centrum.view')];
    const box = view ? view.uiRoot()?.querySelector('.toast[role=alert]') : null;
    // The message is the box's own text; the close button (x) and mode buttons are elements in it.
    return box ? [...box.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.data).join("")
               : null; }"""


def _toast(page: Any, timeout_s: float = 30) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = extension_world_eval(page, TOAST)
        if text and "E_HOST_MISSING" in text:
            return str(text)
        time.sleep(0.1)
    raise AssertionError(f"no E_HOST_MISSING message on the page; last: {extension_world_eval(page, TOAST)!r}")


def test_host_missing_says_it_once(playwright: Playwright, tmp_path: Path, fixture_server: str) -> None:
    user_data_dir, home = tmp_path / "profile", tmp_path / "home"
    user_data_dir.mkdir()
    for session in launch(playwright, user_data_dir, home):  # no install-host: the manifest is absent
        page = session.open(f"{fixture_server}sample/article.html")
        session.first_press(page)
        shown = _toast(page)
    plain, said = shown.split("\n")
    assert plain == "Centrum's helper program is not installed: run centrum install-host, then press again."
    assert said.startswith(f"{HOST_NAME}: ") and said.endswith(" [E_HOST_MISSING]"), said
    assert "not found" in said  # Chromium's own words ("Specified native messaging host not found.")
    assert shown.count("install-host") == 1 and shown.count("not installed") == 1
