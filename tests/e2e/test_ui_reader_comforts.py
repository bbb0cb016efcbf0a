"""Reader view comforts in Debian's Chromium, end to end with the real host: the header with the page's metadata
(title without the site suffix, site, byline, date, reading time), Esc back to the page, "Copy as Markdown" (also on
a page that is not a secure context: a test host name mapped to 127.0.0.1, which itself counts as secure), "Save"
as HTML and as Markdown through a blob link, ARIA headings kept as headings, CJK typography for a page without
``lang``, and print styles that print the article only. The Markdown and HTML are the host's (PROTOCOL.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.chromium_ui import (
    GLACIER_SVG,
    Session,
    open_reader_tab,
    shot,
    stage,
    ui_click,
    ui_eval,
    ui_session,
    ui_wait,
    wait_stage,
)
from helpers.reader_probes import HEAD, open_reader, read_clipboard, status
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Playwright

TEST_HOST = "reader.test"  # resolved to 127.0.0.1 by the browser only (--host-resolver-rules)

NEWS = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Harbour reopens after two years | Coast News</title>
<meta property="og:site_name" content="Coast News">
<meta name="author" content="Ana Lima">
<meta property="article:published_time" content="2026-11-20T08:30:00Z">
<meta property="og:image" content="/lead.svg">
<style>body { font: 16px sans-serif; margin: 0 } nav, footer { padding: 10px; background: #eee }</style>
</head><body>
<nav id="nav"><a href="/">Home</a> <a href="/sport">Sport</a></nav>
<article id="story">
<p>After two years of works the old harbour reopened on Saturday 20 November 2026, and the fishermen were the first to
moor their boats in the renovated basin while a large crowd watched from the quay.</p>
<div role="heading" aria-level="2" id="sub">The first boats</div>
<p>The harbour master said the new quay can take twice as many boats as the old one, and that the ferry to the
islands will call again from next spring.</p>
<pre><code>depth = 4.5  # metres at low tide
	tabbed = True</code></pre>
</article>
<footer id="foot">Footer, copyright and contact.</footer>
<script>
  // The page listens for keys as many pages do: it must not see the reader's Esc.
  window.__keys = [];
  document.addEventListener('keydown', (e) => window.__keys.push(e.key));
</script>
</body></html>"""

# Chinese without any lang attribute: the reader chooses CJK typography from the characters.
ZH = """<!doctype html><html><head><meta charset="utf-8"><title>港口重新开放</title></head><body>
<article id="story"><h1>港口重新开放</h1>
<p>经过两年的施工，老港口在星期六重新开放。渔民们第一个把船停靠在新修的码头上，很多人在岸边观看。</p>
<p>港务长说，新码头可以停靠的船只是旧码头的两倍，通往岛屿的渡轮明年春天将恢复停靠。</p></article>
</body></html>"""

# A page script that tries to drive the reader: untrusted Esc key events, clicks on whatever it can find, a look
# into every shadow root. It must change nothing and find nothing.
HOSTILE = NEWS.replace("</body>", """<script>
  window.__attack = {rounds: 0, found: []};
  setInterval(() => {
    window.__attack.rounds++;
    for (const t of [window, document, document.documentElement, document.querySelector('centrum-ui')]) {
      if (t) t.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true, composed: true}));
    }
    const ui = document.querySelector('centrum-ui');
    if (ui && ui.shadowRoot) window.__attack.found.push('shadowRoot');
    for (const b of document.querySelectorAll('button, [data-action]')) {
      window.__attack.found.push(b.outerHTML);
      b.click();
    }
  }, 20);
</script></body>""")

FIXTURE_PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"

PAGES: dict[str, tuple[str, str]] = {
    "/pages/lazy-images.html": ("text/html; charset=utf-8", (FIXTURE_PAGES / "lazy-images.html").read_text("utf-8")),
    "/hostile.html": ("text/html; charset=utf-8", HOSTILE),
    "/news.html": ("text/html; charset=utf-8", NEWS),
    "/zh.html": ("text/html; charset=utf-8", ZH),
    "/lead.svg": ("image/svg+xml", GLACIER_SVG),
    "/blank.html": ("text/html; charset=utf-8", "<!doctype html><title>blank</title><p>clipboard reader</p>"),
}


@pytest.fixture(scope="module")
def ui(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    base = tmp_path_factory.mktemp("reader-comforts")
    yield from ui_session(playwright, base, args=(f"--host-resolver-rules=MAP {TEST_HOST} 127.0.0.1",))


def test_header_shows_the_metadata_and_esc_returns(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/news.html")
    page.set_viewport_size({"width": 1000, "height": 700})
    before = page.evaluate("() => document.documentElement.outerHTML")
    open_reader(ui, page)
    head = ui_wait(page, HEAD)
    assert head["site"] == "Coast News"
    assert head["title"] == "Harbour reopens after two years"  # without "| Coast News"
    assert head["byline"] == "Ana Lima"
    assert head["datetime"] == "2026-11-20T08:30:00+00:00" and "2026" in head["date"] and "20" in head["date"]
    assert head["reading"] == "1 min read"
    assert ["h2", "The first boats"] in head["headings"]  # div role=heading aria-level=2 stays a heading
    # The hero picture (og:image) sits outside the article: the reader shows it under the header, once, loaded.
    lead = ui_wait(page, "(root) => { const i = root.querySelector('.reader figure.lead img'); "
                         "return i && i.complete ? [i.getAttribute('src'), i.naturalWidth, "
                         "root.querySelectorAll('.reader img').length] : null; }")
    assert lead == [f"{server}/lead.svg", 320, 1]
    shot(page, "reader-header.png")

    page.keyboard.press("Escape")
    wait_stage(ui, page, None)
    assert page.evaluate("() => document.querySelector('centrum-ui')") is None
    assert page.evaluate("() => window.__keys") == []  # the page never saw the Esc
    assert page.evaluate("() => document.documentElement.outerHTML") == before
    # The next press starts over.
    open_reader(ui, page)
    assert ui_wait(page, HEAD)["byline"] == "Ana Lima"
    ui.press(page)
    wait_stage(ui, page, None)


def test_cjk_typography_without_lang(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/zh.html")
    open_reader(ui, page)
    head = ui_wait(page, HEAD)
    assert "cjk" in head["cls"] and head["lang"] == ""
    # The header says the title; the content's own <h1> saying it again is left out (readerview.js dropRepeatedTitle).
    assert head["title"] == "港口重新开放" and head["headings"] == []
    assert head["reading"] == "1 min read"
    ui.press(page)
    wait_stage(ui, page, None)


def test_copy_as_markdown_on_a_page_that_is_not_a_secure_context(ui: Session, server: str) -> None:
    insecure = server.replace("127.0.0.1", TEST_HOST)
    page = ui.open(f"{insecure}/news.html")
    assert page.evaluate("() => [window.isSecureContext, typeof navigator.clipboard]") == [False, "undefined"]
    open_reader(ui, page)
    ui_click(page, ".reader .bar [data-action='copy']")
    status(page, "Copied")
    markdown = read_clipboard(ui, server)
    assert markdown.startswith("---\n") and 'author: "Ana Lima"' in markdown
    assert "## The first boats" in markdown
    assert "After two years of works the old harbour reopened" in markdown
    assert "depth = 4.5  # metres at low tide\n\ttabbed = True" in markdown  # code whitespace kept
    page.bring_to_front()
    ui.press(page)
    wait_stage(ui, page, None)


def test_copy_on_a_secure_page_too(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/news.html")
    open_reader(ui, page)
    ui.cdp.send("Browser.grantPermissions", {"origin": server, "permissions": ["clipboardReadWrite"]})
    ui_click(page, ".reader .bar [data-action='copy']")
    status(page, "Copied")
    assert "## The first boats" in read_clipboard(ui, server)
    page.bring_to_front()
    ui.press(page)
    wait_stage(ui, page, None)


@pytest.mark.parametrize(("action", "suffix"), [("save-html", ".html"), ("save-markdown", ".md")])
def test_save_as_a_file(ui: Session, server: str, tmp_path: Path, action: str, suffix: str) -> None:
    page = ui.open(f"{server}/news.html")
    open_reader(ui, page)
    with page.expect_download(timeout=30_000) as info:
        ui_click(page, f".reader .bar [data-action='{action}']")
    download = info.value
    assert download.suggested_filename == f"Harbour reopens after two years{suffix}"
    target = tmp_path / download.suggested_filename
    download.save_as(str(target))
    text = target.read_text(encoding="utf-8")
    if suffix == ".html":
        assert text.startswith("<!DOCTYPE html>") and "<title>Harbour reopens after two years</title>" in text
        assert '<meta name="author" content="Ana Lima">' in text and "The first boats" in text
        assert "<script" not in text and "Footer, copyright" not in text and "data-cx" not in text
    else:
        assert 'title: "Harbour reopens after two years"' in text and "## The first boats" in text
    status(page, "Saved")
    ui.press(page)
    wait_stage(ui, page, None)


def test_printing_gives_the_article_only(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/news.html")
    open_reader(ui, page)
    page.emulate_media(media="print")
    try:
        out: dict[str, Any] = ui_eval(page, """(root) => {
            const r = root.querySelector('.reader'), style = (el) => getComputedStyle(el);
            return {body: style(document.body).display, bar: style(r.querySelector('.bar')).display,
                    position: style(r).position, text: r.innerText};
        }""")
        assert out["body"] == "none" and out["bar"] == "none" and out["position"] == "static"
        assert "The first boats" in out["text"]
    finally:
        page.emulate_media(media="screen")
    ui.press(page)
    wait_stage(ui, page, None)
    assert stage(page) is None


def test_a_page_script_cannot_close_or_drive_the_reader(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/hostile.html")
    open_reader(ui, page)
    ui_wait(page, HEAD)
    before = page.evaluate("() => window.__attack.rounds")
    time.sleep(1.0)
    attack = page.evaluate("() => window.__attack")
    assert attack["rounds"] - before > 10 and attack["found"] == []
    assert stage(page) == "reader"  # its Esc events (isTrusted false) were ignored
    assert ui_eval(page, "(root) => root.querySelector('.reader .bar .status').textContent") == ""  # nothing copied
    page.keyboard.press("Escape")  # the user's Esc works
    wait_stage(ui, page, None)


def test_every_lazy_image_in_the_reader(ui: Session, server: str) -> None:
    """The reader resolves lazy images as the host's outputs do (tests/e2e/test_outputs.py, same fixture page): a
    lazy loader's address, the largest srcset candidate, a <picture>'s largest source, a <noscript>-only picture,
    a native lazy image never scrolled to; no tracking pixel, no hidden image, no placeholder."""
    base = f"{server}/pages/"
    page = ui.open(f"{base}lazy-images.html")
    open_reader(ui, page)
    images = ui_wait(page, "(root) => root?.querySelector('.reader .content') && [...root.querySelectorAll("
                           "'.reader .content img')].map((i) => [i.alt, i.getAttribute('src')])")
    assert images == [[alt, base + path] for alt, path in [
        ("Placeholder swapped by a script", "img/data-src.jpg"), ("Fades in when loaded", "img/fade.jpg"),
        ("Responsive sizes", "img/srcset-1600.jpg"), ("Picture element", "img/picture-large.webp"),
        ("Only in noscript", "img/noscript.jpg"), ("Native lazy loading", "img/native-lazy.jpg")]]
    # Each caption stays with its picture.
    captions = ui_eval(page, "(root) => [...root.querySelectorAll('.reader figure')].map((f) => "
                             "[f.querySelector('img')?.alt ?? null, f.querySelector('figcaption')?.textContent])")
    assert ["Only in noscript", "Five: the image exists only for browsers without scripts."] in captions
    ui.press(page)
    wait_stage(ui, page, None)


def test_reader_tab_has_the_header_and_esc_closes_it(ui: Session, server: str) -> None:
    ui.set_storage({"readerIn": "tab"})
    try:
        page = ui.open(f"{server}/news.html")
        tab = open_reader_tab(ui, page)
        assert tab.title() == "Harbour reopens after two years"
        assert tab.evaluate("() => [document.querySelector('.head .byline').textContent, "
                            "document.querySelector('.head .site').textContent]") == ["Ana Lima", "Coast News"]
        assert tab.evaluate("() => document.querySelector(\".bar [data-action='copy']\").disabled") is False
        url = tab.url
        tab.bring_to_front()  # keys go to the focused tab, as for a person
        tab.wait_for_function("() => document.hasFocus()", timeout=10_000)
        try:
            tab.keyboard.press("Escape")
        except PlaywrightError:
            pass  # the tab closed while the key press was still being reported
        # Asked of the browser: Playwright over CDP may report a tab that an extension closed seconds late.

        def open_tabs() -> list[str]:
            return [t["url"] for t in ui.cdp.send("Target.getTargets", {})["targetInfos"] if t["type"] == "page"]

        deadline = time.monotonic() + 10
        while url in open_tabs():
            assert time.monotonic() < deadline, "Esc did not close the reader tab"
            time.sleep(0.05)
    finally:
        ui.set_storage({"readerIn": "page"})
