"""A hostile page in the reader view (issues #9 and #10): inside the article it has scripts, inline handlers of many
kinds, javascript:/data:/vbscript: URLs (some obfuscated with case, whitespace and entities), iframes (srcdoc and
remote), object/embed, SVG with script, a form, a <base> pointing elsewhere, a meta refresh, inline styles and a
style sheet aimed at the reader. The reader view (in the page and in its own tab) must show the article's text and
none of these, and no page code may run because of it (counters the handlers would bump stay put)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page
from test_extension_chromium import Session
from test_ui_reader import GLACIER_SVG, shot, storage, wait_stage

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
    r: dict[str, Any] = page.evaluate("""() => {
        const rd = document.querySelector('centrum-ui').shadowRoot.querySelector('.reader');
        const art = rd.querySelector('article');
        const host = document.querySelector('centrum-ui');
        const mid = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
        return {html: art.innerHTML, text: rd.innerText,
                visible: getComputedStyle(host).display !== 'none' && getComputedStyle(host).opacity === '1'
                         && mid === host,
                links: [...art.querySelectorAll('a')].map(a => a.getAttribute('href')),
                images: [...art.querySelectorAll('img')].map(i => i.getAttribute('src')),
                attrs: [...new Set([...art.querySelectorAll('*')].flatMap(e => e.getAttributeNames()))].sort()};
    }""")
    shot(page, "reader-hostile.png")
    assert r["visible"]  # the page's style sheet aimed at the reader does not reach into its shadow root
    check_clean(r["html"], r["text"], r["links"], r["images"])
    allowed = {"href", "src", "alt", "lang", "dir", "title", "colspan", "rowspan", "datetime", "start", "width",
               "height", "rel", "loading", "class", "open"}
    assert set(r["attrs"]) <= allowed, set(r["attrs"]) - allowed

    # Moving over and clicking the reader's copies runs nothing of the page's.
    copies = page.locator("centrum-ui .reader article .content")
    for target in (copies.locator("h1").first, copies.locator("p").first, copies.locator("p").last):
        target.hover()
    page.locator("centrum-ui .reader article .content p").first.click(position={"x": 5, "y": 5})
    page.locator("centrum-ui .reader article summary").click()
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
        ui.press(page)
        wait_stage(ui, page, "highlight")
        with ui.browser.contexts[0].expect_page(timeout=30_000) as opened:
            ui.press(page)
        tab = opened.value
        tab.wait_for_function("() => document.documentElement.dataset.ready === '1'", timeout=30_000)
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
