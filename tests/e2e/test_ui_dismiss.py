"""A highlight that gets out of the way, in Chromium with the real host (issue #44 items 3 and 5): one outline around
the whole answer, its headline included when the page keeps it above the article's body, the toast in a corner
where it hides none of it; Esc and the toast's × end every mode (highlight, reader, debugger, annotator) and give
the page back exactly; the reader takes the keyboard when it opens; a lead picture that fails to load leaves no
band in the reader."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from helpers.chromium_ui import (
    GLACIER_SVG,
    Session,
    extract_ok_lines,
    shot,
    stage,
    ui_click,
    ui_eval,
    ui_wait,
    wait_stage,
)
from playwright.sync_api import Page

PARAGRAPHS = "".join(f"<p>Paragraph {i}: the ferry crossed the sound at first light, the crew counting the buoys "
                     "that marked the new channel dredged over the winter months.</p>" for i in range(12))

# The headline sits outside the article (in a header above it), as news sites build their pages; the story is the
# right-hand column, so the toast's usual top right corner would cover it.
NEWS = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sound news</title>
<meta property="og:image" content="{{lead}}">
<style>body {{ font: 16px sans-serif; margin: 0 }} nav, footer {{ padding: 10px; background: #eee }}
.wrap {{ display: flex }} .col {{ width: 480px; background: #fde }} .main {{ width: 680px; padding: 0 20px }}
</style></head><body>
<nav id="nav"><a href="/">Home</a> <a href="/sport">Sport</a></nav>
<div class="wrap"><aside class="col" id="side">Most read: a list of other stories.</aside>
<div class="main"><header id="top"><h1 id="headline">The new channel opens</h1></header>
<article id="story">{PARAGRAPHS}</article></div></div>
<footer id="foot">Footer, copyright and contact.</footer></body></html>"""

# A thread of posts, which R4 answers as several elements.
FORUM = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Forum</title><style>body{font:16px
sans-serif;margin:0} .post{margin:10px;padding:10px;border:1px solid #ccc}</style></head><body>
<div class="menu"><a href="/a">A</a> <a href="/b">B</a></div>
<h1>Which rope for winter routes?</h1>
<div class="thread">
<div class="post"><div class="who">anna</div><p>I am looking for a rope for winter routes in the Alps, something
light but dry treated, any advice from people who climb there every season?</p></div>
<div class="post"><div class="who">ben</div><p>A half rope pair of 8.5 mm with a full dry treatment has served me
well for years on mixed ground and ice, it stays light even when wet.</p></div>
<div class="post"><div class="who">carla</div><p>Twin ropes are lighter still, but you must clip both strands every
time, which is fine on ice and more awkward on wandering rock pitches.</p></div>
<div class="post"><div class="who">dan</div><p>Whatever you pick, store it dry over the summer and check the sheath
after every season, the cold makes the nylon stiff and ice crystals cut.</p></div>
</div>
<div class="foot"><a href="/x">Contact</a></div></body></html>"""

# Large enough that the host's answer takes a while: the "working" message is up long enough to be closed.
BIG = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Big</title></head><body><article>"
       + "".join(f"<section><h2>Part {i}</h2><p>Part {i} of the long report: the river rose overnight and the "
                 "volunteers filled sandbags until the morning.</p></section>" for i in range(6000))
       + "</article></body></html>")

PAGES: dict[str, tuple[str, str]] = {
    "/big.html": ("text/html; charset=utf-8", BIG),
    "/forum.html": ("text/html; charset=utf-8", FORUM),
    "/news.html": ("text/html; charset=utf-8", NEWS.replace("{lead}", "/missing.jpg")),
    "/news-lead.html": ("text/html; charset=utf-8", NEWS.replace("{lead}", "/lead.svg")),
    "/lead.svg": ("image/svg+xml", GLACIER_SVG),
}

OUTLINE = """(root) => [...(root?.querySelectorAll('.layer[data-layer="main"] .box') ?? [])].map((b) => {
    const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })"""


def rect(page: Page, selector: str) -> list[float]:
    out: list[float] = page.evaluate("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom]; }""", selector)
    return out


def inside(inner: list[float], outer: list[float]) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def toast_rect(page: Page) -> list[float]:
    out: list[float] = ui_eval(page, """(root) => { const r = root.querySelector('.toast').getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom]; }""")
    return out


def restored(ui: Session, page: Page, before: str) -> None:
    wait_stage(ui, page, None)
    assert page.evaluate("() => document.querySelector('centrum-ui')") is None
    assert page.evaluate("() => document.documentElement.outerHTML") == before


@pytest.fixture
def news(ui: Session, server: str) -> tuple[Page, str]:
    page = ui.open(f"{server}/news.html")
    page.set_viewport_size({"width": 1280, "height": 800})
    return page, page.evaluate("() => document.documentElement.outerHTML")


def test_one_outline_around_answer_and_headline_toast_beside_it(ui: Session, news: tuple[Page, str]) -> None:
    page, before = news
    ui.press(page)
    wait_stage(ui, page, "highlight")
    assert page.evaluate("() => [...document.querySelectorAll('[data-centrum-main]')].map(e => e.id)") == ["story"]
    boxes = ui_eval(page, OUTLINE)
    assert len(boxes) == 1, boxes
    # The headline (outside the <article>) is in the outline with the story; the sidebar is not.
    assert inside(rect(page, "#story"), boxes[0]) and inside(rect(page, "#headline"), boxes[0])
    assert not overlap(rect(page, "#side"), boxes[0])
    # The toast hides nothing of the outlined answer (its usual top right corner would).
    assert not overlap(toast_rect(page), boxes[0]), (toast_rect(page), boxes[0])
    shot(page, "highlight-outline.png")
    # Scrolled down to the page's end the answer still misses the toast.
    page.mouse.wheel(0, 400)
    page.wait_for_timeout(300)
    assert not overlap(toast_rect(page), ui_eval(page, OUTLINE)[0])
    page.keyboard.press("Escape")
    restored(ui, page, before)


def test_answer_of_many_elements_has_one_outline(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/forum.html")
    before = page.evaluate("() => document.documentElement.outerHTML")
    ui.set_storage({"algorithm": "r4"})
    try:
        ui.press(page)
        wait_stage(ui, page, "highlight")
        marked = page.evaluate("""() => [...document.querySelectorAll('[data-centrum-main]')].map((e) => {
            const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })""")
        boxes = ui_eval(page, OUTLINE)
        assert len(marked) > 1 and len(boxes) == 1, (marked, boxes)
        assert all(inside(m, boxes[0]) for m in marked)
        assert inside(rect(page, "h1"), boxes[0])  # the thread's title, above the posts
        ui_click(page, ".toast button.x")  # the toast's × ends the highlight, not the message only
        restored(ui, page, before)
    finally:
        ui.set_storage({"algorithm": "semantic"})


def test_esc_ends_the_reader_at_once_and_a_broken_lead_picture_leaves_no_band(ui: Session, server: str) -> None:
    for path, lead in (("/news.html", False), ("/news-lead.html", True)):
        page = ui.open(f"{server}{path}")
        before = page.evaluate("() => document.documentElement.outerHTML")
        ui.press(page)
        wait_stage(ui, page, "highlight")
        ui_click(page, ".toast button[data-mode='reader']")  # focus on the toast's button, which goes with it
        wait_stage(ui, page, "reader")
        assert ui_eval(page, "(root) => root.activeElement?.className") == "reader"  # the keyboard is the reader's
        # The lead picture stays when it loads and goes when it fails.
        ui_wait(page, """(root) => { const img = root.querySelector('.reader figure.lead img');
            return !img || (img.complete && img.naturalWidth > 0); }""")
        assert ui_eval(page, "(root) => root.querySelectorAll('.reader figure.lead').length") == int(lead)
        page.keyboard.press("Escape")
        restored(ui, page, before)


@pytest.mark.parametrize(("mode", "panel"), [("debugger", ".panel.debugger"), ("annotate", ".panel.annot")])
def test_esc_and_close_end_the_panels(ui: Session, news: tuple[Page, str], mode: str, panel: str) -> None:
    page, before = news
    for close in ("Escape", "x"):
        ui.press(page)
        wait_stage(ui, page, "highlight")
        ui_click(page, f".toast button[data-mode='{mode}']")
        wait_stage(ui, page, mode, timeout_s=60)
        field = f"{panel} {'textarea.params' if mode == 'debugger' else 'input.annotator'}"
        ui_click(page, field)
        page.keyboard.press("Escape")  # in a field Esc leaves the field first: nothing typed there is lost
        assert stage(page) == mode
        assert ui_eval(page, "(root) => root.activeElement?.localName ?? null") is None
        if close == "Escape":
            page.keyboard.press("Escape")
        else:
            ui_click(page, f"{panel} button.x")
        restored(ui, page, before)


def test_esc_ends_a_message(ui: Session, news: tuple[Page, str]) -> None:
    page, before = news
    ui.set_storage({"algorithm": "no-such-algorithm"})
    try:
        ui.press(page)
        ui_wait(page, "(root) => Boolean(root?.querySelector('.toast[role=alert]'))")
        assert stage(page) is None
        page.keyboard.press("Escape")
        page.wait_for_function("() => !document.querySelector('centrum-ui')", timeout=10_000)
        assert page.evaluate("() => document.documentElement.outerHTML") == before
    finally:
        ui.set_storage({"algorithm": "semantic"})


def host_pids(home: Path) -> list[int]:
    """The host processes the browser started for this session: the launcher's ``python -m
    centrum.native.nativehost`` with the session's CENTRUM_HOME (the browser itself has that too)."""
    want = f"CENTRUM_HOME={home}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (b"centrum.native.nativehost" in (proc / "cmdline").read_bytes().split(b"\0")
                        and want in (proc / "environ").read_bytes().split(b"\0")):
                    pids.append(int(proc.name))
            except OSError:  # gone, or not ours
                continue
    return pids


def test_closing_the_working_message_drops_the_answer_on_its_way(ui: Session, server: str) -> None:
    page = ui.open(f"{server}/big.html")
    before = page.evaluate("() => document.documentElement.outerHTML")
    log = ui.home / "host.log"  # written once the browser first starts the host
    served = lambda: len(extract_ok_lines(log.read_text())) if log.exists() else 0  # noqa: E731
    earlier = served()
    # The host is held (SIGSTOP) while the message is up, so the answer cannot come before Esc however fast the
    # host has become; once released it answers the request already in its pipe.
    pids = host_pids(ui.home)
    assert pids, "the browser's host is not running (it is started when the extension loads)"
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        ui.press(page)
        ui_wait(page, "(root) => root?.querySelector('.toast')?.textContent.includes('reading the page') || null")
        page.keyboard.press("Escape")
        page.wait_for_function("() => !document.querySelector('centrum-ui')", timeout=10_000)
        assert served() == earlier
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 60
    while served() == earlier:  # the answer comes back to the page...
        assert time.monotonic() < deadline, "the host never answered"
        time.sleep(0.1)
    time.sleep(1)
    assert page.evaluate("() => document.querySelector('centrum-ui')") is None  # ...and is not shown
    assert stage(page) is None and page.evaluate("() => document.documentElement.outerHTML") == before
