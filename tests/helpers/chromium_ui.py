"""The harness the Chromium UI tests share (``tests/e2e/test_ui_*``, ``test_extension_chromium``, the campaign
and reader tests): a Chromium with the unpacked extension and the host installed into its user-data-dir
(:mod:`centrum.bench.extension_browser`), the page server, and the ways into the extension's UI. Test modules import
this, never each other."""

from __future__ import annotations

import http.server
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, Playwright

from centrum.annotation.serve import loopback
from centrum.bench.extension_browser import Session, extension_world_eval, install_host, launch

__all__ = ["Session", "install_host", "launch"]  # re-exported: the tests take the whole harness from here

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "extension"

GLACIER_SVG = ("<svg xmlns='http://www.w3.org/2000/svg' width='320' height='160'><rect width='320' height='160' "
               "fill='#9cc3e6'/><path d='M0 160 L120 40 L200 110 L320 30 L320 160 Z' fill='#eef5fb'/></svg>")

# A served extract in host.log: "r3 extract ok in ..." (ids and types may be written quoted, %r).
_EXTRACT_OK = re.compile(r" '?extract'? ok in ")


def extract_ok_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if _EXTRACT_OK.search(line)]


def stage(page: Page) -> str | None:
    return page.evaluate("() => document.documentElement.getAttribute('data-centrum-stage')")


# ---- reaching the extension's UI ----------------------------------------------------------------------------------
# The panels live in a closed shadow root that only the extension's content scripts hold (view.js, issue #20): page
# script sees `shadowRoot === null`. The tests reach it as the extension does, from the content scripts' isolated
# world, which the DevTools protocol can evaluate in; clicks and keys go in as real (trusted) input.


def ui_eval(page: Page, function: str, arg: Any = None) -> Any:
    """Call ``function`` (JS source ``(root, arg) => ...``) in the extension's isolated world on ``page``'s top frame
    with the view's closed shadow root (null when the view has none). Returns its JSON value (promises awaited), None
    when nothing was injected in this document yet."""
    return extension_world_eval(page, f"""(arg) => {{ const view = globalThis[Symbol.for('centrum.view')];
        return ({function})(view ? view.uiRoot() : null, arg); }}""", arg)


def ui_box(page: Page, selector: str, position: tuple[float, float] | None = None) -> tuple[float, float]:
    """Viewport point of the first element matching ``selector`` in the extension's UI (scrolled into view): its
    centre, or ``position`` from its top left corner."""
    box = ui_eval(page, """(root, [sel, at]) => { const el = root && root.querySelector(sel);
        if (!el) return null; el.scrollIntoView({block: 'nearest'}); const r = el.getBoundingClientRect();
        return at ? [r.left + at[0], r.top + at[1]] : [r.left + r.width / 2, r.top + r.height / 2]; }""",
                  [selector, position])
    assert box, f"no {selector!r} in the extension's UI"
    return box[0], box[1]


def ui_click(page: Page, selector: str, position: tuple[float, float] | None = None) -> None:
    """A real mouse click (trusted input) on an element of the extension's UI."""
    x, y = ui_box(page, selector, position)
    page.mouse.click(x, y)


def ui_hover(page: Page, selector: str) -> None:
    x, y = ui_box(page, selector)
    page.mouse.move(x, y)


def ui_fill(page: Page, selector: str, text: str) -> None:
    """Replace the value of a text field of the extension's UI by typing (select all, then the keys)."""
    ui_click(page, selector)
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def ui_select(page: Page, selector: str, value: str) -> None:
    """Choose the option ``value`` of a <select> of the UI with the keyboard: focus it, arrow keys up or down, one
    at a time (a change may re-render the panel with a new <select>, which is focused again)."""
    for _ in range(100):
        steps = ui_eval(page, """(root, [sel, value]) => { const s = root.querySelector(sel);
            const to = [...s.options].findIndex((o) => o.value === value);
            if (to < 0) return null; s.focus(); return to - s.selectedIndex; }""", [selector, value])
        assert steps is not None, f"{selector} has no option {value!r}"
        if steps == 0:
            return
        page.keyboard.press("ArrowDown" if steps > 0 else "ArrowUp")
    raise AssertionError(f"{selector} did not reach {value!r}")


def toast(page: Page) -> dict[str, Any] | None:
    return ui_eval(page, """(root) => {
        const box = root?.querySelector('.toast');
        if (!box) return null;
        const r = box.getBoundingClientRect();
        return {text: box.textContent, role: box.getAttribute('role'), visible: r.width > 0 && r.height > 0,
                display: getComputedStyle(box).display};
    }""")  # type: ignore[no-any-return]


def wait_toast(page: Page, needle: str, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        t = toast(page)
        if t and needle in t["text"]:
            return t
        time.sleep(0.1)
    raise AssertionError(f"no message containing {needle!r} on the page; last: {toast(page)}; "
                         f"tab: {page.url}")


# The pages a UI test module gets from the `server` fixture unless it names its own PAGES: the reader's.
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
