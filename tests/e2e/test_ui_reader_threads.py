"""Threads and comments in the reader, in Chromium with the real host and the default algorithm (issue #44 item 2):
a forum thread reads whole with each post's author and date as small text and its quotes as quotes, without user
cards, signatures, post actions or page links (tests/pages/forum-quotes); the comments a blog's answer set aside
come as a collapsed "Comments (N)" section at the reader's end that opens on demand, in the page and in the reader
tab, and the reader's × gives the page back (tests/pages/blog-comments). The reader text of both golden pages is
their ``reader.txt`` (``CENTRUM_REGENERATE_READER=1`` rewrites it; review the diff). A headline a page repeats as the
body's first line is said once. Firefox: tests/e2e/test_firefox_reader.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.chromium_ui import (
    Session,
    open_reader_tab,
    screenshots,
    shot,
    ui_click,
    ui_eval,
    ui_session,
    ui_wait,
    wait_stage,
)
from helpers.reader_probes import ARTICLE_TEXT, COMMENTS, HEAD, open_reader
from playwright.sync_api import Page, Playwright

GOLDEN = Path(__file__).resolve().parents[1] / "pages"
SLUGS = ("forum-quotes", "blog-comments")

# A news page as Russian sites often build one: the section and the date first, then the headline in a styled
# <div> (no heading element), which is also the page's declared title.
RU = """<!doctype html><html lang="ru"><head><meta charset="utf-8">
<title>В порту открыли новый причал для паромов — Вести побережья</title>
<meta property="og:title" content="В порту открыли новый причал для паромов">
<meta property="og:site_name" content="Вести побережья"></head><body>
<nav><a href="/">Главная</a> <a href="/city">Город</a></nav>
<article class="article"><div class="article__rubric">Город · 12 ноября 2026</div>
<div class="article__title" style="font-size: 32px; font-weight: bold">В порту открыли новый причал для паромов.</div>
<p>Новый причал принял первый паром в среду утром. Строительство заняло полтора года, и теперь в порту могут
одновременно стоять два больших судна, а пассажиры ждут посадки в тёплом зале.</p>
<p>Городские власти обещают, что летом паромы будут ходить на острова каждый час, а зимой четыре раза в день.</p>
</article></body></html>"""

PAGES: dict[str, tuple[str, str]] = {
    **{f"/{slug}.html": ("text/html; charset=utf-8", (GOLDEN / slug / "page.html").read_text(encoding="utf-8"))
       for slug in SLUGS},
    "/ru.html": ("text/html; charset=utf-8", RU),
}


@pytest.fixture(scope="module")
def ui(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    for session in ui_session(playwright, tmp_path_factory.mktemp("reader-threads")):
        session.set_storage({"algorithm": "ensemble"})  # the default, which sets comments aside
        yield session


def reader_text(slug: str, page: Page) -> str:
    """The reader article's text, compared with the golden page's reader.txt (or written to it on request)."""
    text: str = ui_wait(page, ARTICLE_TEXT)
    expected = GOLDEN / slug / "reader.txt"
    if os.environ.get("CENTRUM_REGENERATE_READER"):
        expected.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == expected.read_text(encoding="utf-8"), text
    return text


def test_a_forum_thread_reads_whole_with_small_bylines_and_quotes(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/forum-quotes.html")
    page.set_viewport_size({"width": 1280, "height": 900})
    before = page.evaluate("() => document.documentElement.outerHTML")
    open_reader(ui, page)
    text = reader_text("forum-quotes", page)
    for post in ("My 120 litre tank", "With readings like that", "That explains it", "Same thing happened",
                 "Update: six days"):
        assert post in text
    for chrome in ("Joined", "Reaction score", "Fish Fanatic", "Planted and patient", "Report", "Like", "Page 1 of 1",
                   "#2"):
        assert chrome not in text, chrome
    small = ui_eval(page, "(root) => [...root.querySelectorAll('.reader .content small')].map((s) => s.textContent)")
    assert small[:2] == ["pebble_tetra", "Mar 9, 2026 at 7:41 PM"], small
    quotes = ui_eval(page, "(root) => [...root.querySelectorAll('.reader .content blockquote')].map((q) => "
                           "q.textContent.replace(/\\s+/g, ' ').trim())")
    assert quotes == ["pebble_tetra said: Ammonia and nitrite read zero, nitrate about twenty.",
                      "reefkeeper_jo said: Resist the urge to change more water every day; that feeds the bloom.",
                      "mossy_bank said: Five days later the water was crystal clear again without any treatment"]
    assert ui_eval(page, COMMENTS) is None  # a thread's posts are its content, not comments set aside
    shot(page, "reader-thread.png")
    page.keyboard.press("Escape")
    wait_stage(ui, page, None)
    assert page.evaluate("() => document.documentElement.outerHTML") == before


def test_the_comments_set_aside_open_on_demand_and_close_gives_the_page_back(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/blog-comments.html")
    page.set_viewport_size({"width": 1280, "height": 900})
    before = page.evaluate("() => document.documentElement.outerHTML")
    open_reader(ui, page)
    text = reader_text("blog-comments", page)
    assert "The descent follows the new path" in text and "Hanne" not in text
    comments = ui_wait(page, COMMENTS)
    assert comments["summary"] == "Comments (6)" and comments["open"] is False and comments["last"] is True
    ui_click(page, ".reader details.comments > summary")
    opened = ui_wait(page, "(root) => { const c = root.querySelector('.reader details.comments'); "
                           "return c.open && c.querySelector('.content').innerText; }")
    for said in ("Hanne", "We tried the same ridge walk", "Marco, the 1:25,000 sheet", "Greta"):
        assert said in opened, said
    assert "Reply" not in opened and "Leave a reply" not in opened and "Recent comments" not in opened
    # Playwright's screenshot hides the caret by styling the page's text fields (style="" stays on the
    # <textarea>): caret="initial" leaves the page as it is, so the comparison below sees the extension's doing only.
    page.screenshot(path=str(screenshots() / "reader-comments.png"), caret="initial")
    ui_click(page, ".reader .bar [data-action='close']")  # the reader's ×
    wait_stage(ui, page, None)
    assert page.evaluate("() => document.querySelector('centrum-ui')") is None
    assert page.evaluate("() => document.documentElement.outerHTML") == before


def test_a_headline_the_body_repeats_is_said_once(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/ru.html")
    open_reader(ui, page)
    head = ui_wait(page, HEAD)
    assert head["title"] == "В порту открыли новый причал для паромов"
    text = ui_wait(page, ARTICLE_TEXT)
    assert text.count("новый причал для паромов") == 1, text
    assert "Город · 12 ноября 2026" in text  # what precedes the repeated line stays
    ui.press(page)
    wait_stage(ui, page, None)



def test_the_comments_section_in_the_reader_tab(ui: Session, server: str) -> None:
    # The tab gets the comments as data with the rest (storage), and opens them the same way.
    page = ui.open(f"{server}/blog-comments.html")
    ui.set_storage({"readerIn": "tab"})
    try:
        tab = open_reader_tab(ui, page)
        summary = tab.locator(".reader details.comments > summary")
        assert summary.text_content() == "Comments (6)"
        summary.click()
        tab.wait_for_function("() => document.querySelector('.reader details.comments').open")
        assert "Marco, the 1:25,000 sheet" in tab.locator(".reader details.comments .content").inner_text()
        tab.close()
        wait_stage(ui, page, None)
    finally:
        ui.set_storage({"readerIn": "page"})
