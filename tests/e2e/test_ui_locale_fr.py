"""The extension speaks the browser's language: in a Chromium whose UI is French, the annotator's and the debugger's
panels (and the highlight toast's mode buttons) show the strings of extension/_locales/fr, with their substitutions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.chromium_ui import Session, ui_click, ui_eval, ui_session, wait_stage

FR = json.loads((Path(__file__).resolve().parents[2] / "extension" / "_locales" / "fr" / "messages.json")
                .read_text(encoding="utf-8"))


def fr(key: str, *subs: object) -> str:
    text: str = FR[key]["message"]
    for i, sub in enumerate(subs, 1):
        text = text.replace(f"${i}", str(sub))
    return text


@pytest.fixture(scope="module")
def ui(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from ui_session(playwright, tmp_path_factory.mktemp("locale_fr"), args=("--lang=fr",))


def panel_text(page: Any, selector: str) -> dict[str, Any]:
    out: dict[str, Any] = ui_eval(page, f"""(s) => {{
        const p = s.querySelector('{selector}');
        return {{title: p.querySelector('h2').textContent, status: (p.querySelector('.status') || {{}}).textContent,
                 buttons: [...p.querySelectorAll('button')].map((b) => b.textContent)}};
    }}""")
    return out


def test_annotator_and_debugger_speak_french(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/article.html")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    modes = ui_eval(page, "(s) => [...s.querySelectorAll('.toast button[data-mode]')].map((b) => b.textContent)")
    assert fr("modeAnnotate") in modes and fr("modeDebugger") in modes, modes

    ui_click(page, ".toast button[data-mode='annotate']")
    wait_stage(ui, page, "annotate")
    a = panel_text(page, ".panel.annot")
    assert a["title"] == fr("annotTitle") != "Centrum annotator"
    assert a["status"] == fr("annotStart")
    assert {fr("annotGrow"), fr("annotSave"), fr("campaignJoin")} <= set(a["buttons"])
    page.locator("#p1").click(position={"x": 12, "y": 8})
    status = panel_text(page, ".panel.annot")["status"]
    assert status.startswith(fr("annotSelected", "<p#p1>").split("$")[0]) and " nœud " in status, status

    ui_click(page, ".panel.annot button.x")  # close: restores the page
    wait_stage(ui, page, None)
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui_click(page, ".toast button[data-mode='debugger']")
    wait_stage(ui, page, "debugger")
    d = panel_text(page, ".panel.debugger")
    assert d["title"] == fr("debugTitle")
    assert fr("debugRerun") in d["buttons"] and fr("debugUse") in d["buttons"]
    answer = ui_eval(page, "(s) => s.querySelector('.panel.debugger .answer').textContent")
    assert answer.startswith(fr("debugAnswer", 1, "").split("(")[0]), answer
