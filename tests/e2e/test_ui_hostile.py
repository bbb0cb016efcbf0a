"""Hostile pages against the extension in Chromium.

The reader (issues #9 and #10): inside the article a page has scripts, inline handlers of many kinds,
javascript:/data:/vbscript: URLs (some obfuscated with case, whitespace and entities), iframes (srcdoc and remote),
object/embed, SVG with script, a form, a <base> pointing elsewhere, a meta refresh, inline styles and a style sheet
aimed at the reader. The reader view (in the page and in its own tab) must show the article's text and none of these,
and no page code may run because of it (counters the handlers would bump stay put).

The panels (issue #20): a page whose own script, after the user's press, tries to open the annotator, select nodes
and save labels (synthetic clicks and keys, postMessage, every element's shadow root, DOM methods overridden before
the press) changes nothing and finds no extension UI, while the user's own clicks and keys save exactly one label.
Page elements named like the extension's globals do not stop it, hidden text stays out of the reader, and text that
spells node ids does not move DANA's answer."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from helpers.chromium_ui import (
    GLACIER_SVG,
    Session,
    open_reader_tab,
    shot,
    storage,
    ui_click,
    ui_eval,
    ui_hover,
    ui_wait,
    wait_stage,
)
from helpers.hidden_tricks import HOSTILE_HIDDEN, check_hidden
from playwright.sync_api import Page

from centrum.algorithms import dana
from centrum.annotation.labels import list_labels
from centrum.core.snapshot import parse_snapshot

FIXTURE_PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"
HOSTILE_FILES = ("hostile-ui.html", "hostile-names.html", "hostile-chrome.html", "hostile-hidden.html",
                 "hostile-source.html")

HOSTILE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Totally normal news</title>
<style>.reader, centrum-ui, html > centrum-ui:last-child { display: none !important; opacity: 0 !important }
p { color: red }</style>
<script>window.__runs = 0; window.__bump = (why) => { window.__runs++; (window.__why = window.__why || []).push(why) };
</script></head><body>
<nav id="nav"><a href="/">Home</a></nav>
<article id="story"><h1 onmouseover="__bump('h1')">Harmless headline</h1>
<p id="p1" onclick="__bump('p-click')" style="background:url(javascript:__bump('css'))">First paragraph with
<a id="l1" href="javascript:__bump('js-link')">a script link</a>,
<a id="l2" href=" JaVaScRiPt:__bump('js-link-2')">an obfuscated one</a>,
<a id="l3" href="jav&#x09;ascript:__bump('js-link-3')">an entity one</a>,
<a id="l4" href="data:text/html,<script>alert(1)</script>">a data link</a>,
<a id="l5" href="vbscript:msgbox(1)">a vbscript link</a> and
<a id="l6" href="https://example.org/ok" onclick="__bump('a-click')" target="_top">a fine link</a>.</p>
<script>__bump('inline-script-in-article')</script>
<img id="i1" src="/nope.png" onerror="__bump('img-onerror')" alt="broken">
<img id="i2" src="javascript:__bump('img-js')" alt="js image">
<img id="i3" src="/pic.svg" onload="__bump('img-onload')" alt="a picture">
<iframe src="/frame.html"></iframe><iframe srcdoc="<script>parent.__bump('srcdoc')</script>"></iframe>
<object data="/frame.html"></object><embed src="/frame.html">
<svg onload="__bump('svg')"><script>__bump('svg-script')</script><a href="javascript:__bump('svg-a')"><text>svg text
</text></a></svg>
<form action="javascript:__bump('form')"><input value="typed" onfocus="__bump('input')"><button>Send</button></form>
<details open ontoggle="__bump('toggle')"><summary>More</summary><p>Inside details.</p></details>
<video src="/v.mp4" onloadstart="__bump('video')"></video>
<p id="p2" onpointerenter="__bump('pointer')">Second paragraph, the end of the story.</p>
<noscript><p>noscript text</p></noscript>
<template><p>template text</p></template>
<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=javascript:__bump('refresh')">
<math><mtext onclick="__bump('math')">math text</mtext></math>
</article>
<footer id="foot">Footer.</footer>
</body></html>"""

FRAME = "<!doctype html><script>parent.__bump && parent.__bump('frame')</script><p>frame text</p>"

PAGES = {
    "/hostile.html": ("text/html; charset=utf-8", HOSTILE),
    "/frame.html": ("text/html; charset=utf-8", FRAME),
    "/pic.svg": ("image/svg+xml", GLACIER_SVG),
    **{f"/{name}": ("text/html; charset=utf-8", (FIXTURE_PAGES / name).read_text()) for name in HOSTILE_FILES},
}

FORBIDDEN = ("<script", "<iframe", "<object", "<embed", "<svg", "<math", "<form", "<input", "<button", "<video",
             "<base", "<meta", "<style", "<noscript", "<template", "javascript:", "vbscript:", "data:text", "srcdoc",
             "style=", "onclick", "onerror", "onload", "onmouseover", "onpointerenter", "ontoggle", "onfocus",
             "target=")


# Chromium's autofill adds an empty style="" to the form's <input> at some point after load, with or without the
# extension (seen without any press): that one attribute is left out of the comparison.
OUTER = """() => document.documentElement.outerHTML.replace(/(<input[^>]*?) style=""/, '$1')"""




def runs(page: Page) -> tuple[int, list[str]]:
    out: tuple[int, list[str]] = tuple(page.evaluate("() => [window.__runs, window.__why || []]"))  # type: ignore[assignment]
    return out


def check_clean(html: str, text: str, links: list[str | None], images: list[str]) -> None:
    lowered = html.lower()
    for bad in FORBIDDEN:
        assert bad not in lowered, bad
    for needle in ("Harmless headline", "First paragraph", "a script link", "a fine link", "Second paragraph",
                   "Inside details."):
        assert needle in text, needle
    for gone in ("frame text", "svg text", "noscript text", "template text", "math text", "typed", "Send",
                 "Footer."):
        assert gone not in text, gone
    # Only the http(s) link keeps an address; the other links keep their words, lose their href.
    assert links == [None, None, None, None, None, "https://example.org/ok"]
    assert all(src.startswith("http://127.0.0.1:") for src in images)
    assert any(src.endswith("/pic.svg") for src in images)


def test_hostile_article_in_the_reader(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/hostile.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)  # the page's own handlers (img onerror/onload, frames) have run by now
    before = runs(page)
    outer = page.evaluate(OUTER)

    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    page.wait_for_timeout(500)  # give any copied handler (image load/error, toggles) the chance to fire
    visible = page.evaluate("""() => {
        const host = document.querySelector('centrum-ui');
        const mid = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
        return getComputedStyle(host).display !== 'none' && getComputedStyle(host).opacity === '1' && mid === host;
    }""")
    r: dict[str, Any] = ui_eval(page, """(root) => {
        const rd = root.querySelector('.reader');
        const art = rd.querySelector('article');
        return {html: art.innerHTML, text: rd.innerText,
                links: [...art.querySelectorAll('a')].map(a => a.getAttribute('href')),
                images: [...art.querySelectorAll('img')].map(i => i.getAttribute('src')),
                attrs: [...new Set([...art.querySelectorAll('*')].flatMap(e => e.getAttributeNames()))].sort()};
    }""")
    shot(page, "reader-hostile.png")
    assert visible  # the page's style sheet aimed at the reader does not reach into its shadow root
    check_clean(r["html"], r["text"], r["links"], r["images"])
    allowed = {"href", "src", "alt", "lang", "dir", "title", "colspan", "rowspan", "datetime", "start", "width",
               "height", "rel", "loading", "class", "open"}
    assert set(r["attrs"]) <= allowed, set(r["attrs"]) - allowed

    # Moving over and clicking the reader's copies runs nothing of the page's.
    for target in ("h1", "p", "p:last-of-type"):
        ui_hover(page, f".reader article .content {target}")
    ui_click(page, ".reader article .content p", (5, 5))
    ui_click(page, ".reader article summary")
    page.wait_for_timeout(300)
    assert runs(page) == before
    assert page.url == f"{server}/hostile.html"

    ui.press(page)
    wait_stage(ui, page, None)
    assert page.evaluate(OUTER) == outer


def test_hostile_article_in_the_reader_tab(ui: Session, server: str) -> None:
    ui.set_storage({"readerIn": "tab"})
    try:
        page = ui.open(f"{server}/hostile.html")
        page.wait_for_load_state("load")
        tab = open_reader_tab(ui, page)
        r: dict[str, Any] = tab.evaluate("""() => {
            const art = document.querySelector('.reader article');
            return {html: art.innerHTML, text: document.querySelector('.reader').innerText,
                    links: [...art.querySelectorAll('a')].map(a => a.getAttribute('href')),
                    images: [...art.querySelectorAll('img')].map(i => i.getAttribute('src'))};
        }""")
        check_clean(r["html"], r["text"], r["links"], r["images"])
        assert not [k for k in storage(ui) if k.startswith("reader:")]
        tab.close()
    finally:
        ui.set_storage({"readerIn": "page"})


# ---- a page script against the panels (issue #20) ------------------------------------------------------------------


def labels(session: Session) -> list[dict[str, Any]]:
    db = session.home / "labels.sqlite3"
    return list_labels(db) if db.exists() else []


def attack(page: Page) -> dict[str, Any]:
    out: dict[str, Any] = page.evaluate("""() => { const a = window.__attack;
        return {rounds: a.rounds, clicks: a.clicks, keys: a.keys, posted: a.posted, roots: a.roots.length,
                found: a.found, ownCalls: a.ownCalls, typed: a.typed, runtime: a.runtime}; }""")
    return out


def annot_status(page: Page) -> dict[str, Any]:
    out: dict[str, Any] = ui_eval(page, """(s) => { const p = s.querySelector('.panel.annot');
        return {status: p.querySelector('.status').textContent, picked: p.querySelectorAll('ol.picked li').length,
                name: p.querySelector('input.annotator').value}; }""")
    return out


def let_the_page_try(page: Page, seconds: float = 1.5) -> int:
    """Give the page's attack loop (every 40 ms) time; returns the number of rounds it ran meanwhile."""
    before = attack(page)["rounds"]
    time.sleep(seconds)
    return attack(page)["rounds"] - before


def test_page_script_cannot_drive_the_panels(ui: Session, server: str) -> None:
    url = f"{server}/hostile-ui.html"
    page = ui.open(url)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_load_state("load")
    count = len(labels(ui))
    ui.set_storage({"annotatorName": ""})

    # After the user's press the page clicks every button it can reach, every point of the screen, and sends keys
    # and messages: the mode buttons of the message do not open the annotator or the debugger.
    ui.press(page)
    wait_stage(ui, page, "highlight")
    assert let_the_page_try(page) > 10
    assert page.evaluate("() => document.documentElement.getAttribute('data-centrum-stage')") == "highlight"

    # The user opens the annotator; the page keeps clicking words, pressing Enter / ArrowUp / s and posting
    # label messages: nothing is selected, nothing saved.
    ui_click(page, ".toast button[data-mode='annotate']")
    wait_stage(ui, page, "annotate")
    assert let_the_page_try(page) > 10
    a = annot_status(page)
    assert a == {"status": "click a word inside the main content", "picked": 0, "name": ""}, a
    assert len(labels(ui)) == count

    # What the page got for its trouble: no shadow root, no text of the UI, none of the extension's DOM calls went
    # through its overridden attachShadow / addEventListener / querySelector / createElement (the content scripts
    # run in their own world), no runtime to message the background with.
    seen = attack(page)
    assert seen["clicks"] > 100 and seen["keys"] > 100 and seen["posted"] > 30
    assert seen["roots"] == 0 and seen["found"] == [] and seen["ownCalls"] == [] and not seen["runtime"], seen
    assert page.evaluate("""() => [...document.querySelectorAll('*')].every((e) => e.localName !== 'centrum-ui'
        || (e.shadowRoot === null && e.childNodes.length === 0))""")

    # The user: a click on a word, Enter, a name typed key by key (with an "s", the save key, which the panel's
    # field keeps), a click on Save. Exactly one label.
    page.locator("#p1").click(position={"x": 12, "y": 8})
    page.keyboard.press("Enter")
    assert annot_status(page)["picked"] == 1
    ui_click(page, ".panel.annot input.annotator")
    page.keyboard.type("carlos")
    assert annot_status(page)["name"] == "carlos"
    ui_click(page, ".panel.annot button.save")
    ui_wait(page, "(s) => s.querySelector('.panel.annot .status').textContent.startsWith('Saved label #')")
    saved = labels(ui)
    assert len(saved) == count + 1 and saved[-1]["annotator"] == "carlos"
    # The page's bubbling key listener never saw the name being typed.
    assert not set("carlos") & set(attack(page)["typed"]), attack(page)["typed"]

    # The page goes on after the save: still one label.
    assert let_the_page_try(page) > 10
    assert len(labels(ui)) == count + 1
    assert attack(page)["found"] == [] and attack(page)["roots"] == 0

    ui.press(page)
    wait_stage(ui, page, None)


def send(page: Page, message: Any) -> Any:
    """A runtime message from the extension's own content-script world (what a confused or subverted panel could
    relay): the background checks it whatever it is."""
    return ui_eval(page, "(root, m) => chrome.runtime.sendMessage(m)", message)


def test_background_checks_what_the_content_script_relays(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/hostile-hidden.html")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    count = len(labels(ui))
    bad = [
        {"type": "centrum.label", "annotator": "x", "nodes": [1]},  # the annotator is not open
        {"type": "centrum.nope"},
        {"type": "centrum.open", "mode": "settings"},
        {"type": "centrum.open", "mode": "annotate", "extra": 1},
        {"type": "centrum.rerun", "algorithm": "../../etc/passwd"},
        {"type": "centrum.rerun", "algorithm": "semantic", "params": [1, 2]},
        {"type": "centrum.rerun", "algorithm": "semantic", "params": {"x": "y" * 70_000}},
        "centrum.label",
    ]
    for message in bad:
        answer = send(page, message)
        assert answer and answer["error"]["code"] == "E_REQUEST", (message, answer)
    assert page.evaluate("() => document.documentElement.getAttribute('data-centrum-stage')") == "highlight"

    ui_click(page, ".toast button[data-mode='annotate']")
    wait_stage(ui, page, "annotate")
    for message in [
        {"type": "centrum.label", "annotator": "", "nodes": [1]},
        {"type": "centrum.label", "annotator": "bad\u0000name", "nodes": [1]},
        {"type": "centrum.label", "annotator": "x" * 201, "nodes": [1]},
        {"type": "centrum.label", "annotator": "x", "nodes": []},
        {"type": "centrum.label", "annotator": "x", "nodes": [1, 1]},
        {"type": "centrum.label", "annotator": "x", "nodes": [-1]},
        {"type": "centrum.label", "annotator": "x", "nodes": [1.5]},
        {"type": "centrum.label", "annotator": "x", "nodes": ["1"]},
        {"type": "centrum.label", "annotator": "x", "nodes": [10**6]},  # beyond the snapshot's elements
        {"type": "centrum.label", "annotator": "x", "nodes": [1], "snapshot": {}},
    ]:
        answer = send(page, message)
        assert answer and answer["error"]["code"] == "E_REQUEST", (message, answer)
    assert len(labels(ui)) == count
    # A well-formed relay is served (the checks refuse shapes, not the feature).
    answer = send(page, {"type": "centrum.label", "annotator": "checker", "nodes": [1]})
    assert "label_id" in answer, answer
    assert len(labels(ui)) == count + 1
    ui.press(page)
    wait_stage(ui, page, None)


def read_page(ui: Session, page: Page) -> str:
    """Press twice and return the in-page reader's text."""
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    text: str = ui_eval(page, "(root) => root.querySelector('.reader').innerText")
    ui.press(page)
    wait_stage(ui, page, None)
    return text


def test_page_names_do_not_stop_the_extension(ui: Session, server: str) -> None:
    # id="centrumView"/"centrumClean"/"centrumNodes"/"browser" (twice), a form with controls named "runtime" and
    # "shadowRoot", a frame named "centrumCollect": named window properties, visible in the content scripts' world.
    page = ui.open(f"{server}/hostile-names.html")
    page.wait_for_load_state("load")
    assert page.evaluate("() => [typeof window.centrumView, window.browser.length]") == ["object", 2]
    assert ui_eval(page, "() => String(globalThis.browser)") is None  # nothing injected before the press
    text = read_page(ui, page)
    assert "The names page" in text and "A second paragraph of the story" in text
    assert "a div named" not in text
    # In the extension's world `browser` is the page's elements, yet the panels reach the extension (the annotator
    # opens through a runtime message).
    assert ui_eval(page, "() => String(globalThis.browser)") == "[object HTMLCollection]"
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui_click(page, ".toast button[data-mode='annotate']")
    wait_stage(ui, page, "annotate")
    ui.press(page)
    wait_stage(ui, page, None)


def test_forms_named_chrome_and_browser_are_reported_not_fatal(ui: Session, server: str) -> None:
    # Chromium makes the page's window.chrome and window.browser (two forms) the API objects of the content scripts'
    # world; their controls named "runtime" hide runtime. The panels cannot reach the extension and say so;
    # highlight and reader view work.
    page = ui.open(f"{server}/hostile-chrome.html")
    text = read_page(ui, page)
    assert "The form page" in text and "shadow the extension's namespaces" in text
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui_click(page, ".toast button[data-mode='annotate']")
    ui_wait(page, "(s) => s.querySelector('.toast[role=alert]')?.textContent.includes('E_PAGE')")
    assert "cannot reach Centrum here" in ui_eval(page, "(s) => s.querySelector('.toast').textContent")
    ui.press(page)  # clears the message and analyses again
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    ui.press(page)
    wait_stage(ui, page, None)


def test_hidden_text_stays_out_of_the_reader(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/hostile-hidden.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    text = read_page(ui, page)
    check_hidden(text, HOSTILE_HIDDEN)


def collect_here(page: Page) -> dict[str, Any]:
    """A snapshot with source, made by the extension's collector in the extension's world on this page."""
    out: dict[str, Any] = ui_eval(page, "() => globalThis.centrumCollect({source: true})")
    return out


def test_forged_node_ids_do_not_move_dana(ui: Session, server: str) -> None:
    answers = {}
    for query in ("", "?control"):
        page = ui.open(f"{server}/hostile-source.html{query}")
        page.wait_for_load_state("load")
        ui.press(page)  # injects the collector
        wait_stage(ui, page, "highlight")
        raw = collect_here(page)
        source = raw["source"]
        n = parse_snapshot(raw).n  # the parent column may travel packed (PROTOCOL.md "Packed columns")
        # Every element's id appears once, in order, and nothing else spells one: no script, style, comment,
        # template or attribute of the page ends early or passes for an id.
        assert [int(i) for i in re.findall(r' data-cx="(\d+)"', source)] == list(range(n))
        if not query:
            assert page.evaluate("() => document.documentElement.dataset.forged") == "yes"
            assert "&lt;/script><p data-cx&#61;\"2\">" in source and "--&gt;<p data-cx&#61;\"2\">" in source
            assert "<!--&gt;early end" in source
        result = dana.run(parse_snapshot(raw), variant="danag")
        assert result.nodes, result.message
        story = page.evaluate("""() => [document.documentElement, ...document.documentElement.querySelectorAll('*')]
            .filter((e) => !e.closest('centrum-ui')).indexOf(document.getElementById('story'))""")
        answers[query] = (result.nodes, story)
        ui.press(page)  # reader
        wait_stage(ui, page, "reader")
        ui.press(page)
        wait_stage(ui, page, None)
    # The same elements either way, inside the story.
    assert answers[""] == answers["?control"], answers
