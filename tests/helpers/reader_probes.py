"""What the reader tests read of the reader view, for Chromium (Playwright) and Firefox (WebDriver BiDi) alike: one
header probe, one comments probe (JS functions ``(root) => ...`` called with the extension UI's closed shadow root
by either browser's ``ui_eval``), and the Chromium steps several reader test modules share (open the reader, wait
for the toolbar's status, read the clipboard). Test modules import it, never each other for it."""

from __future__ import annotations

from playwright.sync_api import Page

from helpers.chromium_ui import Session, ui_wait, wait_stage

# The reader's header (site, title, byline, date, reading time), the content's headings, the article's script and
# direction, and whether Copy is offered; null while there is no header.
HEAD = """(root) => {
    const head = root?.querySelector('.reader .head');
    if (!head) return null;
    const art = root.querySelector('.reader article');
    const q = (s) => head.querySelector(s)?.textContent ?? null;
    return {site: q('.site'), title: q('h1.title'), byline: q('.byline'), date: q('time.date'),
            datetime: head.querySelector('time.date')?.getAttribute('datetime') ?? null, reading: q('.reading'),
            headings: [...root.querySelectorAll('.reader .content h1, .reader .content h2')].map((h) =>
                [h.localName, h.textContent]),
            cls: art.className, lang: art.lang, dir: art.getAttribute('dir'),
            copy: root.querySelector(".reader .bar [data-action='copy']")?.disabled ?? null};
}"""

# The reader's "Comments (N)" section (readerview.js commentsSection): its summary, whether it is open, and the
# text it shows; null while there is none. With ``true`` as argument it opens the section first (a real click is
# the test's job; this is the state after it).
COMMENTS = """(root) => {
    const c = root?.querySelector('.reader details.comments');
    if (!c) return null;
    const body = c.querySelector('.content');
    return {summary: c.querySelector('summary').textContent, open: c.open, text: body.innerText,
            last: c === root.querySelector('.reader article').lastElementChild,
            quotes: body.querySelectorAll('blockquote').length};
}"""

# The reader article's text as a reader reads it (innerText: what is laid out, line by line), without the collapsed
# comments (their summary only).
ARTICLE_TEXT = "(root) => root?.querySelector('.reader article')?.innerText ?? null"


def open_reader(ui: Session, page: Page) -> None:
    """Press twice: the highlight, then the reader in the page."""
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui.press(page)
    wait_stage(ui, page, "reader")


def status(page: Page, needle: str) -> str:
    """The reader toolbar's status line once it says ``needle``."""
    out: str = ui_wait(page, """(root, needle) => { const s = root?.querySelector('.reader .bar .status');
        return s && s.textContent.includes(needle) ? s.textContent : null; }""", needle, timeout_s=10)
    return out


def read_clipboard(ui: Session, server: str) -> str:
    """The clipboard's text, read on a secure page (127.0.0.1) allowed to read it (``server`` serves /blank.html)."""
    reader = ui.browser.contexts[0].new_page()
    try:
        reader.goto(f"{server}/blank.html")
        origin = server.rstrip("/")
        ui.cdp.send("Browser.grantPermissions", {"origin": origin, "permissions": ["clipboardReadWrite"]})
        reader.bring_to_front()
        text: str = reader.evaluate("() => navigator.clipboard.readText()")
        return text
    finally:
        reader.close()

