"""Annotation campaign end to end in real Chromium through the real host: 4 pages served by ``centrum serve``
(centrum.annotation.serve on 127.0.0.1), 2 annotators who each label through the queue from the panel (accept the
suggestion,
change it, skip, resume in a new tab), ``centrum labels campaign status`` (progress, agreement), one disagreement
adjudicated in the panel, the export evaluated by ``centrum eval`` (DOM-node F1) and trained on by ``centrum train``
next to tests/fixtures/tinyset. Also the annotator fixes: ↑/↓ skip wrappers with the same text, the name field
takes focus, and the panel moves out of the selection's way."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.chromium_ui import Session, shot, ui_click, ui_eval, ui_fill, ui_wait, wait_stage
from playwright.sync_api import Page

from centrum.annotation.serve import DatasetServer

REPO = Path(__file__).resolve().parents[2]
TINYSET = REPO / "tests" / "fixtures" / "tinyset"
PANEL = ".panel.annot"
WORDS = ("canal lock gates river barge towpath water level keeper boat harbour bridge mooring rope engine "
         "timber stone basin weir flood").split()


def article_page(k: int) -> str:
    words = WORDS[k:] + WORDS[:k]
    p1 = " ".join(words[:12]).capitalize() + "."
    p2 = " ".join(reversed(words[4:18])).capitalize() + "."
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Canal notes {k}</title>'
            '<style>body{margin:0;font:16px/1.5 serif} article{margin:20px 20px 0 20px}</style>'
            # A saved page's own script runs (sandboxed) and its handlers and javascript: links are cut on export.
            '<script>document.documentElement.dataset.ran = "yes";</script></head><body>'
            '<nav id="nav"><a href="/">Home</a> <a href="/p/p1">First</a> '
            '<a href="javascript:void(0)" onclick="return false">Menu</a></nav>'
            f'<article id="story"><h1 id="h">Canal notes number {k}</h1><p id="p1">{p1}</p><p id="p2">{p2}</p>'
            '</article><aside id="side">Most read: the weather, the markets and the football results.</aside>'
            '<footer>Copyright the canal society</footer></body></html>')


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DatasetServer, Path]]:
    root = tmp_path_factory.mktemp("campaign-set")
    (root / "pages").mkdir()
    for k in range(1, 5):
        (root / "pages" / f"p{k}.html").write_text(article_page(k), encoding="utf-8")
    (root / "pages" / "extra").mkdir()
    (root / "pages" / "extra" / "wrappers.html").write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Wrappers</title>'
        '<style>body{margin:0} #story{position:fixed;left:0;bottom:0;width:500px;height:600px}</style></head><body>'
        '<article id="story"><h1>Heading of the story</h1><div id="w1"><div id="w2"><p id="only">Only this text '
        'in two wrappers.</p></div></div><p id="other">Another paragraph.</p></article></body></html>',
        encoding="utf-8")
    with DatasetServer(root) as server:
        yield server, root


def centrum(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "CENTRUM_HOME": str(home)}, cwd=REPO)


def panel(page: Page) -> dict[str, Any]:
    out: dict[str, Any] = ui_eval(page, """(s) => {
        const p = s && s.querySelector('.panel.annot');
        if (!p) return null;
        const boxes = (cls) => s.querySelectorAll(`.layer[data-layer="annot"] .box.${cls}`).length;
        return {progress: p.querySelector('.progress')?.textContent ?? null,
                status: p.querySelector('.status').textContent,
                suggested: boxes('suggested'), picked: boxes('picked'),
                buttons: [...p.querySelectorAll('.campaign button')].map((b) => b.className)};
    }""")
    return out


def wait_status(page: Page, prefix: str) -> str:
    got: str = ui_wait(page, """(s, prefix) => { const t = s?.querySelector('.panel.annot .status')?.textContent;
        return t && t.startsWith(prefix) ? t : null; }""", prefix, timeout_s=60)
    return got


def open_page(ui: Session, page: Page, position: int, total: int) -> dict[str, Any]:
    """Press on the campaign page the tab shows: the annotator opens at once, with the suggestion."""
    ui.press(page)
    wait_stage(ui, page, "annotate")
    ui_wait(page, "(s) => !!s?.querySelector('.panel.annot .progress')", timeout_s=60)
    p = panel(page)
    assert p["progress"].endswith(f"page {position} of {total}"), p
    return p


def join(ui: Session, page: Page, name: str, campaign: str = "camp") -> None:
    ui_fill(page, f"{PANEL} input.annotator", name)
    ui_fill(page, f"{PANEL} input.campaign-name", campaign)
    ui_click(page, f"{PANEL} button.join")


def annotate_as_alice(ui: Session, page: Page, base: str) -> None:
    page.goto(f"{base}p/p1")
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui_click(page, ".toast button[data-mode='annotate']")
    wait_stage(ui, page, "annotate")
    join(ui, page, "alice")  # already on p1, the first page of her queue: the panel comes back in the campaign
    ui_wait(page, "(s) => !!s?.querySelector('.panel.annot .progress')", timeout_s=60)
    p = panel(page)
    assert p["progress"] == "Campaign camp \u00b7 page 1 of 4" and p["suggested"] == 1, p
    assert page.evaluate("document.documentElement.dataset.ran + ' ' + self.origin") == "yes null"  # sandboxed
    shot(page, "campaign.png")  # README "Annotation campaigns"
    page.keyboard.press("a")  # one key accepts the suggestion (semantic: the <article>)
    page.wait_for_url(f"{base}p/p2", timeout=60_000)
    # p2: she changes the suggestion to the first paragraph only.
    open_page(ui, page, 2, 4)
    page.locator("#p1").click(position={"x": 12, "y": 8})
    page.keyboard.press("Enter")
    page.keyboard.press("s")
    page.wait_for_url(f"{base}p/p3", timeout=60_000)
    p = open_page(ui, page, 3, 4)
    ui_click(page, f"{PANEL} button.skip")
    page.wait_for_url(f"{base}p/p4", timeout=60_000)
    open_page(ui, page, 4, 4)  # the skipped page counts as handled
    ui_click(page, f"{PANEL} button.accept")
    assert wait_status(page, "Saved label #").endswith("All pages of the campaign are done.")


def annotate_as_bob(ui: Session, page: Page, base: str) -> Page:
    ui_click(page, f"{PANEL} button.leave")
    wait_status(page, "left the campaign")
    join(ui, page, "bob")
    page.wait_for_url(f"{base}p/p1", timeout=60_000)
    open_page(ui, page, 1, 4)
    page.keyboard.press("a")
    page.wait_for_url(f"{base}p/p2", timeout=60_000)
    # Resume: a new tab on the server's index (as after a browser restart) leads back to his open page.
    page.close()
    page = ui.open(base)
    ui.press(page)
    wait_stage(ui, page, "annotate")
    ui_wait(page, "(s) => !!s?.querySelector('.panel.annot button.mine')", timeout_s=60)
    ui_click(page, f"{PANEL} button.mine")
    page.wait_for_url(f"{base}p/p2", timeout=60_000)
    for k in (2, 3, 4):
        open_page(ui, page, k, 4)
        page.keyboard.press("a")
        if k < 4:
            page.wait_for_url(f"{base}p/p{k + 1}", timeout=60_000)
    wait_status(page, "Saved label #")
    return page


def test_campaign_queue_agreement_adjudication_export_eval_train(ui: Session, served: Any, tmp_path: Path) -> None:
    server, root = served
    base = server.url
    made = centrum("labels", "campaign", "create", "camp", "--pages", str(root / "pages"), "--annotators",
                   "alice,bob", "--overlap", "2", home=ui.home)
    assert made.returncode == 0, made.stderr
    page = ui.open(f"{base}p/p1")
    page.set_viewport_size({"width": 1280, "height": 800})
    annotate_as_alice(ui, page, base)
    page = annotate_as_bob(ui, page, base)

    db = ui.home / "labels.sqlite3"
    st = json.loads(centrum("labels", "campaign", "status", "camp", "--json", home=ui.home).stdout)
    a, b = st["annotators"]["alice"], st["annotators"]["bob"]
    assert (a["done"], a["skipped"], a["changed"], a["with_suggestion"]) == (3, 1, 1, 3), a
    assert (b["done"], b["changed"]) == (4, 0), b
    pages = {p["page_id"]: p for p in st["pages"]}
    assert pages["p1"]["node_f1"] == 1.0 and pages["p4"]["node_f1"] == 1.0 and pages["p3"]["pairs"] == []
    # p2: alice kept <p#p1> of the article {article, h1, p1, p2}: node F1 = 2 * 1 / (1 + 4).
    assert pages["p2"]["node_f1"] == pytest.approx(0.4) and pages["p2"]["kappa"] < 0.6
    assert st["adjudicate"] == ["p2"]
    text = centrum("labels", "campaign", "status", "camp", home=ui.home).stdout
    assert "alice" in text and "to adjudicate (lowest pair node F1 < 0.9): p2" in text

    # bob reviews p2 in the panel and picks alice's narrower label.
    page.goto(f"{base}p/p2")
    ui.press(page)
    wait_stage(ui, page, "annotate")
    ui_wait(page, "(s) => !!s?.querySelector('.panel.annot button.review')", timeout_s=60)
    ui_click(page, f"{PANEL} button.review")
    ui_wait(page, "(s) => s?.querySelectorAll('.panel.annot li.label').length === 2", timeout_s=60)
    names = ui_eval(page, "(s) => [...s.querySelectorAll('.panel.annot li.label')].map((li) => li.textContent)")
    assert names[0].startswith("alice: 1 node(s)") and names[1].startswith("bob: 1 node(s)"), names
    ui_click(page, f"{PANEL} li.label button.pick")  # the first: alice's
    assert "(pick) is the page's gold" in wait_status(page, "Adjudicated")
    st = json.loads(centrum("labels", "campaign", "status", "camp", "--json", home=ui.home).stdout)
    assert st["adjudicate"] == [] and st["pages"][1]["adjudicated"]["reviewer"] == "bob"
    # A merge on p1: Union of both labels (the same <article>), saved as the reviewer's own gold.
    page.goto(f"{base}p/p1")
    ui.press(page)
    wait_stage(ui, page, "annotate")
    ui_wait(page, "(s) => !!s?.querySelector('.panel.annot button.review')", timeout_s=60)
    ui_click(page, f"{PANEL} button.review")
    ui_wait(page, "(s) => s?.querySelectorAll('.panel.annot li.label').length === 2", timeout_s=60)
    ui_click(page, f"{PANEL} button.union")
    assert panel(page)["picked"] == 1  # both chose the article: the union is one node
    ui_click(page, f"{PANEL} button.merge")
    assert "(merge) is the page's gold" in wait_status(page, "Adjudicated")

    out = tmp_path / "export"
    ex = centrum("labels", "export", "--campaign", "camp", str(out), "--db", str(db), home=ui.home)
    assert ex.returncode == 0 and "wrote 4 pages (2 adjudicated)" in ex.stdout, ex.stderr
    meta = {m["id"]: m for m in map(json.loads, (out / "meta.jsonl").read_text(encoding="utf-8").splitlines())}
    assert meta["p2"]["node_paths"] == ["html:1>body:2>article:2>p:2"] and meta["p2"]["annotator"] == "alice"
    assert meta["p1"]["node_paths"] == ["html:1>body:2>article:2"] and meta["p1"]["annotator"] == "bob"
    assert meta["p1"]["gold_from"] == "adjudicated (merge by bob)"
    # The exported pages are private and inert; every element stays, so the node paths resolve in eval below.
    assert {p.relative_to(out).as_posix(): p.stat().st_mode & 0o777 for p in out.rglob("*") if p.is_dir()} == {
        "pages": 0o700, "gold": 0o700}
    assert {p.stat().st_mode & 0o777 for p in out.rglob("*") if p.is_file()} == {0o600}
    for k in range(1, 5):
        html = (out / "pages" / f"p{k}.html").read_text(encoding="utf-8")
        assert "onclick" not in html and "javascript:" not in html and "dataset.ran" not in html, html
        assert "<script></script>" in html and ">Menu</a>" in html

    cache = tmp_path / "cache"
    report = tmp_path / "report"
    ev = centrum("eval", str(out), "--peers", "none", "--algorithms", "semantic", "--out", str(report),
                 "--cache", str(cache), home=ui.home)
    assert ev.returncode == 0, ev.stderr[-3000:]
    with (report / "results.csv").open(encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    assert float(rows["p1"]["node_f1"]) == 1.0 and float(rows["p2"]["node_f1"]) == pytest.approx(0.4)
    assert "DOM-node F1" in (report / "report.md").read_text(encoding="utf-8")

    # The export trains next to a shared-layout set (both rendered into the same cache first).
    ev2 = centrum("eval", str(TINYSET), "--peers", "none", "--algorithms", "semantic", "--out",
                  str(tmp_path / "report-tiny"), "--cache", str(cache), home=ui.home)
    assert ev2.returncode == 0, ev2.stderr[-3000:]
    model = tmp_path / "model.lgb.txt"
    tr = centrum("train", str(out), str(TINYSET), "--cache", str(cache), "--out", str(model), home=ui.home)
    assert tr.returncode == 0, (tr.stdout[-2000:], tr.stderr[-3000:])
    assert model.is_file() and model.stat().st_size > 0


def test_annotator_fixes_same_text_levels_name_focus_panel_placement(ui: Session, served: Any) -> None:
    server, _ = served
    page = ui.open(f"{server.url}p/extra/wrappers.html")  # served, but not a page of the campaign
    page.set_viewport_size({"width": 1280, "height": 800})
    ui.set_storage({"campaign": None})
    ui.press(page)
    wait_stage(ui, page, "highlight")
    ui_click(page, ".toast button[data-mode='annotate']")
    wait_stage(ui, page, "annotate")
    page.locator("#only").click(position={"x": 12, "y": 8})
    status = lambda: ui_eval(page, "(s) => s.querySelector('.panel.annot .status').textContent")  # noqa: E731
    assert status().startswith("selected <p#only>")
    # ↑ passes the two wrappers whose text is the paragraph's (nothing would visibly change) to the article.
    page.keyboard.press("ArrowUp")
    assert status().startswith("selected <article#story>")
    page.keyboard.press("ArrowDown")
    assert status().startswith("selected <p#only>")
    # The article sits at the bottom left, where the panel starts: the panel moves to another corner.
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    where = ui_eval(page, """(s) => { const p = s.querySelector('.panel.annot'); const r = p.getBoundingClientRect();
        return {corner: p.dataset.corner, rect: [r.left, r.top, r.right, r.bottom]}; }""")
    story = page.evaluate("() => { const r = document.getElementById('story').getBoundingClientRect(); "
                          "return [r.left, r.top, r.right, r.bottom]; }")
    assert where["corner"] != "left-bottom"
    x0, y0, x1, y1 = where["rect"]
    assert x0 >= story[2] or x1 <= story[0] or y0 >= story[3] or y1 <= story[1], (where, story)
    # S without a name asks for it and puts the cursor in the field.
    ui_eval(page, "(s) => { s.querySelector('.panel.annot input.annotator').value = ''; }")
    page.keyboard.press("s")
    assert status() == "enter the annotator name"
    assert ui_eval(page, "(s) => s.activeElement && s.activeElement.className") == "annotator"
    page.keyboard.insert_text("carol")  # typed straight into the focused field
    page.keyboard.press("Enter")  # in the field: not an annotator key
    ui_click(page, f"{PANEL} button.save")
    assert wait_status(page, "Saved label #")

    # The background checks every field a panel relays (a page's world could reach a content script's messages).
    for message, needle in (
            ({"type": "centrum.campaign.flag", "reason": ""}, "reason"),
            ({"type": "centrum.campaign.flag", "reason": "x" * 1001}, "reason"),
            ({"type": "centrum.campaign.submit", "nodes": [-1]}, "node ids"),
            ({"type": "centrum.campaign.submit", "nodes": [1], "assignment": 7}, "unknown field"),
            ({"type": "centrum.campaign.join", "campaign": "../x", "annotator": "a"}, "campaign"),
            ({"type": "centrum.campaign.adjudicate", "pick": 1, "nodes": [2]}, "pick"),
            ({"type": "centrum.campaign.goto", "page_id": "../../gold/p1"}, "page_id")):
        answer = ui_eval(page, "(s, m) => chrome.runtime.sendMessage(m)", message)
        assert answer["error"]["code"] == "E_REQUEST" and needle in answer["error"]["message"], (message, answer)


def test_campaign_resumes_after_a_browser_restart(playwright: Any, served: Any, tmp_path: Path) -> None:
    from helpers.chromium_ui import install_host, launch

    server, root = served
    user_data_dir, home = tmp_path / "profile", tmp_path / "home"
    user_data_dir.mkdir()
    install_host(user_data_dir, home)
    made = centrum("labels", "campaign", "create", "again", "--pages", str(root / "pages"), "--annotators", "erin",
                   home=home)
    assert made.returncode == 0, made.stderr
    for session in launch(playwright, user_data_dir, home):
        session.set_storage({"algorithm": "semantic"})
        page = session.open(f"{server.url}p/p1")
        session.press(page)
        wait_stage(session, page, "highlight")
        ui_click(page, ".toast button[data-mode='annotate']")
        wait_stage(session, page, "annotate")
        join(session, page, "erin", "again")
        ui_wait(page, "(s) => !!s?.querySelector('.panel.annot .progress')", timeout_s=60)
        page.keyboard.press("a")
        page.wait_for_url(f"{server.url}p/p2", timeout=60_000)
    # A new browser on the same profile: the joined campaign is in storage, the open assignment in the host.
    for session in launch(playwright, user_data_dir, home):
        page = session.open(server.url)
        session.first_press(page)
        wait_stage(session, page, "annotate")
        ui_wait(page, "(s) => !!s?.querySelector('.panel.annot button.mine')", timeout_s=60)
        ui_click(page, f"{PANEL} button.mine")
        page.wait_for_url(f"{server.url}p/p2", timeout=60_000)
        assert open_page(session, page, 2, 4)["suggested"] == 1
        # Flag: the first press asks for the reason (the field takes focus), the second sends it.
        ui_click(page, f"{PANEL} button.flag")
        assert ui_eval(page, "(s) => s.activeElement && s.activeElement.className") == "reason"
        page.keyboard.insert_text("login wall covers the article")
        ui_click(page, f"{PANEL} button.flag")
        page.wait_for_url(f"{server.url}p/p3", timeout=60_000)
    st = json.loads(centrum("labels", "campaign", "status", "again", "--json", home=home).stdout)
    assert st["flagged"] == [{"page_id": "p2", "annotator": "erin", "reason": "login wall covers the article"}]


def served_extension(bidi: Any, extension: Path) -> None:
    """Install again the test copy of the extension with its press shim (and the host permission a click would grant)
    on the host names of `centrum serve` (<random>.centrum.localhost), which test_extension_firefox.py's copy, made
    for its 127.0.0.1 pages, lacks."""
    from centrum.native.install import GECKO_ID

    manifest = json.loads((extension / "manifest.json").read_text())
    manifest["host_permissions"].append("http://*.centrum.localhost/*")
    manifest["content_scripts"][0]["matches"].append("http://*.centrum.localhost/*")
    (extension / "manifest.json").write_text(json.dumps(manifest, indent=2))
    bidi.call("webExtension.uninstall", {"extension": GECKO_ID})
    installed = bidi.call("webExtension.install", {"extensionData": {"type": "path", "path": str(extension)}})
    assert installed["extension"] == GECKO_ID


def test_firefox_campaign_page(tmp_path: Path) -> None:
    """One campaign page in Firefox ESR over WebDriver BiDi (the test copy of the extension of
    test_extension_firefox.py): join in the panel, the suggestion outlined, one key accepts it, the host stores it."""
    from helpers.firefox_ui import PRESS, STAGE, keys, make_test_extension, run_firefox, set_algorithm
    from helpers.firefox_ui import ui_click as ff_click
    from helpers.firefox_ui import ui_eval as ff_eval
    from helpers.firefox_ui import ui_wait as ff_wait
    from helpers.firefox_ui import wait_for as _wait

    root = tmp_path / "set"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "p1.html").write_text(article_page(1), encoding="utf-8")
    (tmp_path / "ff").mkdir()
    for bidi, centrum_home, _ in run_firefox(tmp_path / "ff", install=True):
        made = centrum("labels", "campaign", "create", "ff", "--pages", str(root), "--annotators", "dora",
                       home=centrum_home)
        assert made.returncode == 0, made.stderr
        served_extension(bidi, make_test_extension(tmp_path / "served"))
        with DatasetServer(root) as server:
            context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
            bidi.call("browsingContext.navigate", {"context": context, "url": server.page_url("p1"),
                                                   "wait": "complete"})
            time.sleep(0.5)  # the shim content script is injected at document_idle
            # Firefox resolves the served name to loopback itself and sandboxes the page (an opaque origin, no
            # cookies); the extension works there all the same.
            assert bidi.evaluate(context, "self.origin + ' ' + location.host") == f"null {server.name}:{server.port}"
            assert bidi.evaluate(context, "(() => { try { return document.cookie; } catch (e) { return e.name; } })()"
                                 ) == "SecurityError"
            set_algorithm(bidi, context, "semantic")
            bidi.evaluate(context, PRESS)
            _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
            ff_click(bidi, context, "button[data-mode=annotate]")
            _wait(bidi, context, f"{STAGE} === 'annotate'", "the annotator")
            ff_click(bidi, context, "input.annotator")
            keys(bidi, context, "dora")
            ff_click(bidi, context, "input.campaign-name")
            keys(bidi, context, "ff")
            ff_click(bidi, context, "button.join")
            progress = ff_wait(bidi, context, "(r) => r && r.querySelector('.panel.annot .progress')?.textContent",
                               "the campaign panel", timeout_s=60)
            assert progress == "Campaign ff \u00b7 page 1 of 1"
            assert ff_eval(bidi, context, "(r) => r.querySelectorAll('.layer[data-layer=annot] .box.suggested')"
                                          ".length") == 1
            mouse_out = ff_eval(bidi, context, "(r) => r.querySelector('.panel.annot').dataset.corner")
            assert mouse_out in ("left-bottom", "right-bottom", "right-top", "left-top")
            bidi.evaluate(context, "document.body.focus()")
            keys(bidi, context, "a")
            saved = ff_wait(bidi, context, "(r) => { const t = r.querySelector('.panel.annot .status').textContent;"
                                           " return t.startsWith('Saved') || t.startsWith('not') ? t : null; }",
                            "the submitted label", timeout_s=60)
            assert saved.startswith("Saved label #1.") and saved.endswith("All pages of the campaign are done."), saved
        st = json.loads(centrum("labels", "campaign", "status", "ff", "--json", home=centrum_home).stdout)
        dora = st["annotators"]["dora"]
        assert (dora["done"], dora["changed"], dora["with_suggestion"]) == (1, 0, 1), dora
        assert st["pages"][0]["page_id"] == "p1"
