"""The reader view in Chromium on pages that hide text or carry live HTML in their metadata (issue #40): the in-page
reader and the reader tab show every SHOWN string of tests/fixtures/pages/hidden-tricks.html and no HIDDEN one
(clean.js asks the collector's SEEN rule of the live elements, the rule the host's outputs read from the
snapshot), and Copy as Markdown (the host's Markdown) leaves the same text out and keeps a hostile page's front
matter inert. Firefox: tests/e2e/test_firefox_reader.py."""

from __future__ import annotations

from pathlib import Path

from helpers.chromium_ui import Session, open_reader_tab, ui_click, ui_eval, wait_stage
from helpers.hidden_tricks import check_hidden
from helpers.reader_probes import open_reader, read_clipboard, status
from playwright.sync_api import Page

FIXTURE_PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"
PAGES = {
    **{f"/{name}": ("text/html; charset=utf-8", (FIXTURE_PAGES / name).read_text(encoding="utf-8"))
       for name in ("hidden-tricks.html", "hostile-meta.html")},
    "/blank.html": ("text/html; charset=utf-8", "<!doctype html><title>blank</title><p>clipboard reader</p>"),
}


def close_reader(ui: Session, page: Page) -> None:
    page.bring_to_front()
    ui.press(page)
    wait_stage(ui, page, None)


def copied_markdown(ui: Session, page: Page, server: str) -> str:
    ui.cdp.send("Browser.grantPermissions", {"origin": server, "permissions": ["clipboardReadWrite"]})
    ui_click(page, ".reader .bar [data-action='copy']")
    status(page, "Copied")
    return read_clipboard(ui, server)


def test_hidden_text_stays_out_of_the_reader_and_its_markdown(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/hidden-tricks.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    open_reader(ui, page)
    check_hidden(ui_eval(page, "(root) => root.querySelector('.reader').innerText"))
    check_hidden(copied_markdown(ui, page, server))
    close_reader(ui, page)


def test_hidden_text_stays_out_of_the_reader_tab(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/hidden-tricks.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    ui.set_storage({"readerIn": "tab"})
    try:
        tab = open_reader_tab(ui, page)
        check_hidden(tab.evaluate("() => document.querySelector('.reader').innerText"))
        tab.close()
        wait_stage(ui, page, None)
    finally:
        ui.set_storage({"readerIn": "page"})


def test_copied_front_matter_of_a_hostile_page_is_inert(ui: Session, server: str) -> None:
    from lxml import html
    from markdown_it import MarkdownIt

    page = ui.open(f"{server}/hostile-meta.html")
    open_reader(ui, page)
    markdown = copied_markdown(ui, page, server)
    assert markdown.startswith("---\ntitle: \"Harbour notes \\u003cimg src=x onerror=alert(1)\\u003e")
    rendered = html.fromstring(f"<div>{MarkdownIt().render(markdown)}</div>")
    elements = [(el.tag, sorted(el.attrib)) for el in rendered.iter() if el is not rendered]
    assert {tag for tag, _ in elements} <= {"hr", "p", "h1", "h2"} and all(not a for _, a in elements), elements
    close_reader(ui, page)
