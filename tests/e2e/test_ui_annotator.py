"""Annotator mode in Chromium, end to end (issue #9): the annotator clicks a word inside the main content, grows and
shrinks the selection up and down the DOM with keys and buttons, may select several disjoint nodes, confirms; the
label goes through the real native host into its SQLite database (a temporary CENTRUM_HOME), and ``centrum labels
export`` writes a data set that ``centrum eval`` accepts."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.chromium_ui import Session, shot, storage, ui_click, ui_eval, ui_fill, ui_wait, wait_stage
from playwright.sync_api import Page

from centrum.annotation.labels import list_labels, load_label

PANEL = ".panel.annot"


def annot(page: Page) -> dict[str, Any]:
    out: dict[str, Any] = ui_eval(page, """(s) => {
        const p = s.querySelector('.panel.annot');
        const boxes = (sel) => [...s.querySelectorAll(`.layer[data-layer="annot"] .box.${sel}`)].map(
            (b) => [parseFloat(b.style.left), parseFloat(b.style.top), parseFloat(b.style.width),
                    parseFloat(b.style.height)]);
        return {status: p.querySelector('.status').textContent, status_class: p.querySelector('.status').className,
                picked: [...p.querySelectorAll('ol.picked li')].map(li => li.textContent),
                current: boxes('current'), pickedBoxes: boxes('picked')};
    }""")
    return out


def rect(page: Page, selector: str) -> list[float]:
    out: list[float] = page.evaluate("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }""", selector)
    return out


def click_word(page: Page, selector: str) -> None:
    # A click on the first word of the element's text (not on a link inside it).
    page.locator(selector).click(position={"x": 12, "y": 8})


def centrum(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "CENTRUM_HOME": str(home)})


def test_annotation_by_clicks_and_keys_is_stored_exported_and_evaluated(ui: Session, server: str,
                                                                        tmp_path: Path) -> None:
    page = ui.open(f"{server}/article.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    before = page.evaluate("() => document.documentElement.outerHTML")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui_click(page, ".toast button[data-mode='annotate']")
    wait_stage(ui, page, "annotate")

    # A click on a word of the first paragraph selects that paragraph (the link's page is not opened).
    click_word(page, "#p1")
    a = annot(page)
    assert a["status"].startswith("selected <p#p1>")
    assert a["current"] == [pytest.approx(rect(page, "#p1"), abs=1)]
    assert page.url == f"{server}/article.html"

    # Up grows to the article, down shrinks back, "+" grows again (keys), then Enter adds it.
    page.keyboard.press("ArrowUp")
    assert annot(page)["status"].startswith("selected <article#story>")
    page.keyboard.press("ArrowDown")
    assert annot(page)["status"].startswith("selected <p#p1>")
    page.keyboard.press("+")
    assert annot(page)["current"] == [pytest.approx(rect(page, "#story"), abs=1)]
    page.keyboard.press("Enter")
    a = annot(page)
    assert a["picked"] == [a["picked"][0]] and a["picked"][0].startswith("<article#story>")
    assert a["pickedBoxes"] == [pytest.approx(rect(page, "#story"), abs=1)] and a["current"] == []

    # A node inside the selection cannot be added twice; a disjoint node can (buttons this time), and removed.
    click_word(page, "#p2")
    ui_click(page, f"{PANEL} button.add")
    assert annot(page)["status"] == "already inside the selection"
    click_word(page, "#side")
    ui_click(page, f"{PANEL} button.add")
    assert len(annot(page)["picked"]) == 2
    shot(page, "annotator.png")
    ui_click(page, f"{PANEL} button.undo")
    assert len(annot(page)["picked"]) == 1

    # Grow/shrink buttons work like the keys.
    click_word(page, "#p2")
    ui_click(page, f"{PANEL} button.grow")
    assert annot(page)["status"].startswith("selected <article#story>")
    ui_click(page, f"{PANEL} button.shrink")
    assert annot(page)["status"].startswith("selected <p#p2>")
    click_word(page, "#p2")  # back to a plain paragraph inside the selection, not added

    # Saving needs a name; then the host stores the label and the panel shows its id.
    page.keyboard.press("s")
    assert annot(page)["status"] == "enter the annotator name"
    ui_fill(page, f"{PANEL} input.annotator", "alice")
    ui_click(page, f"{PANEL} button.save")
    ui_wait(page, "(s) => s.querySelector('.panel.annot .status').textContent.startsWith('Saved label #')")
    a = annot(page)
    assert a["status"] == "Saved label #1 (1 node(s))" and "ok" in a["status_class"]
    assert storage(ui)["annotatorName"] == "alice"  # remembered for the next label

    # In the database: URL, annotator, the selected node (the article's node id), its text, the page source.
    db = ui.home / "labels.sqlite3"
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        rows = [dict(r) for r in con.execute("SELECT * FROM labels")]
    assert len(rows) == 1
    row = rows[0]
    assert row["url"] == f"{server}/article.html" and row["annotator"] == "alice"
    article_id = page.evaluate("""() => [document.documentElement, ...document.documentElement.querySelectorAll('*')]
        .filter((e) => !e.closest('centrum-ui')).indexOf(document.getElementById('story'))""")
    assert json.loads(row["nodes"]) == [article_id]
    text = row["text"]
    assert "eleven and fourteen metres" in text and "Most read" not in text
    assert 'id="story"' in load_label(db, row["id"])["source"]  # the serialized page

    # The next press restores the page exactly (no listener left: a click on the link navigates again).
    ui.press(page)
    wait_stage(ui, page, None)
    assert page.evaluate("() => document.documentElement.outerHTML") == before

    # Export -> a data set -> centrum eval accepts it, and the semantic baseline matches alice's article.
    out = tmp_path / "labelled"
    exported = centrum("labels", "export", str(out), "--db", str(db), home=ui.home)
    assert exported.returncode == 0, exported.stderr
    meta = [json.loads(line) for line in (out / "meta.jsonl").read_text().splitlines()]
    assert len(meta) == 1 and meta[0]["url"] == f"{server}/article.html"
    gold = (out / "gold" / f"{meta[0]['id']}.txt").read_text()
    assert "counting the stakes" in gold
    report = tmp_path / "report"
    ev = centrum("eval", str(out), "--peers", "none", "--algorithms", "semantic", "--out", str(report),
                 "--cache", str(tmp_path / "cache"), home=ui.home)
    assert ev.returncode == 0, ev.stderr[-3000:]
    with (report / "results.csv").open(encoding="utf-8") as f:
        results = list(csv.DictReader(f))
    assert len(results) == 1 and float(results[0]["f1"]) > 0.95, results


def test_firefox_reader_settings_debugger_and_annotator(tmp_path: Path) -> None:
    """The three modes in Firefox ESR over WebDriver BiDi (test copy of the extension with the press shim of
    test_extension_firefox.py). The panels sit in a closed shadow root and react to trusted input only: BiDi
    reaches the root through its serialization and clicks, hovers and types with input.performActions."""
    from helpers.firefox_ui import PRESS, STAGE, keys, mouse, run_firefox, set_algorithm, ui_click, ui_eval
    from helpers.firefox_ui import ui_wait as ff_wait
    from helpers.firefox_ui import wait_for as _wait

    for bidi, centrum_home, url in run_firefox(tmp_path, install=True):
        context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
        bidi.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
        time.sleep(0.5)  # the shim content script is injected at document_idle
        set_algorithm(bidi, context, "semantic")

        # Reader view settings persist across presses.
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'reader'", "the reader view")
        ui_click(bidi, context, ".bar [data-action=larger]")
        ui_click(bidi, context, ".bar [data-action=theme]")
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'reader'", "the reader view")
        look = ui_eval(bidi, context, "(root) => { const r = root.querySelector('.reader'); return "
                                      "[r.classList.contains('dark'), getComputedStyle(r.querySelector('article'))"
                                      ".fontSize]; }")
        assert look == [True, "22px"]
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")

        # Debugger: candidates of several algorithms (chosen with the keyboard); a hovered candidate is outlined.
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
        ui_click(bidi, context, "button[data-mode=debugger]")
        _wait(bidi, context, f"{STAGE} === 'debugger'", "the debugger", timeout_s=90)
        counts = {}
        for name in ("semantic", "gce", "zoning", "r4"):
            for _ in range(20):
                steps = ui_eval(bidi, context, """(root, name) => { const s = root.querySelector('select.algo');
                    s.focus(); return [...s.options].findIndex((o) => o.value === name) - s.selectedIndex; }""", name)
                if steps == 0:
                    break
                keys(bidi, context, "ArrowDown" if steps > 0 else "ArrowUp")
            assert ui_eval(bidi, context, "(root) => root.querySelector('select.algo').value") == name
            counts[name] = ui_eval(bidi, context, "(root) => root.querySelectorAll('ol.cands li').length")
        assert sum(1 for c in counts.values() if c) >= 2, counts
        ui_click(bidi, context, "ol.cands li", click=False)
        hovered = ff_wait(bidi, context, "(root) => root.querySelectorAll('.layer[data-layer=hover] .box').length",
                          "the hover outline")
        assert hovered >= 1
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")

        # Annotator: click in the <h1>, grow to <main> with a key, save under a name.
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
        ui_click(bidi, context, "button[data-mode=annotate]")
        _wait(bidi, context, f"{STAGE} === 'annotate'", "the annotator")
        h1 = bidi.evaluate(context, "(() => { const r = document.querySelector('#content h1').getBoundingClientRect();"
                                    " return [r.left + 12, r.top + r.height / 2]; })()")
        mouse(bidi, context, h1[0], h1[1])
        keys(bidi, context, "ArrowUp")
        status = ui_eval(bidi, context, "(root) => root.querySelector('.panel.annot .status').textContent")
        assert status.startswith("selected <main#content>"), status
        ui_click(bidi, context, "input.annotator")
        keys(bidi, context, "bob")
        ui_click(bidi, context, "button.save")
        saved = ff_wait(bidi, context, "(root) => { const t = root.querySelector('.panel.annot .status').textContent;"
                                       " return t.startsWith('Saved') || t.startsWith('not') ? t : null; }",
                        "the saved label")
        assert saved == "Saved label #1 (1 node(s))"
        rows = list_labels(centrum_home / "labels.sqlite3")
        assert [(r["annotator"], r["url"]) for r in rows] == [("bob", url)]
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")
