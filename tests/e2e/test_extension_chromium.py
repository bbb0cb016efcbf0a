"""The extension in Debian's Chromium, end to end: toolbar button -> collect.js -> native host process started by the
browser -> highlight -> reader view -> restore, and host errors shown on the page.

The button is pressed through the DevTools protocol's ``Extensions.triggerAction`` on the tab: the same path as a
click on the toolbar icon (it grants activeTab), so the extension runs exactly as shipped, with no host permission
added. Chromium is started by the test with ``--user-data-dir`` (so ``centrum install-host --user-data-dir`` puts
the host manifest where that Chromium reads it) and Playwright attaches over CDP.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.chromium_ui import extract_ok_lines, stage, toast, ui_eval, wait_stage, wait_toast
from playwright.sync_api import Page, Playwright

from centrum.annotation.serve import loopback
from centrum.bench.extension_browser import Session, install_host, launch
from centrum.native.install import EXTENSION_ID

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "extension"

ARTICLE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour news</title>
<style>body { font: 16px sans-serif; margin: 0 } nav, footer { padding: 10px } .wrap { display: flex }
article { width: 700px; padding: 20px } aside { width: 300px }</style></head><body>
<nav><a href="/">Home</a> <a href="/sport">Sport</a> <a href="/weather">Weather</a></nav>
<div class="wrap">
<article id="story"><h1>The harbour reopens</h1>
<p>After two years of works the old harbour reopened on Saturday, with
<a href="javascript:window.__pwned = 1">a hostile link</a> and <b onclick="window.__pwned = 2">bold text</b>.</p>
<script>window.__scriptRuns = (window.__scriptRuns || 0) + 1;</script>
<iframe srcdoc="<p>framed</p>"></iframe>
<p>Fishermen were the first to moor their boats in the renovated basin.</p>
<p hidden>Hidden teaser text.</p>
</article>
<aside id="side">Most read: a sidebar list.</aside>
</div>
<footer id="foot">Footer, copyright and contact.</footer>
</body></html>"""

NO_MARKUP = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plain</title></head><body>
<div id="content"><p>A page without main or article elements.</p></div></body></html>"""

# A source-based algorithm (DANAg: text vs markup per source line) needs lines of prose to see an article.
LONG = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Long read</title></head><body>\n"
        "<div class=\"menu\"><a href=\"/a\">A</a> <a href=\"/b\">B</a> <a href=\"/c\">C</a></div>\n"
        "<article id=\"story\">\n<h1>A long read about rivers</h1>\n"
        + "".join(f"<p>Paragraph {i}: the river carried silt from the mountains to the plain, and the farmers "
                  "along its banks learned to read its seasons, planting after the spring flood and harvesting "
                  "before the autumn rains returned to swell it again.</p>\n" for i in range(12))
        + "</article>\n<div class=\"foot\"><a href=\"/x\">Contact</a> <a href=\"/y\">Privacy</a></div>\n</body></html>")

# An article whose extracted text alone is over 1 MB (UTF-8), so the answer must travel in several chunks.
HUGE = ("<!doctype html><html lang=\"fr\"><head><meta charset=\"utf-8\"><title>Été</title></head><body><article>"
        + "".join(f"<p>Paragraphe {i} : été, rivière, forêt et éléphants traversèrent la vallée à l'aube, "
                  "comme chaque année depuis des siècles, sous le regard des bergers.</p>" for i in range(9000))
        + "</article></body></html>")

# Things a cover drawn in document coordinates would not follow: a fixed banner, and a sibling of the article inside a
# box that scrolls on its own.
APART = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tides</title>
<style>body { font: 16px sans-serif; margin: 0 }
#banner { position: fixed; top: 0; left: 0; right: 0; background: #ffd }
#pane { height: 200px; overflow: auto; margin-top: 40px }</style></head><body>
<div id="banner">We use cookies.</div>
<div id="pane"><article id="story"><h1>Tides</h1><p>The tide came in twice a day, as it always had.</p></article>
<p id="note">A note in the same scrolling pane.</p></div>
<footer id="foot">Footer, copyright and contact.</footer></body></html>"""

# A page that swaps its body for a copy every few milliseconds (as often as timers run): the elements collected are
# gone when the answer comes back, so only the answer's text can be shown.
SWAPPING = LONG.replace("</head>", "<script>setInterval(() => "
                                   "document.body.replaceWith(document.body.cloneNode(true)), 1);</script></head>")

PAGES = {"/article.html": ARTICLE, "/plain.html": NO_MARKUP, "/long.html": LONG, "/huge.html": HUGE,
         "/apart.html": APART, "/swapping.html": SWAPPING}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body = PAGES.get(self.path.split("?")[0])
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write((body or "not found").encode())

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with loopback(_Handler) as base:
        yield base


@pytest.fixture(scope="module")
def chromium(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    base = tmp_path_factory.mktemp("chromium-ext")
    user_data_dir, home = base / "profile", base / "centrum-home"
    user_data_dir.mkdir()
    install_host(user_data_dir, home)
    for session in launch(playwright, user_data_dir, home):
        # The expected answers below follow from the semantic baseline (first <main>/<article>), whatever the
        # host's default algorithm becomes.
        session.set_storage({"algorithm": "semantic"})
        yield session


def darkest(page: Page, element_id: str) -> int:
    """The darkest grey level (0-255) on screen within the element's box, the toast and the outline's line left out:
    black text shows as about 0, text dimmed to a quarter over white as about 191."""
    import io

    import numpy as np
    from PIL import Image

    time.sleep(0.2)  # a frame or two: what the last change drew is on screen
    box = page.evaluate("(id) => { const r = document.getElementById(id).getBoundingClientRect(); "
                        "return [r.left, r.top, r.width, r.height]; }", element_id)
    # Within the layout viewport: not on the scroll bars.
    width, height = page.evaluate("() => [document.documentElement.clientWidth, document.documentElement.clientHeight]")
    shown = ui_eval(page, "(root) => { const t = root && root.querySelector('.toast'); if (!t) return null; "
                          "const r = t.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
    grey = np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("L")).astype(int)[:height, :width]
    inside = np.zeros(grey.shape, dtype=bool)
    x, y, w, h = (round(v) for v in box)
    inside[max(y, 0):max(y + h, 0), max(x, 0):max(x + w, 0)] = True
    if shown:
        x, y, w, h = (round(v) for v in shown)
        inside[max(y - 8, 0):max(y + h + 8, 0), max(x - 8, 0):max(x + w + 8, 0)] = False
    # Nor the answer's outline, a few pixels outside the answer: only its border line is left out.
    ring = ui_eval(page, "(root) => { const b = root && root.querySelector('.layer[data-layer=\"main\"] .box'); "
                         "if (!b) return null; const r = b.getBoundingClientRect(); "
                         "return [r.left, r.top, r.width, r.height]; }")
    if ring:
        x, y, w, h = (round(v) for v in ring)
        outer = np.zeros(grey.shape, dtype=bool)
        outer[max(y - 2, 0):max(y + h + 2, 0), max(x - 2, 0):max(x + w + 2, 0)] = True
        outer[max(y + 5, 0):max(y + h - 5, 0), max(x + 5, 0):max(x + w - 5, 0)] = False
        inside &= ~outer
    assert inside.any(), f"#{element_id} is not on screen outside the toast"
    return int(grey[inside].min())


def test_button_highlight_reader_restore(chromium: Session, server: str) -> None:
    page = chromium.open(f"{server}/article.html")
    before = page.evaluate("() => document.documentElement.outerHTML")
    scripts_before = page.evaluate("() => window.__scriptRuns")
    assert darkest(page, "side") < 60 and darkest(page, "foot") < 60

    # 1st press: collect -> host (started by the browser) -> highlight <article>.
    chromium.press(page)
    wait_stage(chromium, page, "highlight")
    marked = page.evaluate("() => [...document.querySelectorAll('[data-centrum-main]')].map(e => e.id)")
    assert marked == ["story"]
    # One outline around the article, drawn in the view's own layer (no page style can hide it).
    outline = ui_eval(page, """(root) => [...root.querySelectorAll('.layer[data-layer="main"] .box')].map((b) => {
        const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })""")
    story = page.evaluate("() => { const r = document.getElementById('story').getBoundingClientRect(); "
                          "return [r.left, r.top, r.right, r.bottom]; }")
    assert len(outline) == 1 and outline[0][:2] <= story[:2] and outline[0][2:] >= story[2:], (outline, story)
    wait_toast(page, "main content outlined")
    # The rest is dimmed as seen on screen (covered by the page's white at 3/4: text at a quarter of its ink), the
    # article is not; and the covers follow the page when its layout moves (here: 150 px inserted above them).
    assert darkest(page, "story") < 60
    assert darkest(page, "side") > 150 and darkest(page, "foot") > 150
    page.evaluate("() => { const d = document.createElement('div'); d.id = 'spacer'; d.style.height = '150px'; "
                  "document.querySelector('nav').after(d); }")
    assert darkest(page, "story") < 60 and darkest(page, "side") > 150
    page.evaluate("() => document.getElementById('spacer').remove()")

    # The host really ran as a separate process started by Chromium for this extension.
    log = (chromium.home / "host.log").read_text()
    assert f"chrome-extension://{EXTENSION_ID}/" in log and extract_ok_lines(log)

    # 2nd press: reader view with the article's text, sanitized.
    chromium.press(page)
    wait_stage(chromium, page, "reader")
    reader = ui_eval(page, """(root) => {
        const r = root.querySelector('.reader');
        const b = r.getBoundingClientRect();
        return {text: r.innerText, html: r.innerHTML, w: b.width, h: b.height, vw: innerWidth, vh: innerHeight,
                links: [...r.querySelectorAll('a')].map(a => a.getAttribute('href'))};
    }""")
    assert "The harbour reopens" in reader["text"]
    assert "Fishermen were the first to moor" in reader["text"]
    assert "sidebar" not in reader["text"] and "Footer" not in reader["text"]
    assert "Hidden teaser" not in reader["text"]
    for bad in ("<script", "onclick", "javascript:", "<iframe", "srcdoc", "style="):
        assert bad not in reader["html"], bad
    assert reader["links"] == [None]  # the javascript: link keeps its text but loses its href
    assert reader["w"] >= reader["vw"] - 20 and reader["h"] >= reader["vh"] - 20  # covers the viewport
    assert page.evaluate("() => [window.__pwned, window.__scriptRuns]") == [None, scripts_before]

    # 3rd press: the page is exactly as before.
    chromium.press(page)
    page.wait_for_function("() => !document.querySelector('centrum-ui')", timeout=30_000)
    assert stage(page) is None
    assert page.evaluate("() => document.documentElement.outerHTML") == before
    assert darkest(page, "side") < 60 and darkest(page, "foot") < 60  # nothing dims the page any more

    # And the cycle starts again.
    chromium.press(page)
    wait_stage(chromium, page, "highlight")


def test_what_moves_apart_from_the_document_is_dimmed_by_opacity(chromium: Session, server: str) -> None:
    page = chromium.open(f"{server}/apart.html")
    before = page.evaluate("() => document.documentElement.outerHTML")
    chromium.press(page)
    wait_stage(chromium, page, "highlight")
    assert page.evaluate("() => [...document.querySelectorAll('[data-centrum-main]')].map(e => e.id)") == ["story"]
    dimmed = page.evaluate("""() => [...document.querySelectorAll('[data-centrum-dim]')].map(
        e => [e.id, Number(getComputedStyle(e).opacity)])""")
    assert sorted(i for i, _ in dimmed) == ["banner", "note"] and all(o < 0.5 for _, o in dimmed)
    assert darkest(page, "foot") > 150 and darkest(page, "story") < 60  # the footer has a cover instead
    chromium.press(page)
    wait_stage(chromium, page, "reader")
    chromium.press(page)
    page.wait_for_function("() => !document.querySelector('centrum-ui')", timeout=30_000)
    assert page.evaluate("() => document.documentElement.outerHTML") == before


@contextlib.contextmanager
def algorithm(session: Session, name: str) -> Iterator[None]:
    """The extension set to algorithm ``name`` for the block, then back to the module's setting (semantic: the host's
    default reads the page source, which most of these tests do not want)."""
    session.set_storage({"algorithm": name})
    try:
        yield
    finally:
        session.set_storage({"algorithm": "semantic"})


def test_answer_text_when_its_elements_are_gone(chromium: Session, server: str) -> None:
    # Zoning's answer carries its text. The background sends the text into the page only when the page asks for it
    # (none of the answer's elements is there any more): then it is read as before.
    with algorithm(chromium, "zoning"):
        page = chromium.open(f"{server}/swapping.html")
        chromium.press(page)
        shown = wait_toast(page, "cannot outline")
        assert shown["visible"] and stage(page) is None
        assert page.evaluate("() => document.querySelectorAll('[data-centrum-main]').length") == 0
        chromium.press(page)
        wait_stage(chromium, page, "reader")
        text = ui_eval(page, "(root) => root.querySelector('.reader').innerText")
        assert "the river carried silt from the mountains" in text
        chromium.press(page)
        page.wait_for_function("() => !document.querySelector('centrum-ui')", timeout=30_000)


def test_host_error_is_shown_on_the_page(chromium: Session, server: str) -> None:
    with algorithm(chromium, "no-such-algorithm"):
        page = chromium.open(f"{server}/article.html")
        chromium.press(page)
        shown = wait_toast(page, "E_UNKNOWN_ALGORITHM")
        assert shown["role"] == "alert" and shown["visible"]
        assert "no-such-algorithm" in shown["text"]
        assert stage(page) is None  # nothing highlighted
    # The next press (same host process) works.
    chromium.press(page)
    wait_stage(chromium, page, "highlight")


def test_answer_over_1mb_is_reassembled(chromium: Session, server: str) -> None:
    # Zoning's answer carries the exact text of its zones: here 1.47 MB (1.36 M characters of non-ASCII prose), i.e.
    # several 1 MB-capped native messages that the background must reassemble in order before it can parse the
    # answer and highlight. (An error message no longer quotes a huge parameter: the host caps parameter strings,
    # PROTOCOL.md "Limits".)
    with algorithm(chromium, "zoning"):
        page = chromium.open(f"{server}/huge.html")
        chromium.press(page)
        wait_stage(chromium, page, "highlight")
    # The request went compressed (PROTOCOL.md "Compressed snapshot"): its snapshot is over 1.5 MB as JSON, above
    # pack.js's GZIP_ABOVE.
    assert set(chromium.worker().evaluate("() => [...snapshots.values()].at(-1)")) == {"gzip"}
    assert last_extract_bytes(chromium) < 400_000


def host_pids(session: Session) -> list[int]:
    log = (session.home / "host.log").read_text()
    return [int(line.split("(pid ")[1].split(",")[0]) for line in log.splitlines() if " started (pid " in line]


def test_timeout_then_reconnect_and_host_exit_then_reconnect(chromium: Session, server: str) -> None:
    page = chromium.open(f"{server}/article.html")
    chromium.press(page)  # make sure a host is running
    wait_stage(chromium, page, "highlight")
    started = len(host_pids(chromium))

    # A timeout drops the port (the browser stops the stuck host) and says so on the page.
    chromium.set_storage({"timeoutMs": 1})
    try:
        chromium.open(f"{server}/article.html")
        chromium.press(page)
        shown = wait_toast(page, "E_TIMEOUT")
        assert shown["role"] == "alert"
    finally:
        chromium.set_storage({"timeoutMs": 120000})
    chromium.press(page)  # clears the message and runs again on a fresh host
    wait_stage(chromium, page, "highlight")
    assert len(host_pids(chromium)) == started + 1

    # The host dies between presses: the port notices, and the next press starts a new host.
    os.kill(host_pids(chromium)[-1], 9)
    time.sleep(0.5)
    chromium.open(f"{server}/article.html")
    chromium.press(page)
    wait_stage(chromium, page, "highlight")
    assert len(host_pids(chromium)) == started + 2


def test_request_over_the_limit_is_refused_in_the_extension(chromium: Session, server: str) -> None:
    # The browser's own cap is 64 MiB; a lower user limit exercises the same refusal with a small page.
    chromium.set_storage({"maxRequestBytes": 2000})
    try:
        page = chromium.open(f"{server}/article.html")
        log_before = (chromium.home / "host.log").read_text().count("extract")
        chromium.press(page)
        shown = wait_toast(page, "E_REQUEST_TOO_LARGE")
        assert "too large to analyse" in shown["text"] and shown["role"] == "alert"
        assert (chromium.home / "host.log").read_text().count("extract") == log_before  # never sent
    finally:
        chromium.set_storage({"maxRequestBytes": 0})


def last_extract_bytes(session: Session, after: int = 0) -> int:
    """Request bytes of the last served extract, once there are more than ``after`` (the host logs a request after
    it has answered it, so the line may lag the page by a moment)."""
    deadline = time.monotonic() + 10
    while len(lines := extract_ok_lines((session.home / "host.log").read_text())) <= after:
        assert time.monotonic() < deadline, f"no new extract line in host.log after {after}"
        time.sleep(0.05)
    return int(lines[-1].rsplit("(", 1)[1].split()[0])


def sent_snapshot(session: Session) -> dict[str, Any]:
    """The snapshot of the last press, as the background sent it to the host (kept for the tab): one string, its JSON
    text or the gzip of it (PROTOCOL.md "Compressed snapshot"), read here."""
    import base64
    import gzip
    import json

    packed = session.worker().evaluate("() => [...snapshots.values()].at(-1)")
    assert set(packed) in ({"gzip"}, {"json"}), packed
    text = packed["json"] if "json" in packed else gzip.decompress(base64.b64decode(packed["gzip"], validate=True))
    snapshot: dict[str, Any] = json.loads(text)
    return snapshot


def test_source_algorithm_gets_the_page_source(chromium: Session, server: str) -> None:
    # DANAg reads the collector's `source` serialization (ping says needs_source), the semantic baseline does not:
    # the extension must send the source for the one and not for the other. What DANAg then picks is its own
    # business (its tests); here it must at least not complain that the source is missing. (The reader's metadata
    # option also sends the source, for byline, date and Markdown: off here.)
    chromium.set_storage({"readerMetadata": False})
    page = chromium.open(f"{server}/long.html")
    chromium.press(page)
    wait_stage(chromium, page, "highlight")
    assert "source" not in sent_snapshot(chromium)
    chromium.set_storage({"algorithm": "danag"})
    try:
        page = chromium.open(f"{server}/long.html")
        chromium.press(page)
        deadline = time.monotonic() + 30
        while stage(page) != "highlight" and not ((toast(page) or {}).get("role") == "alert"):
            assert time.monotonic() < deadline, f"no answer: {toast(page)}"
            time.sleep(0.1)
        assert "no page source" not in ((toast(page) or {}).get("text") or "")
        source = sent_snapshot(chromium)["source"]  # the serialized page, with node ids
        assert len(source) >= len(LONG) and "the river carried silt" in source and 'data-cx="0"' in source
    finally:
        chromium.set_storage({"algorithm": "semantic", "readerMetadata": True})


def test_no_main_content_message(chromium: Session, server: str) -> None:
    page = chromium.open(f"{server}/plain.html")
    chromium.press(page)
    shown = wait_toast(page, "found no main content")
    assert shown["visible"] and "<main>" in shown["text"]  # the semantic baseline's own reason


def test_host_missing_is_shown(playwright: Playwright, tmp_path: Path, server: str) -> None:
    user_data_dir, home = tmp_path / "profile", tmp_path / "home"
    user_data_dir.mkdir()
    # No install-host: the manifest is absent.
    with contextlib.contextmanager(launch)(playwright, user_data_dir, home) as session:
        page = session.open(f"{server}/article.html")
        session.first_press(page)
        shown = wait_toast(page, "E_HOST_MISSING")
        assert "centrum install-host" in shown["text"] and shown["role"] == "alert"
        # Installing the host while the browser runs: the next press connects.
        install_host(user_data_dir, home)
        session.press(page)
        wait_stage(session, page, "highlight")
