"""The reader with the page's metadata in Firefox ESR over WebDriver BiDi (harness of test_extension_firefox.py):
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
import test_extension_firefox
from reader_probes import HEAD
from test_extension_firefox import (
    EXTENSION,
    PRESS,
    STAGE,
    Bidi,
    _wait,
    keys,
    make_test_extension,
    run_firefox,
    set_algorithm,
    ui_eval,
    ui_wait,
)

from centrum import algorithms
from centrum.outputs import Outputs
from centrum.snapshot import parse_snapshot

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


@pytest.fixture
def firefox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Bidi, Path, str]]:
    monkeypatch.setattr(test_extension_firefox, "make_test_extension", make_with_commands_probe)
    yield from run_firefox(tmp_path, install=True)


def test_firefox_reader_header_with_metadata(firefox: tuple[Bidi, Path, str]) -> None:
    bidi, _, url = firefox
    page = url.rsplit("/", 1)[0] + "/pages/meta-rtl.html"
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.navigate", {"context": context, "url": page, "wait": "complete"})
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'reader'", "the reader view")
    head = ui_wait(bidi, context, HEAD, "the reader header")
    assert head["site"] == "جريدة الساحل"
    assert head["title"] == "افتتاح مكتبة الميناء بعد ترميم دام ثلاث سنوات"
    assert head["title"] not in [text for _, text in head["headings"]]  # said once: the body's repeat is left out
    assert head["byline"] == "سلمى حداد" and head["datetime"] == "2026-11-19T18:00:00+00:00"
    assert head["reading"] and head["dir"] == "rtl" and head["copy"] is False
    keys(bidi, context, "\ue00c")  # Escape
    _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore by Esc")


def test_firefox_reader_leaves_hidden_text_out(firefox: tuple[Bidi, Path, str]) -> None:
    from test_outputs_untrusted import check_hidden_tricks

    bidi, _, url = firefox
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.setViewport", {"context": context, "viewport": {"width": 1280, "height": 800}})
    page = url.rsplit("/", 1)[0] + "/pages/hidden-tricks.html"
    bidi.call("browsingContext.navigate", {"context": context, "url": page, "wait": "complete"})
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'reader'", "the reader view")
    check_hidden_tricks(ui_eval(bidi, context, "(root) => root.querySelector('.reader').innerText"))
    keys(bidi, context, "\ue00c")  # Escape
    _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore by Esc")
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
        check_hidden_tricks(re.sub(r"<[^>]+>", " ", text))


def test_firefox_binds_every_declared_shortcut(firefox: tuple[Bidi, Path, str]) -> None:
    bidi, _, url = firefox
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
    time.sleep(0.5)
    bidi.evaluate(context, "window.postMessage('centrum-test-commands', '*')")
    answer = _wait(bidi, context, "document.documentElement.getAttribute('data-test-commands')", "commands.getAll()")
    bound = {c["name"]: c.get("shortcut") for c in json.loads(answer)}
    manifest = json.loads((EXTENSION / "manifest.json").read_text())
    assert bound == {name: c["suggested_key"]["default"] for name, c in manifest["commands"].items()}
