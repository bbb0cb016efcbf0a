"""Reader view of the extension in Debian's Chromium, end to end (issue #9): toolbar button -> collect.js -> real
native host -> highlight -> reader view with the article's title, text, figure image, table, working link and code
block, the rest of the page hidden -> the next press restores the page exactly. Reader settings (font size,
light/dark, where it opens) persist in chrome.storage; the reader can open in its own tab; right-to-left and CJK
pages are laid out for their script. Screenshots of the modes go to the folder CENTRUM_SCREENSHOTS names
(``docs/screenshots`` for the README), else to the run's temporary folder (conftest ``screenshot_folder``).

The harness (one Chromium per test module with the unpacked extension and the host installed into its
user-data-dir) is ``tests/helpers/chromium_ui.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.chromium_ui import (
    READER,
    Session,
    click_bar,
    open_in_reader,
    open_reader_tab,
    reader,
    shot,
    stage,
    storage,
    ui_eval,
    ui_select,
    wait_stage,
)

REPO = Path(__file__).resolve().parents[2]

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
