"""The reader with the page's metadata in Firefox ESR over WebDriver BiDi (harness: tests/helpers/firefox_ui.py):
an Arabic news page whose metadata sits in a JSON-LD comment gets its header (site, title without the site
prefix, byline, date, reading time) right to left, Copy and Save are offered (the host sent Markdown), Esc returns
to the page; hidden text stays out of the reader (tests/fixtures/pages/hidden-tricks.html: the collector's SEEN
rule, which clean.js asks in Firefox too); and Firefox binds every declared command's suggested key
(``commands.getAll()``)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import firefox_ui
from helpers.firefox_ui import (
    EXTENSION,
    PRESS,
    STAGE,
    Bidi,
    keys,
    make_test_extension,
    run_firefox,
    set_algorithm,
    ui_click,
    ui_eval,
    ui_wait,
    wait_for,
)
from helpers.reader_probes import ARTICLE_TEXT, COMMENTS, HEAD

from centrum import algorithms
from centrum.core.snapshot import parse_snapshot
from centrum.output.outputs import Outputs

COLLECTOR = EXTENSION / "src" / "collect.js"

# BiDi reaches neither the background nor extension pages (navigating to moz-extension: is refused), so this test
# copy also gets a test-only background script answering commands.getAll() over a port named "centrum-test" (the
# shipped background has no onConnect listener), and the content-script shim relays the page's question to it.
BACKGROUND_SHIM = """// Test-only (tests/e2e/test_firefox_reader.py).
browser.runtime.onConnect.addListener((port) => {
  if (port.name !== "centrum-test") return;
  port.onMessage.addListener(async () => port.postMessage(await browser.commands.getAll()));
});
"""
CONTENT_SHIM = """
window.addEventListener("message", (event) => {
  if (event.source !== window || event.data !== "centrum-test-commands") return;
  const port = browser.runtime.connect({ name: "centrum-test" });
  port.onMessage.addListener((commands) => {
    document.documentElement.setAttribute("data-test-commands", JSON.stringify(commands));
    port.disconnect();
  });
  port.postMessage("commands");
});
"""


def make_with_commands_probe(base: Path) -> Path:
    target = make_test_extension(base)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["background"]["scripts"].append("test-background.js")
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2))
    (target / "test-background.js").write_text(BACKGROUND_SHIM)
    with (target / "test-shim.js").open("a") as shim:
        shim.write(CONTENT_SHIM)
    return target


GOLDEN = Path(__file__).resolve().parents[1] / "pages"
GOLDEN_SLUGS = ("blog-comments", "forum-quotes")


class _WithGoldenPages(firefox_ui.PageHandler):
    """The harness's pages, and /golden/<slug>.html: a golden page (tests/pages/<slug>/page.html)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?")[0]
        slug = path.removeprefix("/golden/").removesuffix(".html")
        if not path.startswith("/golden/") or slug not in GOLDEN_SLUGS:
            super().do_GET()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write((GOLDEN / slug / "page.html").read_bytes())


@pytest.fixture
def firefox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Bidi, Path, str]]:
    monkeypatch.setattr(firefox_ui, "make_test_extension", make_with_commands_probe)
    monkeypatch.setattr(firefox_ui, "PageHandler", _WithGoldenPages)
    yield from run_firefox(tmp_path, install=True)


def open_reader(bidi: Bidi, context: str, page: str) -> str:
    """Navigate to ``page`` and press twice (the highlight, then the reader); the page's HTML from before."""
    bidi.call("browsingContext.navigate", {"context": context, "url": page, "wait": "complete"})
    time.sleep(0.5)
    before: str = bidi.evaluate(context, "document.documentElement.outerHTML")
    bidi.evaluate(context, PRESS)
    wait_for(bidi, context, f"{STAGE} === 'highlight'", "the highlight", timeout_s=90)
    bidi.evaluate(context, PRESS)
    wait_for(bidi, context, f"{STAGE} === 'reader'", "the reader view")
    return before


def test_firefox_reader_header_with_metadata(firefox: tuple[Bidi, Path, str]) -> None:
    bidi, _, url = firefox
    page = url.rsplit("/", 1)[0] + "/pages/meta-rtl.html"
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.navigate", {"context": context, "url": page, "wait": "complete"})
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")
    bidi.evaluate(context, PRESS)
    wait_for(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
    bidi.evaluate(context, PRESS)
    wait_for(bidi, context, f"{STAGE} === 'reader'", "the reader view")
    head = ui_wait(bidi, context, HEAD, "the reader header")
    assert head["site"] == "جريدة الساحل"
    assert head["title"] == "افتتاح مكتبة الميناء بعد ترميم دام ثلاث سنوات"
    assert head["title"] not in [text for _, text in head["headings"]]  # said once: the body's repeat is left out
    assert head["byline"] == "سلمى حداد" and head["datetime"] == "2026-11-19T18:00:00+00:00"
    assert head["reading"] and head["dir"] == "rtl" and head["copy"] is False
    keys(bidi, context, "\ue00c")  # Escape
    wait_for(bidi, context, "!document.querySelector('centrum-ui')", "the restore by Esc")


def test_firefox_reader_leaves_hidden_text_out(firefox: tuple[Bidi, Path, str]) -> None:
    from helpers.hidden_tricks import check_hidden

    bidi, _, url = firefox
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.setViewport", {"context": context, "viewport": {"width": 1280, "height": 800}})
    page = url.rsplit("/", 1)[0] + "/pages/hidden-tricks.html"
    bidi.call("browsingContext.navigate", {"context": context, "url": page, "wait": "complete"})
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")
    bidi.evaluate(context, PRESS)
    wait_for(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
    bidi.evaluate(context, PRESS)
    wait_for(bidi, context, f"{STAGE} === 'reader'", "the reader view")
    check_hidden(ui_eval(bidi, context, "(root) => root.querySelector('.reader').innerText"))
    keys(bidi, context, "\ue00c")  # Escape
    wait_for(bidi, context, "!document.querySelector('centrum-ui')", "the restore by Esc")
    # The host's outputs of Firefox's own snapshot (the collector's judgement made by Gecko) leave the same text out.
    out = bidi.call("script.evaluate", {
        "expression": COLLECTOR.read_text(encoding="utf-8") + ";JSON.stringify(centrumCollect({source: true}))",
        "target": {"context": context, "sandbox": "centrum-test-collect"}, "awaitPromise": False,
        "resultOwnership": "none"})
    assert out.get("type") == "success", out
    snapshot = parse_snapshot(json.loads(out["result"]["value"]))
    assert snapshot.unseen_subtree is not None  # the collector judged what is unseen
    outputs = Outputs(snapshot, algorithms.run("semantic", snapshot))
    for text in (outputs.text, outputs.markdown(), outputs.html()):
        check_hidden(re.sub(r"<[^>]+>", " ", text))


def test_firefox_binds_every_declared_shortcut(firefox: tuple[Bidi, Path, str]) -> None:
    bidi, _, url = firefox
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
    time.sleep(0.5)
    bidi.evaluate(context, "window.postMessage('centrum-test-commands', '*')")
    answer = wait_for(bidi, context, "document.documentElement.getAttribute('data-test-commands')", "commands.getAll()")
    bound = {c["name"]: c.get("shortcut") for c in json.loads(answer)}
    manifest = json.loads((EXTENSION / "manifest.json").read_text())
    assert bound == {name: c["suggested_key"]["default"] for name, c in manifest["commands"].items()}


def test_firefox_threads_and_the_comments_section(firefox: tuple[Bidi, Path, str]) -> None:
    """Issue #44 item 2 in Firefox with the default algorithm: the forum thread reads as in Chromium (its reader.txt,
    tests/e2e/test_ui_reader_threads.py), and the blog's comments set aside come as a collapsed "Comments (6)" at
    the reader's end that a click opens; the reader's × gives the page back as it was."""
    bidi, _, url = firefox
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.setViewport", {"context": context, "viewport": {"width": 1280, "height": 900}})
    base = url.rsplit("/", 1)[0]
    bidi.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
    set_algorithm(bidi, context, "ensemble")
    open_reader(bidi, context, f"{base}/golden/forum-quotes.html")
    text = ui_wait(bidi, context, ARTICLE_TEXT, "the thread in the reader")
    assert text + "\n" == (GOLDEN / "forum-quotes" / "reader.txt").read_text(encoding="utf-8"), text
    keys(bidi, context, "\ue00c")  # Escape
    wait_for(bidi, context, "!document.querySelector('centrum-ui')", "the restore by Esc")

    before = open_reader(bidi, context, f"{base}/golden/blog-comments.html")
    comments = ui_wait(bidi, context, COMMENTS, "the comments section")
    assert comments["summary"] == "Comments (6)" and comments["open"] is False and comments["last"] is True
    ui_click(bidi, context, ".reader details.comments > summary")
    opened = ui_wait(bidi, context, "(root) => { const c = root.querySelector('.reader details.comments'); "
                                    "return c.open && c.querySelector('.content').innerText; }", "the comments open")
    for said in ("Hanne", "We tried the same ridge walk", "Marco, the 1:25,000 sheet", "Greta"):
        assert said in opened, said
    assert "Leave a reply" not in opened and "Recent comments" not in opened
    ui_click(bidi, context, ".reader .bar [data-action='close']")  # the reader's ×
    wait_for(bidi, context, "!document.querySelector('centrum-ui')", "the restore by the reader's ×")
    assert bidi.evaluate(context, "document.documentElement.outerHTML") == before
