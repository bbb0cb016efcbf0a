"""centrum.core.render.Renderer: offline local pages, bounded load time, clear errors, ``extra`` functions."""

from __future__ import annotations

import http.server
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from centrum.annotation.serve import loopback
from centrum.core.render import Renderer, RenderError, collector_path
from centrum.core.snapshot import parse_snapshot


class _SlowHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature of the base class
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if self.path.startswith("/slow"):
            time.sleep(8)  # longer than the renderer's load timeout below
        body = b'<!DOCTYPE html><html><body><p id="t">Rendered before the slow image</p>' \
               b'<img src="/slow.png"></body></html>' if self.path == "/" else b""
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if self.path == "/" else "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def slow_server() -> Iterator[str]:
    with loopback(_SlowHandler) as base:
        yield f"{base}/"


def test_load_timeout_is_bounded_and_content_still_collected(slow_server: str) -> None:
    with Renderer(window=(800, 600), timeout_s=1.5) as r:
        t0 = time.perf_counter()
        out = r.render(slow_server)
        elapsed = time.perf_counter() - t0
    assert elapsed < 6, f"render took {elapsed:.1f} s despite a 1.5 s load timeout"
    assert any("load did not finish" in w for w in out.warnings)
    s = parse_snapshot(out.raw)
    assert "Rendered before the slow image" in s.texts


def test_local_page_is_offline(renderer: Renderer, fixture_server: str, tmp_path: Path) -> None:
    # A saved page whose stylesheet and image live on a (reachable!) server: both must be blocked.
    (tmp_path / "local.css").write_text("#box { position: absolute; left: 33px; top: 44px; width: 55px; height: 66px }")
    page = tmp_path / "saved.html"
    page.write_text(f"""<!DOCTYPE html><html><head>
        <link rel="stylesheet" href="local.css">
        <link rel="stylesheet" href="{fixture_server}remote.css">
        </head><body><div id="box">x</div><img src="{fixture_server}sample/none.png"></body></html>""")
    out = renderer.render(page)
    assert out.blocked == 2
    assert out.stylesheets == {"loaded": 1, "failed": 1}
    assert out.raw["page"]["stylesheets"] == {"loaded": 1, "failed": 1}
    s = parse_snapshot(out.raw)
    box = int(np.nonzero(s.attr("id") == "box")[0][0])
    assert s.box[box].tolist() == [33, 44, 55, 66]  # the local stylesheet did load
    assert s.page.url == page.resolve().as_uri()


def test_one_browser_many_pages(renderer: Renderer, fixture_server: str) -> None:
    titles = [parse_snapshot(renderer.render(fixture_server + f"pages/{n}.html", source=False).raw).page.title
              for n in ("rtl", "cjk", "boxes", "rtl")]
    assert titles[2] == "Boxes" and titles[0] == titles[3] and titles[1] == "港町の新しい図書館"


def test_extra_functions_run_in_the_page(renderer: Renderer, fixture_server: str) -> None:
    out = renderer.render(fixture_server + "pages/boxes.html", extra={
        "title": "() => document.title",
        "script_ran": "() => window.pageScriptRan",
        "boom": "() => { throw new Error('kaput') }",
    })
    assert out.extra["title"] == "Boxes" and out.extra["script_ran"] is True
    assert out.extra["boom"] is None and "kaput" in out.errors["boom"]
    assert {"load", "collect", "collect_in_page", "total"} <= set(out.timing)


def test_clear_errors(renderer: Renderer, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RenderError, match="no such file"):
        renderer.render("/nonexistent/page.html")
    with pytest.raises(RenderError, match="could not load"):
        renderer.render("http://127.0.0.1:1/")
    monkeypatch.setenv("CENTRUM_COLLECTOR", "/nonexistent/collect.js")
    assert collector_path() == Path("/nonexistent/collect.js")
    with pytest.raises(RenderError, match="collector script not found"):
        Renderer()
    monkeypatch.setenv("CENTRUM_CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("CENTRUM_COLLECTOR")
    with pytest.raises(RenderError, match="CENTRUM_CHROMIUM"):
        Renderer().start()


def test_undeclared_utf8_file_renders_as_utf8_and_self_redirect_is_cancelled(tmp_path):
    from centrum.core.render import Renderer
    from centrum.core.snapshot import parse_snapshot

    page = tmp_path / "u8.html"
    page.write_bytes("<html><body><p>Kosovo’s café 日本</p>"
                     "<script>setTimeout(() => location.href = 'http://example.invalid/', 0)</script>"
                     "</body></html>".encode())
    with Renderer(timeout_s=10, settle_ms=200) as r:
        out = r.render(page)
    snap = parse_snapshot(out.raw)
    assert "Kosovo’s café 日本" in snap.texts
    assert out.raw["page"]["url"].startswith("file:")
    assert any("JavaScript disabled" in w for w in out.warnings)


def test_page_that_reloads_itself_early_is_collected_whole(tmp_path):
    from centrum.core.render import Renderer
    from centrum.core.snapshot import parse_snapshot

    # Seen in the data sets: `location = document.URL.replace(/^http:/i, "https:")` in <head> reloads a saved file
    # forever, and a redirect to a relative path lands on the offline error page; both stop the parser early.
    page = tmp_path / "reload.html"
    page.write_text("<html><head><script>location = document.URL.replace(/^http:/i, 'https:');</script></head>"
                    "<body><p>First paragraph.</p><p>Second paragraph.</p>"
                    "<script>location.replace('/news/story?id=1');</script><p>Third paragraph.</p></body></html>")
    with Renderer(timeout_s=10) as r:
        out = r.render(page)
    snap = parse_snapshot(out.raw)
    assert [t for t in snap.texts if "paragraph" in t] == ["First paragraph.", "Second paragraph.", "Third paragraph."]
    assert out.redirects == 0 and any("tried to navigate" in w for w in out.warnings)


def test_a_window_the_page_opens_is_refused_and_the_page_collected(tmp_path, capfd):
    from centrum.core.render import Renderer
    from centrum.core.snapshot import parse_snapshot

    # window.open on load: Playwright has no frame for the new window's first navigation, and reading it raised in
    # the route handler (a traceback, and the request left hanging).
    (tmp_path / "popup.html").write_text("<p>A popup</p>")
    page = tmp_path / "opens.html"
    page.write_text("<html><body><article><p>The story itself.</p></article>"
                    "<script>window.open('popup.html', '_blank');</script></body></html>")
    with Renderer(timeout_s=10, settle_ms=200) as r:
        out = r.render(page)
        again = r.render(page)  # the browser is still usable
    assert "The story itself." in parse_snapshot(out.raw).texts and "A popup" not in parse_snapshot(out.raw).texts
    assert out.blocked >= 1 and again.blocked >= 1
    assert "Frame for this navigation request is not available" not in capfd.readouterr().err


def _story_loads_in_time(tmp_path: Path, body: str, extra: dict[str, str]):
    """Render a saved page holding "The story itself." plus ``body``: its load event came (no timeout warning) and
    the story was collected; the Rendered."""
    from centrum.core.render import Renderer
    from centrum.core.snapshot import parse_snapshot

    page = tmp_path / "page.html"
    page.write_text(f"<html><body><article><p>The story itself.</p></article>{body}</body></html>")
    with Renderer(timeout_s=20, settle_ms=200) as r:
        out = r.render(page, extra=extra)
    assert not any("did not finish" in w for w in out.warnings), out.warnings
    assert "The story itself." in parse_snapshot(out.raw).texts
    return out


def test_an_image_whose_onerror_reloads_it_does_not_hold_the_load_forever(tmp_path):
    from centrum.core.render import IMAGE_RETRIES

    # Offline, an image whose onerror sets its source again fails again, without end: the load event never came and
    # the renderer waited its whole timeout (11 shared pages). A remote fallback and a missing local file, both.
    out = _story_loads_in_time(tmp_path, (
        "<img src='http://example.invalid/a.jpg' onerror=\"this.src='http://example.invalid/b.jpg'\">"
        "<img src='missing.jpg' onerror=\"this.src='missing.jpg?again'\">"
        "<script>window.tries = 0; document.querySelectorAll('img').forEach(i => i.addEventListener("
        "'error', () => window.tries++));</script>"), {"tries": "() => window.tries"})
    # Each image failed as it does offline until it was asked for IMAGE_RETRIES times more, then got a pixel.
    assert out.extra["tries"] == 2 * (IMAGE_RETRIES + 1)
    assert out.blocked == IMAGE_RETRIES + 2  # the remote ones: a.jpg once, b.jpg until its pixel


def test_a_frame_a_script_opened_and_left_loading_does_not_hold_the_load_forever(tmp_path):
    from centrum.core.snapshot import parse_snapshot

    # Advertising code writes into an iframe and closes it once its (remote) script arrives; offline it never does,
    # the frame stays "loading", and so did the page's load event: the renderer waited its whole timeout (29 pages).
    out = _story_loads_in_time(tmp_path, (
        "<iframe id='ad'></iframe><script>const d = document.getElementById('ad').contentDocument; d.open();"
        "d.write('<p>Advert written</p><script src=\"http://example.invalid/ad.js\"></scr' + 'ipt>');"
        "window.addEventListener('load', () => { window.loadedAt = performance.now(); });</script>"),
        {"loaded": "() => window.loadedAt !== undefined"})
    assert out.extra["loaded"] is True and "Advert written" in parse_snapshot(out.raw).texts


def _shell_page() -> str:
    """A forum engine's saved page: its scripts (which cannot load offline) would draw the posts; the posts a reader
    without scripts gets sit in <noscript>, with a style that hides the "loading" splash."""
    posts = "".join(f"<div class='post'><p>Post number {k}: {'the thread goes on about certificates. ' * 4}</p></div>"
                    for k in range(6))
    return ("<html><body><section id='splash'>Loading…</section>"
            "<script src='https://cdn.example.invalid/app.js'></script>"
            f"<noscript><style>#splash {{display: none}}</style><div id='posts'>{posts}</div></noscript>"
            "</body></html>")


def test_a_shell_page_whose_content_is_in_noscript_is_rendered_as_without_scripts(tmp_path):
    from centrum.core.render import Renderer
    from centrum.core.snapshot import parse_snapshot

    shell = _shell_page()
    page = tmp_path / "shell.html"
    page.write_text(shell)
    control = tmp_path / "control.html"  # the same page with its posts drawn: no second render
    control.write_text(shell.replace("<noscript>", "<div>").replace("</noscript>", "</div>"))
    with Renderer(timeout_s=10) as r:
        out = r.render(page)
        plain = r.render(control)
    snap = parse_snapshot(out.raw)
    shown = [t for t, a in zip(snap.texts, snap.text_area.tolist(), strict=True) if a > 0]
    assert sum("Post number" in t for t in shown) == 6 and "Loading…" not in shown
    assert any("<noscript>" in w for w in out.warnings)
    assert not any("<noscript>" in w for w in plain.warnings)


def test_eval_keeps_an_earlier_render_that_the_same_rules_shaped(tmp_path):
    """`centrum eval` renders a shell page whose version-6 render the <noscript> rule made: the rule fires again, so
    the version-6 render is what the cache keeps under the current key; on a page the rule leaves alone now, the
    fresh render is kept."""
    import subprocess
    import sys

    from centrum.core import render
    from centrum.core.builders import E, T, build
    from centrum.evaluation import cache

    data, store = tmp_path / "set", cache.SnapshotCache(tmp_path / "cache")
    (data / "pages").mkdir(parents=True)
    (data / "gold").mkdir()
    shell = _shell_page()
    pages = {"shell": shell, "drawn": shell.replace("<noscript>", "<div>").replace("</noscript>", "</div>")}
    for name, html in pages.items():
        (data / "pages" / f"{name}.html").write_text(html, encoding="utf-8")
        (data / "gold" / f"{name}.txt").write_text("Post number 0", encoding="utf-8")
    (data / "meta.jsonl").write_text("".join(f'{{"id": "{n}", "language": "en"}}\n' for n in pages))
    earlier = {"raw": build(E("html", (0, 0, 1920, 1080), [E("body", (0, 0, 1920, 1080), [
        E("p", (0, 0, 800, 40), [T("The posts as version 6 rendered them")])])])).raw,
        "warnings": [render.NOSCRIPT_SHOWN + "; rendered again with JavaScript disabled"]}
    for html in pages.values():
        store.store(cache.snapshot_key(html.encode(), (1920, 1080), version=6), earlier)
    run = subprocess.run([sys.executable, "-m", "centrum.cli", "eval", str(data), "--out", str(tmp_path / "out"),
                          "--cache", str(store.dir), "--algorithms", "semantic", "--peers", "none"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    kept = {n: store.load(cache.snapshot_key(html.encode(), (1920, 1080))) for n, html in pages.items()}
    assert kept["shell"] == earlier
    assert kept["drawn"] is not None and kept["drawn"]["raw"] != earlier["raw"]
    assert any("Post number 0" in t for t in parse_snapshot(kept["drawn"]["raw"]).texts)


def _story_and_script(script: str) -> str:
    story = "".join(f"<p>Paragraph {k} of the story, long enough to be read as an article's text body.</p>"
                    for k in range(12))
    return f"<html><body><article id='story'>{story}</article><script>{script}</script></body></html>"


_WIPE = "document.getElementById('story').replaceChildren('Please accept our cookies.');"
_ADD = "document.getElementById('story').append('Added by a script.');"


def _shown_texts(raw: dict) -> list[str]:
    snap = parse_snapshot(raw)
    return [t for t, a in zip(snap.texts, snap.text_area.tolist(), strict=True) if a > 0]


def test_a_saved_page_whose_scripts_take_its_text_away_is_rendered_as_saved(tmp_path):
    # A news page saved with its story; offline its consent script, which would have waited for its server, empties
    # the story on load. A reader of the saved file wants the story: rendered again with scripts off. The same page
    # whose script only adds a line keeps its first render.
    page, control = tmp_path / "wiped.html", tmp_path / "kept.html"
    page.write_text(_story_and_script(_WIPE))
    control.write_text(_story_and_script(_ADD))
    with Renderer(timeout_s=10) as r:
        out = r.render(page)
        plain = r.render(control)
    shown = _shown_texts(out.raw)
    assert sum(t.startswith("Paragraph") for t in shown) == 12 and "Please accept our cookies." not in shown
    assert any("scripts hid most of its text" in w for w in out.warnings)
    assert "Added by a script." in _shown_texts(plain.raw) and not any("scripts hid" in w for w in plain.warnings)


def test_an_archived_page_whose_scripts_take_its_text_away_is_rendered_as_archived():
    # The same in a crawl (centrum batch over WARC): the archive answers every request, the page's own included, and
    # the render with scripts off is served from the archive too.
    from centrum.core.render import Archived

    html = {"http://news.example/wiped": _story_and_script(_WIPE), "http://news.example/kept": _story_and_script(_ADD)}
    asked: list[str] = []

    def archive(url: str) -> Archived | None:
        asked.append(url)
        body = html.get(url)
        return None if body is None else Archived(200, {"content-type": "text/html; charset=utf-8"}, body.encode())

    with Renderer(timeout_s=10, archive=True) as r:
        out = r.render("http://news.example/wiped", archive=archive)
        plain = r.render("http://news.example/kept", archive=archive)
    assert sum(t.startswith("Paragraph") for t in _shown_texts(out.raw)) == 12
    assert any("scripts hid most of its text" in w for w in out.warnings)
    assert "Added by a script." in _shown_texts(plain.raw) and not any("scripts hid" in w for w in plain.warnings)
    assert set(asked) <= set(html)


def test_a_dead_browser_is_replaced(fixture_server: str) -> None:
    # A long eval run must survive Chromium dying (out of memory, killed): the next render relaunches it.
    with Renderer(timeout_s=10) as r:
        assert parse_snapshot(r.render(fixture_server + "pages/rtl.html").raw).page.lang == "ar"
        info = r._call(lambda: r._browser.new_browser_cdp_session().send("SystemInfo.getProcessInfo"))
        (pid,) = [p["id"] for p in info["processInfo"] if p["type"] == "browser"]
        os.kill(pid, signal.SIGKILL)  # the Chromium this test started, by its id
        time.sleep(0.5)
        assert parse_snapshot(r.render(fixture_server + "pages/cjk.html").raw).page.lang == "ja"


def test_content_a_script_draws_after_load_is_collected_and_a_page_that_never_settles_is_bounded(tmp_path):
    from centrum.core.render import SETTLE_MAX_MS, Renderer
    from centrum.core.snapshot import parse_snapshot

    # A shop page whose script draws the description in three bursts after "load" (as a framework hydrating from its
    # JSON-LD would); a ticker page that changes its DOM every 50 ms forever.
    late = ("<html><body><h1>Mug</h1><div id='d'></div><script>addEventListener('load', () => {"
            "let k = 0; const step = () => { const p = document.createElement('p');"
            "p.textContent = 'Description part ' + (++k) + ': wheel thrown, matte glaze, dishwasher safe.';"
            "document.getElementById('d').append(p); if (k < 3) setTimeout(step, 120); };"
            "setTimeout(step, 150); });</script></body></html>")
    ticker = ("<html><body><p id='t'>0</p><script>let k = 0;"
              "setInterval(() => { document.getElementById('t').textContent = String(++k); }, 50);</script>"
              "</body></html>")
    (tmp_path / "late.html").write_text(late)
    (tmp_path / "ticker.html").write_text(ticker)
    with Renderer(timeout_s=10) as r:
        drawn = r.render(tmp_path / "late.html")
        busy = r.render(tmp_path / "ticker.html")
    texts = parse_snapshot(drawn.raw).texts
    assert sum(t.startswith("Description part") for t in texts) == 3
    assert not any("still changing" in w for w in drawn.warnings)
    assert any(f"still changing after {SETTLE_MAX_MS} ms" in w for w in busy.warnings)
    assert busy.timing["load"] < SETTLE_MAX_MS + 5000


def test_an_undeclared_legacy_page_renders_in_its_detected_charset(renderer: Renderer, tmp_path: Path) -> None:
    # A GBK page saved without <meta charset>: windows-1252 would show mojibake; the sniffer's detection step serves
    # it to Chromium as what it is, as `source` and DANA read it.
    text = ("北京市政府今天宣布，将在未来五年内投资建设新的公共图书馆和文化中心。市民可以在周末免费参观这些场所，"
            "并参加各种讲座和展览活动。")
    page = tmp_path / "gbk.html"
    page.write_bytes(f"<!DOCTYPE html><html><head><title>新闻</title></head><body><p>{text}</p></body></html>"
                     .encode("gbk"))
    s = parse_snapshot(renderer.render(page).raw)
    assert text in s.texts and s.page.title == "新闻"


def test_a_gzipped_saved_page_renders_as_its_page(renderer: Renderer, tmp_path: Path) -> None:
    # wcxb-dev2 keeps its pages as pages/<id>.html.gz: eval renders them as the pages they hold.
    import gzip

    page = tmp_path / "p.html.gz"
    page.write_bytes(gzip.compress("<!DOCTYPE html><title>Gzip</title><p>Ein schöner Tag am Meer.</p>".encode()))
    s = parse_snapshot(renderer.render(page).raw)
    assert "Ein schöner Tag am Meer." in s.texts and s.page.title == "Gzip"
