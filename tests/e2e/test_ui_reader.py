"""Reader view of the extension in Debian's Chromium, end to end (issue #9): toolbar button -> collect.js -> real
native host -> highlight -> reader view with the article's title, text, figure image, table, working link and code
block, the rest of the page hidden -> the next press restores the page exactly. Reader settings (font size,
light/dark, where it opens) persist in chrome.storage; the reader can open in its own tab; right-to-left and CJK
pages are laid out for their script. Screenshots of the modes go to the folder CENTRUM_SCREENSHOTS names
(``docs/screenshots`` for the README), else to the run's temporary folder (conftest ``screenshot_folder``).

This file also holds the small harness the other ``test_ui_*`` files import: one Chromium per test module with the
unpacked extension and the host installed into its user-data-dir (``test_extension_chromium.launch``).
"""

from __future__ import annotations

import http.server
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright
from test_extension_chromium import Session, install_host, launch, stage, toast, ui_click, ui_eval, ui_select

from centrum.annotation.serve import loopback

REPO = Path(__file__).resolve().parents[2]

GLACIER_SVG = ("<svg xmlns='http://www.w3.org/2000/svg' width='320' height='160'><rect width='320' height='160' "
               "fill='#9cc3e6'/><path d='M0 160 L120 40 L200 110 L320 30 L320 160 Z' fill='#eef5fb'/></svg>")

ARTICLE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Glacier field notes</title>
<style>body { font: 16px sans-serif; margin: 0 } nav, footer { padding: 10px; background: #eee }
.wrap { display: flex } article { width: 700px; padding: 20px } aside { width: 300px; background: #fde }</style>
</head><body>
<nav id="nav"><a href="/">Home</a> <a href="/maps">Maps</a> <a href="/about">About</a></nav>
<div class="wrap">
<article id="story"><h1>Measuring the glacier</h1>
<p id="p1">The survey team walked the moraine at dawn, counting the stakes <a id="lnk" href="/stakes.html">set
last year</a> along the eastern flank.</p>
<figure id="fig"><img id="pic" src="/glacier.svg" alt="The glacier tongue" width="320" height="160">
<figcaption>The tongue in August.</figcaption></figure>
<p id="p2">Each stake had moved between eleven and fourteen metres downhill since the previous visit.</p>
<table id="tab"><tr><th>Stake</th><th>Metres</th></tr><tr><td>A4</td><td>11.2</td></tr></table>
<pre id="code"><code>def speed(d, t):
    return d / t</code></pre>
</article>
<aside id="side">Most read: a sidebar list.</aside>
</div>
<footer id="foot">Footer, copyright and contact.</footer>
</body></html>"""

RTL = """<!doctype html><html lang="ar" dir="rtl"><head><meta charset="utf-8"><title>أخبار الميناء</title></head>
<body><nav><a href="/">الرئيسية</a></nav><article id="story"><h1>افتتاح الميناء</h1>
<p>بعد عامين من الأعمال أعيد افتتاح الميناء القديم يوم السبت وسط حضور كبير من الصيادين.</p></article>
<footer>حقوق النشر</footer></body></html>"""

CJK = """<!doctype html><html lang="ja"><head><meta charset="utf-8"><title>港の再開</title></head>
<body><nav><a href="/">ホーム</a></nav><article id="story"><h1>港が再開した</h1>
<p>二年間の工事を終えて、古い港が土曜日に再開した。漁師たちが最初に船を新しい岸壁につないだ。</p></article>
<footer>著作権</footer></body></html>"""

# A product page whose description and care notes sit in collapsed disclosure widgets, as shops build them: a
# closed <details>, a button with aria-expanded before its hidden panel, a hidden tab panel; and a closed menu
# outside the main content, which stays out.
PRODUCT = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Trail shoe</title></head><body>
<nav><button aria-expanded="false" aria-controls="menu">Menu</button><ul id="menu" hidden><li>Hidden menu
entry</li></ul></nav>
<main id="product"><h1>Trail shoe</h1><p>A light shoe for long runs on rough ground, in three colours.</p>
<details id="det"><summary>Materials</summary><p>Upper of recycled knit, sole of natural rubber.</p></details>
<h2><button aria-expanded="false">Care</button></h2><div id="care" style="display:none"><p>Wash cold and dry flat,
away from the sun.</p></div>
<div role="tablist"><button role="tab" aria-selected="true">Sizes</button></div>
<div role="tabpanel" hidden><p>Runs small: order half a size up.</p></div>
</main><footer>Shop footer</footer></body></html>"""

PAGES: dict[str, tuple[str, str]] = {
    "/product.html": ("text/html; charset=utf-8", PRODUCT),
    "/article.html": ("text/html; charset=utf-8", ARTICLE),
    "/rtl.html": ("text/html; charset=utf-8", RTL),
    "/cjk.html": ("text/html; charset=utf-8", CJK),
    "/glacier.svg": ("image/svg+xml", GLACIER_SVG),
    "/plain.html": ("text/html; charset=utf-8", "<!doctype html><html lang=\"en\"><head><title>Plain</title></head>"
                    "<body><div id=\"content\"><p>A page without main or article elements, only a div with a "
                    "paragraph of text in it.</p></div></body></html>"),
}


def serve(pages: dict[str, tuple[str, str]]) -> Iterator[str]:
    """Serve ``pages`` ({path: (content type, body)}) on 127.0.0.1; yields the base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            kind, body = pages.get(self.path.split("?")[0], ("text/plain", "not found"))
            self.send_response(200 if self.path.split("?")[0] in pages else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    with loopback(Handler) as base:
        yield base


def ui_session(playwright: Playwright, base: Path, args: tuple[str, ...] = ()) -> Iterator[Session]:
    """A Chromium with the extension and the host (its own CENTRUM_HOME under ``base``), semantic baseline pinned
    so the expected answers follow from the markup (first <main>/<article>); ``args``: more Chromium flags."""
    user_data_dir, home = base / "profile", base / "centrum-home"
    user_data_dir.mkdir()
    install_host(user_data_dir, home)
    for session in launch(playwright, user_data_dir, home, args=args):
        session.set_storage({"algorithm": "semantic", "readerIn": "page", "readerTheme": "light",
                             "readerFontSize": 20})
        yield session


def wait_stage(session: Session, page: Page, expected: str | None, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while stage(page) != expected:
        if time.monotonic() > deadline:
            raise AssertionError(f"stage {stage(page)!r}, expected {expected!r}; toast {toast(page)}; "
                                 f"extension log {session.logs}")
        time.sleep(0.05)


def storage(session: Session) -> dict[str, Any]:
    worker = next(w for w in session.browser.contexts[0].service_workers if "chrome-extension://" in w.url)
    out: dict[str, Any] = worker.evaluate("() => chrome.storage.local.get(null)")
    return out


def screenshots() -> Path:
    """The screenshot folder the session chose (tests/e2e/conftest.py ``screenshot_folder``)."""
    folder = Path(os.environ["CENTRUM_SCREENSHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(screenshots() / name))




READER = """(root) => {
    const r = root?.querySelector('.reader');
    if (!r) return null;
    const art = r.querySelector('article');
    const img = r.querySelector('img');
    const cs = getComputedStyle(art);
    return {text: r.innerText, html: r.innerHTML, dark: r.classList.contains('dark'),
            font: cs.fontSize, lineHeight: cs.lineHeight, dir: art.getAttribute('dir'), cls: art.className,
            bg: getComputedStyle(r).backgroundColor,
            img: img && {src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0, alt: img.alt},
            links: [...art.querySelectorAll('a')].map(a => a.getAttribute('href')),
            pre: [...r.querySelectorAll('pre')].map(p => p.textContent),
            cells: [...r.querySelectorAll('td, th')].map(c => c.textContent)};
}"""


def ui_wait(page: Page, function: str, arg: Any = None, timeout_s: float = 30) -> Any:
    """Poll ``function`` (``(root, arg) => ...``, see ui_eval) until it returns something truthy; returns that."""
    deadline = time.monotonic() + timeout_s
    while True:
        out = ui_eval(page, function, arg)
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {function}; last {out!r}")
        time.sleep(0.05)


def reader(page: Page) -> dict[str, Any]:
    ui_wait(page, "(root) => root?.querySelector('.reader img')?.complete", timeout_s=10)
    out: dict[str, Any] = ui_eval(page, READER)
    return out


def open_reader_tab(ui: Session, page: Page) -> Page:
    """Press twice (highlight, then reader) with the reader set to open in its own tab; the tab once it is ready."""
    ui.press(page)
    wait_stage(ui, page, "highlight")
    with ui.browser.contexts[0].expect_page(timeout=30_000) as opened:
        ui.press(page)
    tab = opened.value
    tab.wait_for_function("() => document.documentElement.dataset.ready === '1'", timeout=30_000)
    return tab


def open_in_reader(ui: Session, url: str) -> Page:
    """Open ``url`` and press twice (highlight, then the reader in the page); the page once the reader is up."""
    page = ui.open(url)
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    return page


def click_bar(page: Page, action: str) -> None:
    ui_click(page, f".reader .bar [data-action='{action}']")


def test_reader_shows_article_hides_rest_and_restores(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/article.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    before = page.evaluate("() => document.documentElement.outerHTML")

    ui.press(page)
    wait_stage(ui, page, "highlight")
    shot(page, "highlight.png")
    ui.press(page)
    wait_stage(ui, page, "reader")
    r = reader(page)
    shot(page, "reader.png")

    assert r["text"].index("Glacier field notes") < r["text"].index("Measuring the glacier")  # the page's title
    for needle in ("counting the stakes", "eleven and fourteen metres", "The tongue in August.", "A4", "11.2"):
        assert needle in r["text"], needle
    for gone in ("Most read", "Footer, copyright", "Maps"):
        assert gone not in r["text"], gone
    assert r["img"] == {"src": f"{server}/glacier.svg", "loaded": True, "alt": "The glacier tongue"}
    assert r["links"] == [f"{server}/stakes.html"]  # resolved, so it works outside the page
    assert r["pre"] == ["def speed(d, t):\n    return d / t"]  # code block kept with its line break and indent
    assert r["cells"] == ["Stake", "Metres", "A4", "11.2"]
    assert "<figure>" in r["html"] and "<figcaption>" in r["html"]

    # The rest of the page is hidden: whatever point of the sidebar, nav or footer one looks at, the reader is there.
    hidden = page.evaluate("""() => ['side', 'nav', 'foot'].map((id) => {
        const b = document.getElementById(id).getBoundingClientRect();
        const x = b.left + b.width / 2, y = b.top + b.height / 2;
        return x >= innerWidth || y >= innerHeight ? 'centrum-ui' : document.elementFromPoint(x, y).localName;
    })""")
    assert hidden == ["centrum-ui"] * 3

    # The link in the reader works: it leads to the resolved page address.
    href = ui_eval(page, "(root) => root.querySelector('.reader article a').getAttribute('href')")
    assert href == f"{server}/stakes.html"

    ui.press(page)
    page.wait_for_function("() => !document.querySelector('centrum-ui')", timeout=30_000)
    assert stage(page) is None
    assert page.evaluate("() => document.documentElement.outerHTML") == before


def test_reader_settings_persist(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/article.html")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    assert reader(page)["font"] == "20px" and not reader(page)["dark"]
    click_bar(page, "larger")
    click_bar(page, "larger")
    click_bar(page, "theme")
    r = reader(page)
    assert r["font"] == "24px" and r["dark"] and r["bg"] == "rgb(29, 31, 33)"
    shot(page, "reader-dark.png")
    assert {k: storage(ui)[k] for k in ("readerFontSize", "readerTheme")} == {"readerFontSize": 24,
                                                                              "readerTheme": "dark"}
    ui.press(page)
    wait_stage(ui, page, None)

    # A new page, a new reader: the settings are still there.
    page = ui.open(f"{server}/article.html")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    r = reader(page)
    assert r["font"] == "24px" and r["dark"]
    click_bar(page, "smaller")
    click_bar(page, "theme")
    assert reader(page)["font"] == "22px" and not reader(page)["dark"]
    assert storage(ui)["readerFontSize"] == 22
    ui.press(page)
    wait_stage(ui, page, None)
    ui.set_storage({"readerFontSize": 20, "readerTheme": "light"})


def test_reader_in_its_own_tab(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/article.html")
    before = page.evaluate("() => document.documentElement.outerHTML")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    ui_select(page, ".reader .bar select[data-action='reader-in']", "tab")
    assert storage(ui)["readerIn"] == "tab"
    ui.press(page)
    wait_stage(ui, page, None)

    try:
        tab = open_reader_tab(ui, page)
        assert tab.url.startswith("chrome-extension://") and "/src/reader.html#" in tab.url
        text = tab.evaluate("() => document.querySelector('.reader').innerText")
        assert "Measuring the glacier" in text and "eleven and fourteen metres" in text and "Most read" not in text
        assert tab.title() == "Glacier field notes"
        tab.wait_for_function("() => document.querySelector('.reader img').complete", timeout=10_000)
        assert tab.evaluate("() => document.querySelector('.reader img').naturalWidth") == 320
        assert tab.evaluate("() => document.querySelector('.reader a').href") == f"{server}/stakes.html"
        # The data was handed over once: it is gone from storage.
        assert not [k for k in storage(ui) if k.startswith("reader:")]
        tab.close()
        # The page itself is back as it was, and the next press starts over.
        wait_stage(ui, page, None)
        assert page.evaluate("() => document.documentElement.outerHTML") == before
    finally:
        ui.set_storage({"readerIn": "page"})


@pytest.mark.parametrize(("path", "direction", "cjk"), [("/rtl.html", "rtl", False), ("/cjk.html", "ltr", True)])
def test_reader_script_direction_and_cjk(ui: Session, server: str, path: str, direction: str, cjk: bool) -> None:
    page = open_in_reader(ui, f"{server}{path}")
    r = ui_eval(page, READER)
    assert r["dir"] == direction
    assert ("cjk" in r["cls"]) is cjk
    ratio = float(r["lineHeight"].removesuffix("px")) / float(r["font"].removesuffix("px"))
    assert ratio >= 1.85 if cjk else 1.6 <= ratio < 1.7
    if direction == "rtl":
        # Right to left for real: the title's text ends at the right edge of the article.
        edges = ui_eval(page, """(root) => {
            const art = root.querySelector('.reader article');
            const t = art.querySelector('h1').getBoundingClientRect(), a = art.getBoundingClientRect();
            return [getComputedStyle(art).direction, a.right - t.right];
        }""")
        assert edges[0] == "rtl" and edges[1] < 30
        shot(page, "reader-rtl.png")
    ui.press(page)
    wait_stage(ui, page, None)


def test_reader_shows_the_text_of_collapsed_disclosure_panels_open(ui: Session, server: str) -> None:
    """The answer keeps the text a reader opens with one click (host: Snapshot.text_disclosed), and the reader view
    shows those panels open; hidden text that is no panel of the answer (a closed menu) stays out."""
    page = open_in_reader(ui, f"{server}/product.html")
    r = ui_eval(page, READER)
    for needle in ("A light shoe for long runs", "Materials", "Upper of recycled knit", "Wash cold and dry flat",
                   "order half a size up"):
        assert needle in r["text"], needle
    assert "Hidden menu entry" not in r["text"] and "Shop footer" not in r["text"]
    assert ui_eval(page, "(root) => root.querySelector('.reader details').open") is True
    # The page itself is untouched: its panels are still closed.
    assert page.evaluate("() => [document.getElementById('det').open, getComputedStyle("
                         "document.getElementById('care')).display]") == [False, "none"]
    ui.press(page)
    wait_stage(ui, page, None)
