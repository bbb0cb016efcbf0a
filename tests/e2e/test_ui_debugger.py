"""Candidate debugger in Chromium, end to end: from the highlight, the "Debugger" button runs every
algorithm on one snapshot through the real host and lists each one's answer and candidates with scores; hovering a
candidate outlines its elements on the page; switching algorithm re-highlights; every algorithm's overlays are
drawn from its typed list (Result.overlays) by the same rules; parameters are edited and re-run on the same snapshot
(no new collection); collection, transfer and host timings are shown."""

from __future__ import annotations

import re
from typing import Any

import pytest
from helpers.chromium_ui import (
    Session,
    extract_ok_lines,
    shot,
    ui_click,
    ui_eval,
    ui_fill,
    ui_hover,
    ui_select,
    ui_wait,
    wait_stage,
)
from playwright.sync_api import Page

PANEL = ".panel.debugger"
OVERLAY_KINDS = {"answer", "candidate", "removed", "region", "point"}


def panel(page: Page) -> dict[str, Any]:
    out: dict[str, Any] = ui_eval(page, """(s) => {
        const p = s.querySelector('.panel.debugger');
        const boxes = (layer, sel = '.box') => [...s.querySelectorAll(`.layer[data-layer="${layer}"] ${sel}`)].map(
            (b) => ({node: b.dataset.node ?? null, kind: b.dataset.kind ?? null, cls: b.className, label: b.textContent,
                     rect: [parseFloat(b.style.left), parseFloat(b.style.top), parseFloat(b.style.width),
                            parseFloat(b.style.height)]}));
        return {selected: p.querySelector('select.algo').value,
                options: [...p.querySelectorAll('select.algo option')].map(o => o.value),
                timing: p.querySelector('.timing').textContent, answer: p.querySelector('.answer').textContent,
                candidates: [...p.querySelectorAll('ol.cands li')].map(li => li.textContent),
                status: p.querySelector('.status').textContent,
                answerBoxes: boxes('answer'), hover: boxes('hover'), overlay: boxes('overlay')};
    }""")
    return out


def choose(page: Page, name: str) -> dict[str, Any]:
    ui_select(page, f"{PANEL} select.algo", name)
    return panel(page)


def doc_rect(page: Page, selector: str) -> list[float]:
    out: list[float] = page.evaluate("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }""", selector)
    return out


def open_debugger(ui: Session, page: Page) -> dict[str, Any]:
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui_click(page, ".toast button[data-mode='debugger']")
    wait_stage(ui, page, "debugger", timeout_s=60)
    return panel(page)


def test_debugger_lists_candidates_outlines_and_overlays(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/article.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    p = open_debugger(ui, page)
    assert {"semantic", "gce", "zoning", "r4", "danag", "ensemble"} <= set(p["options"])
    assert p["selected"] == "semantic"  # the algorithm of the settings
    # Timings of collection, transfer and host, as numbers.
    m = re.fullmatch(r"collect ([\d.]+) ms · transfer ([\d.]+) ms · host ([\d.]+) ms", p["timing"])
    assert m, p["timing"]
    assert float(m[1]) > 0 and float(m[3]) > 0

    # The semantic answer (<article>) is outlined where the article is.
    story = doc_rect(page, "#story")
    assert [b["rect"] for b in p["answerBoxes"]] == [pytest.approx(story, abs=1)]

    # Candidates of at least two algorithms, with scores.
    with_candidates = []
    for name in ("gce", "zoning", "r4"):
        q = choose(page, name)
        assert q["selected"] == name
        if q["candidates"]:
            with_candidates.append(name)
            assert re.match(r"-?[\d.]+", q["candidates"][0]), q["candidates"][0]
    assert len(with_candidates) >= 2, with_candidates

    # Hovering a candidate outlines exactly its elements; leaving removes the outline.
    q = choose(page, with_candidates[0])
    ui_hover(page, f"{PANEL} ol.cands li")
    assert " = " in (ui_eval(page, f"(s) => s.querySelector('{PANEL} ol.cands li').title") or "")  # its features
    hovered = panel(page)["hover"]
    assert hovered and all(b["node"] is not None for b in hovered)
    ui_hover(page, f"{PANEL} h2")
    assert panel(page)["hover"] == []

    # Switching algorithm re-highlights: R4's answer boxes are its own nodes, not semantic's article.
    r4 = choose(page, "r4")
    assert r4["answerBoxes"] and {b["node"] for b in r4["answerBoxes"]} != {b["node"] for b in p["answerBoxes"]}
    # Every algorithm's overlays come from its result's typed list, drawn by kind with the same rules.
    kinds = lambda q: {c for b in q["overlay"] for c in b["cls"].split() if c in OVERLAY_KINDS}  # noqa: E731
    cands = [b for b in r4["overlay"] if "candidate" in b["cls"].split()]
    assert cands and all(re.search(r"(c-SET #\d+|rank \d+) <\w+> \([\d.]+\)", b["label"]) for b in cands)
    assert {"answer", "candidate"} <= kinds(r4)

    gce = choose(page, "gce")
    cells = [b for b in gce["overlay"] if b["label"].startswith("cell ")]
    assert cells and any("excluded: " in b["label"] for b in cells)
    assert all(("removed" in b["cls"].split()) == ("excluded: " in b["label"]) for b in cells)
    points = {b["label"] for b in gce["overlay"] if b["kind"] == "point"}
    assert {"C_w", "C_d", "C1", "C2", "C3"} <= points
    assert any(b["label"].startswith("E1 (distance ") for b in gce["overlay"])
    assert {"answer", "candidate", "region", "point"} <= kinds(gce)
    shot(page, "debugger-gce.png")

    zoning = choose(page, "zoning")
    assert any(b["kind"] == "region" and re.match(r"zone \d+ score ", b["label"]) for b in zoning["overlay"])
    assert any(b["kind"] == "candidate" and re.match(r"column \d+ \(", b["label"]) for b in zoning["overlay"])
    shot(page, "debugger.png")

    # The ensemble's block filter: every block of its chosen candidate outlined, kept or dropped, with its score.
    ens = choose(page, "ensemble")
    blocks = [b for b in ens["overlay"] if b["label"].startswith("block ")]
    assert blocks and all(re.match(r"block (kept|dropped): .*\(-?[\d.]+\)$", b["label"], re.S) for b in blocks)
    assert any("kept" in b["label"] for b in blocks)
    assert all(("removed" in b["cls"].split()) == b["label"].startswith("block dropped") for b in blocks)
    # The toggle names what is drawn, by kind.
    assert re.search(r"overlay \(\d+ (region|removed|candidate)", ui_eval(
        page, f"(s) => s.querySelector('{PANEL} input.overlay-toggle').parentElement.textContent"))

    # Overlay off: nothing drawn but the answer.
    ui_click(page, f"{PANEL} input.overlay-toggle")
    assert panel(page)["overlay"] == []
    ui_click(page, f"{PANEL} input.overlay-toggle")
    assert panel(page)["overlay"]

    ui.press(page)  # the next press restores the page
    wait_stage(ui, page, None)
    assert page.evaluate("() => document.querySelector('centrum-ui')") is None


def test_hovered_outline_matches_the_element(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/article.html")
    open_debugger(ui, page)
    # R4 lists its c-SET nodes one by one: each hovered box sits exactly on a live element of the article.
    choose(page, "r4")
    count = ui_eval(page, f"(s) => s.querySelectorAll('{PANEL} ol.cands li').length")
    assert count >= 2
    for i in range(count):
        ui_hover(page, f"{PANEL} ol.cands li:nth-child({i + 1})")
        hovered = panel(page)["hover"]
        assert hovered
        for b in hovered:
            live = page.evaluate("""(id) => {
                // The collector numbers elements in DOM pre-order (document order for a page without shadow roots).
                const all = [document.documentElement, ...document.documentElement.querySelectorAll('*')]
                    .filter((e) => e.localName !== 'centrum-ui' && !e.closest('centrum-ui'));
                const r = all[id].getBoundingClientRect();
                return [r.left + scrollX, r.top + scrollY, r.width, r.height];
            }""", int(b["node"]))
            assert b["rect"] == pytest.approx([live[0], live[1], max(live[2], 1), max(live[3], 1)], abs=1)
    ui.press(page)
    wait_stage(ui, page, None)


def test_parameters_rerun_on_the_same_snapshot(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/article.html")
    open_debugger(ui, page)
    p = choose(page, "semantic")
    assert p["answer"].startswith("answer: 1 node(s) (article)")
    extracts_before = len(extract_ok_lines((ui.home / "host.log").read_text()))

    # The page changes after the analysis: the sidebar disappears. A re-run that collected again would not find it;
    # the re-run on the kept snapshot does (its element is gone, so the panel names it by node id).
    page.evaluate("() => document.getElementById('side').remove()")
    ui_fill(page, f"{PANEL} textarea.params", '{"tags": ["aside"]}')
    ui_click(page, f"{PANEL} button.rerun")
    ui_wait(page, "(s) => s.querySelector('.panel.debugger .status').textContent.startsWith('re-ran')")
    q = panel(page)
    assert q["status"] == "re-ran semantic on the same snapshot"
    assert re.fullmatch(r"answer: 1 node\(s\) \(\d+\)", q["answer"]), q["answer"]
    assert "re-collected" not in q["timing"] and q["timing"].startswith("collect 0.000 ms")
    assert len(extract_ok_lines((ui.home / "host.log").read_text())) == extracts_before + 1

    # A bad parameter: the host's E_PARAMS is shown in the panel, the panel keeps working.
    ui_fill(page, f"{PANEL} textarea.params", '{"no_such_param": 1}')
    ui_click(page, f"{PANEL} button.rerun")
    ui_wait(page, "(s) => s.querySelector('.panel.debugger .status').textContent.startsWith('E_PARAMS')")
    ui_fill(page, f"{PANEL} textarea.params", "{not json")
    ui_click(page, f"{PANEL} button.rerun")
    assert panel(page)["status"].startswith("parameters are not valid JSON")
    ui.press(page)
    wait_stage(ui, page, None)


def test_debugger_from_nothing_found(ui: Session, server: str) -> None:
    # The semantic baseline finds nothing on a page without <main>/<article>: no reader to offer, but the debugger
    # (what did the others find?) and the annotator are.
    page = ui.open(f"{server}/plain.html")
    ui.press(page)
    ui_wait(page, "(s) => !!s?.querySelector('.toast.error .modes')")
    modes = ui_eval(page, "(s) => [...s.querySelectorAll('.toast .modes button')].map(b => b.dataset.mode)")
    assert modes == ["debugger", "annotate"]
    ui_click(page, ".toast button[data-mode='debugger']")
    wait_stage(ui, page, "debugger", timeout_s=60)
    p = panel(page)
    assert p["answer"].startswith("no answer: ") and "<main>" in p["answer"]
    assert any(choose(page, name)["answerBoxes"] for name in ("zoning", "r4", "gce"))
    ui.press(page)
    wait_stage(ui, page, None)
    assert page.evaluate("() => document.querySelector('centrum-ui')") is None
