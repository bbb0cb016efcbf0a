"""The options page, the reader's plain-language messages and the keyboard shortcuts in Debian's Chromium, end to
end with the real host: choices made on the options page (an extension page driven with real input) change the
algorithm the next press uses and the debugger starts from them; an answer with little text says so and offers the
debugger; no web page can open, frame or fetch the options page; every command the manifest declares gets its
suggested key on a fresh profile (``chrome.commands.getAll()``), and docs/extension.md lists exactly those keys."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from helpers.chromium_ui import EXTENSION, Session, screenshots, stage, storage, toast, ui_eval, wait_stage
from playwright.sync_api import Page

from centrum.native.install import EXTENSION_ID

REPO = Path(__file__).resolve().parents[2]
OPTIONS_URL = f"chrome-extension://{EXTENSION_ID}/src/options.html"

PARAS = "".join(
    f"<p>Paragraph {i} of the long report: the river rose by {i} centimetres overnight, and the town's volunteers "
    "filled sandbags along the embankment until the early morning while the rain went on.</p>\n" for i in range(12))

# The report is a <div>; the only <article> is a short teaser in the sidebar. The semantic baseline (first
# <main>/<article>) takes the teaser, GCE (the grid's centre) the report.
RIVER = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>River report</title>
<style>body {{ font: 16px sans-serif; margin: 0 }} .wrap {{ display: flex }} #main {{ width: 760px; padding: 20px }}
aside {{ width: 300px }}</style></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/weather">Weather</a></nav>
<div class="wrap"><div id="main"><h1>The river rises</h1>
{PARAS}</div>
<aside><article id="teaser"><h2>Also read</h2><p>A short teaser about the bridge.</p></article></aside></div>
<footer>Footer</footer></body></html>"""

PROBE = f"""<!doctype html><html><head><title>probe</title></head><body><p>probe</p>
<script>
  window.__probe = {{}};
  fetch('{OPTIONS_URL}').then((r) => r.text()).then((t) => window.__probe.fetch = t.length,
                                                      (e) => window.__probe.fetch = 'refused');
  const f = document.createElement('iframe');
  f.src = '{OPTIONS_URL}';
  f.onload = () => {{ try {{ window.__probe.frame = f.contentDocument ? 'readable' : 'opaque'; }}
                      catch (e) {{ window.__probe.frame = 'opaque'; }} }};
  document.body.appendChild(f);
  const w = window.open('{OPTIONS_URL}');
  window.__probe.open = w ? 'window' : 'blocked';
</script></body></html>"""

PAGES: dict[str, tuple[str, str]] = {
    "/river.html": ("text/html; charset=utf-8", RIVER),
    "/probe.html": ("text/html; charset=utf-8", PROBE),
}


def outlined(page: Page) -> list[str]:
    out: list[str] = page.evaluate("() => [...document.querySelectorAll('[data-centrum-main]')].map((e) => e.id)")
    return out


def open_options(ui: Session) -> Page:
    options = ui.browser.contexts[0].new_page()
    options.goto(OPTIONS_URL)
    options.wait_for_function("() => document.documentElement.dataset.ready === '1'", timeout=30_000)
    return options


def choose(page: Page, selector: str, value: str) -> None:
    """Pick ``value`` in a <select> with the keyboard (real input), one arrow key at a time."""
    page.focus(selector)
    for _ in range(50):
        steps = page.evaluate("""([sel, value]) => { const s = document.querySelector(sel);
            return [...s.options].findIndex((o) => o.value === value) - s.selectedIndex; }""", [selector, value])
        if steps == 0:
            return
        page.keyboard.press("ArrowDown" if steps > 0 else "ArrowUp")
    raise AssertionError(f"{selector} did not reach {value!r}")


def wait_storage(ui: Session, key: str, value: Any) -> None:
    deadline = time.monotonic() + 10
    while storage(ui).get(key) != value:
        assert time.monotonic() < deadline, f"storage {key} = {storage(ui).get(key)!r}, expected {value!r}"
        time.sleep(0.05)


def test_options_change_the_algorithm_and_little_text_offers_the_debugger(ui: Session, server: str) -> None:
    # The module's session pins the semantic baseline: it outlines the teaser, and says that is little text.
    page = ui.open(f"{server}/river.html")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    assert outlined(page) == ["teaser"]
    shown = toast(page)
    assert shown and "Only a little text was found" in shown["text"] and "semantic" not in shown["text"]
    assert ui_eval(page, "(root) => [...root.querySelectorAll('.toast .modes button')].map((b) => b.dataset.mode)") \
        == ["debugger", "reader", "annotate"]
    ui.press(page)
    wait_stage(ui, page, "reader")
    ui.press(page)
    wait_stage(ui, page, None)

    options = open_options(ui)
    try:
        assert options.title() == "Centrum options"
        choose(options, "#algorithm", "gce")
        wait_storage(ui, "algorithm", "gce")
        # Its research parameters wait under "Advanced", closed, with their real defaults (the preset's values,
        # never "null") and ranges; one typed value is stored as a number, one out of its range is refused.
        assert options.evaluate("() => document.getElementById('advanced').open") is False
        options.click("#advanced summary")
        fields = options.eval_on_selector_all("#params label", """(rows) => rows.map((r) => {
            const c = r.querySelector('[data-param]');
            return [c.dataset.param, c.localName === 'select' ? c.options[0].textContent : c.placeholder,
                    r.querySelector('.hint').textContent]; })""")
        shown = {name: (default, hint) for name, default, hint in fields}
        assert shown["rows"] == ("4", "1 to 32") and shown["preset"] == ("default (framework)", "")
        assert shown["cell_link_coverage"] == ("0", "0 to 1000") and shown["block_only"][0] == "default (on)"
        assert all(default and "null" not in default for default, _ in shown.values()), shown
        options.click("input[data-param='rows']")
        options.keyboard.type("99")
        options.keyboard.press("Tab")
        assert options.text_content("#status") == "rows must be a number from 1 to 32: not saved."
        assert storage(ui).get("params") is None
        options.fill("input[data-param='rows']", "")
        options.click("input[data-param='rows']")
        options.keyboard.type("7")
        options.keyboard.press("Tab")
        wait_storage(ui, "params", {"rows": 7})
        # The preset decides the defaults of the fields it fills in.
        choose(options, "select[data-param='preset']", '"paper"')
        wait_storage(ui, "params", {"preset": "paper", "rows": 7})
        assert options.get_attribute("input[data-param='cols']", "placeholder") == "8"
        choose(options, "select[data-param='preset']", "")
        wait_storage(ui, "params", {"rows": 7})
        shot_options(options)
    finally:
        options.close()

    page = ui.open(f"{server}/river.html")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    assert outlined(page) == ["main"]  # GCE's answer: the report
    shown = toast(page)
    assert shown and "main content outlined" in shown["text"] and "little text" not in shown["text"]
    ui.press(page)
    wait_stage(ui, page, "reader")
    ui.press(page)
    wait_stage(ui, page, None)

    # The debugger starts from the options' algorithm and its parameters.
    ui_eval(page, "() => null")
    worker = next(w for w in ui.browser.contexts[0].service_workers if "chrome-extension://" in w.url)
    page.bring_to_front()
    tab_id = worker.evaluate("async () => (await chrome.tabs.query({active: true, currentWindow: true}))[0].id")
    worker.evaluate("(id) => centrumOpen(id, 'debugger')", tab_id)
    wait_stage(ui, page, "debugger")
    panel = ui_eval(page, "(root) => ({algo: root.querySelector('.panel select.algo').value, "
                          "params: JSON.parse(root.querySelector('.panel textarea.params').value)})")
    assert panel == {"algo": "gce", "params": {"rows": 7}}
    # Candidate labels are each algorithm's terms: the panel says what each kind means in one line.
    legend = ui_eval(page, "(root) => [...root.querySelectorAll('.panel ul.legend li')].map((l) => l.textContent)")
    assert legend and all(line.startswith("GCE: ") for line in legend)
    ui.press(page)
    wait_stage(ui, page, None)
    ui.set_storage({"algorithm": "semantic", "params": None})


def shot_options(options: Page) -> None:
    shots = screenshots()
    options.set_viewport_size({"width": 900, "height": 900})
    options.evaluate("() => { document.activeElement?.blur(); scrollTo(0, 0); }")
    options.screenshot(path=str(shots / "options.png"), full_page=True)


def test_reader_defaults_from_the_options_page(ui: Session, server: str) -> None:
    options = open_options(ui)
    try:
        choose(options, "#readerTheme", "dark")
        wait_storage(ui, "readerTheme", "dark")
        options.click("#readerMetadata")
        wait_storage(ui, "readerMetadata", False)
        # The shortcuts table shows each command with the key the browser bound.
        rows = options.eval_on_selector_all("#shortcuts tr", "(rows) => rows.map((r) => [r.dataset.command, "
                                                             "r.cells[1].textContent])")
        assert dict(rows) == {"_execute_action": "Alt+Shift+M", "open-debugger": "Alt+Shift+D",
                              "open-annotator": "Alt+Shift+L"}
    finally:
        options.close()
    page = ui.open(f"{server}/river.html")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")
    r = ui_eval(page, """(root) => ({dark: root.querySelector('.reader').classList.contains('dark'),
        copy: root.querySelector(".reader .bar [data-action='copy']").disabled})""")
    assert r == {"dark": True, "copy": True}  # no page HTML sent: no Markdown to copy
    ui.press(page)
    wait_stage(ui, page, None)
    ui.set_storage({"readerTheme": "light", "readerMetadata": True})


def test_no_web_page_reaches_the_options_page(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/probe.html")
    page.wait_for_function("() => 'fetch' in window.__probe", timeout=10_000)
    time.sleep(0.5)
    probe = page.evaluate("() => window.__probe")
    assert probe["fetch"] == "refused"
    assert probe.get("frame") in (None, "opaque")  # the frame is blocked (never loads the options page)
    frames = [f for f in page.frames if f != page.main_frame]
    assert frames and all(f.evaluate("() => document.documentElement.dataset.ready ?? null") is None for f in frames)
    opened = [p.url for p in ui.browser.contexts[0].pages if p.url.startswith("chrome-extension://")]
    for extra in ui.browser.contexts[0].pages[1:]:
        if extra != page:
            extra.close()
    assert opened == []  # a window.open of it is blocked too (not web-accessible)
    # And no page can send the background the options page's request (runtime messages come from the extension).
    assert page.evaluate("() => typeof chrome === 'undefined' || typeof chrome.runtime?.sendMessage") in (
        True, "undefined")


def test_every_declared_shortcut_is_bound(ui: Session) -> None:
    manifest = json.loads((EXTENSION / "manifest.json").read_text())
    declared = {name: c["suggested_key"]["default"] for name, c in manifest["commands"].items()
                if "suggested_key" in c}
    assert len(declared) <= 4  # Chromium's limit on suggested keys
    worker = next(w for w in ui.browser.contexts[0].service_workers if "chrome-extension://" in w.url)
    bound = {c["name"]: c["shortcut"] for c in worker.evaluate("() => chrome.commands.getAll()")}
    assert bound == declared
    # docs/extension.md promises exactly these keys (the ones Chromium refuses are named only as refused).
    page = re.sub(r"\([^()]*stay unset\)", "", (REPO / "docs" / "extension.md").read_text())
    assert set(re.findall(r"`(Alt\+Shift\+[A-Z])`", page)) == set(declared.values())


def test_stage_is_clean_after_the_module(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/river.html")
    assert stage(page) is None
