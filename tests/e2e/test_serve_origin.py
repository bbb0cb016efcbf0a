"""``centrum serve`` in real Chromium: a hostile saved page gets nothing of other local services or of the data set.

Another HTTP service on 127.0.0.1 sets a cookie in the same browser context and answers every origin with CORS and
credentials (as permissive as a local app can be); the served page's script then tries ``document.cookie`` (read and
plant), storage, fetch and XHR to that service, to a neighbouring saved page, to ``gold/`` and ``meta.jsonl``, and
an iframe of a neighbour. Controls show each probe would read its target where it is allowed to (on the other
service's own page, and directly over HTTP), so what the served page gets is the server's doing (issue #40)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from centrum.annotation.serve import DatasetServer, loopback
from centrum.core.render import find_chromium

OTHER_SECRET = "other-app-session-5ec7e7"
NEIGHBOUR_SECRET = "neighbour-page-text-93a1"
GOLD_SECRET = "gold-text-6b2f"
META_SECRET = "meta-row-0c4d"

PROBE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>probe</title></head><body><p>A saved page.</p>
<script>
(async () => {
  const OTHER = %s;
  const out = {};
  const attempt = async (name, fn) => {
    try { out[name] = String(await fn()); } catch (e) { out[name] = "error: " + e.name; }
  };
  const framed = () => new Promise((ok, no) => {
    const f = document.createElement("iframe");
    f.src = "/p/neighbour";
    f.onload = () => { try { ok(f.contentDocument.body.innerText); } catch (e) { no(e); } };
    setTimeout(() => no(new Error("no load")), 3000);
    document.body.append(f);
  });
  await attempt("origin", () => self.origin);
  await attempt("cookie", () => document.cookie);
  await attempt("plant", () => { document.cookie = "planted=1; path=/"; return document.cookie; });
  await attempt("localStorage", () => { localStorage.setItem("k", "v"); return localStorage.getItem("k"); });
  await attempt("indexedDB", () => new Promise((ok, no) => {
    const r = indexedDB.open("x"); r.onsuccess = () => ok("opened"); r.onerror = () => no(r.error); }));
  await attempt("other", async () => (await fetch(OTHER + "/echo", {credentials: "include"})).text());
  await attempt("other_no_cors", async () => {
    const r = await fetch(OTHER + "/echo", {mode: "no-cors", credentials: "include"});
    return r.type + ":" + await r.text(); });
  await attempt("page", async () => (await fetch("/p/neighbour")).text());
  await attempt("page_no_cors", async () => {
    const r = await fetch("/p/neighbour", {mode: "no-cors"}); return r.type + ":" + await r.text(); });
  await attempt("gold", async () => (await fetch("/gold/neighbour.txt")).text());
  await attempt("meta", async () => (await fetch("/meta.jsonl")).text());
  await attempt("xhr", () => new Promise((ok, no) => {
    const x = new XMLHttpRequest(); x.open("GET", "/p/neighbour");
    x.onload = () => ok(x.responseText); x.onerror = () => no(new Error("xhr failed")); x.send(); }));
  await attempt("frame", framed);
  document.documentElement.dataset.result = JSON.stringify(out);
})();
</script></body></html>"""


class OtherApp(BaseHTTPRequestHandler):
    """Another local service: sets a session cookie and echoes the cookies it gets to any origin, with credentials."""

    seen: list[tuple[str, str, str]] = []  # (path, Origin, Cookie) of every request

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        cookie, origin = self.headers.get("Cookie", ""), self.headers.get("Origin", "")
        OtherApp.seen.append((self.path, origin, cookie))
        body = ("<p>other app</p>" if self.path == "/set" else f"cookie:{cookie}").encode()
        self.send_response(200)
        if self.path == "/set":
            self.send_header("Set-Cookie", f"session={OTHER_SECRET}; Path=/")
        self.send_header("Access-Control-Allow-Origin", origin or "*")
        self.send_header("Access-Control-Allow-Credentials", "true")
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def browser(playwright: Any) -> Iterator[Any]:
    b = playwright.chromium.launch(executable_path=find_chromium(), headless=True)
    try:
        yield b
    finally:
        b.close()


def test_a_served_page_reads_no_other_service_and_nothing_beside_pages(browser: Any, tmp_path: Path) -> None:
    with loopback(OtherApp) as other:
        root = tmp_path / "set"
        (root / "pages").mkdir(parents=True)
        (root / "gold").mkdir()
        (root / "pages" / "probe.html").write_text(PROBE % json.dumps(other), encoding="utf-8")
        (root / "pages" / "neighbour.html").write_text(f"<p>{NEIGHBOUR_SECRET}</p>", encoding="utf-8")
        (root / "gold" / "neighbour.txt").write_text(GOLD_SECRET, encoding="utf-8")
        (root / "meta.jsonl").write_text(json.dumps({"id": "neighbour", "url": META_SECRET}) + "\n",
                                         encoding="utf-8")
        context = browser.new_context()
        page = context.new_page()
        with DatasetServer(root) as server:
            # Controls: the other service's cookie is in this browser and readable on its own page, cross-origin
            # fetches with credentials read it back, and the neighbour page is there to be read.
            page.goto(f"{other}/set")
            assert OTHER_SECRET in page.evaluate("document.cookie")
            echoed = page.evaluate("async (u) => (await fetch(u, {credentials: 'include'})).text()", f"{other}/echo")
            assert OTHER_SECRET in echoed
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request("GET", "/p/neighbour", headers={"Host": f"{server.name}:{server.port}"})
            assert NEIGHBOUR_SECRET in conn.getresponse().read().decode()
            conn.close()
            OtherApp.seen.clear()

            page.goto(server.page_url("probe"))
            assert page.url.startswith(f"http://{server.name}:{server.port}/") and server.name.endswith(
                ".centrum.localhost")
            page.wait_for_function("() => document.documentElement.dataset.result", timeout=30_000)
            result = json.loads(page.evaluate("document.documentElement.dataset.result"))
            shown = json.dumps(result)
            for secret in (OTHER_SECRET, NEIGHBOUR_SECRET, GOLD_SECRET, META_SECRET):
                assert secret not in shown, (secret, result)
            assert result["origin"] == "null"  # sandboxed: an opaque origin
            for probe in ("cookie", "plant", "localStorage", "indexedDB", "other", "page", "gold", "meta", "xhr",
                          "frame"):
                assert result[probe].startswith("error: "), (probe, result)
            assert result["page_no_cors"] == "opaque:" and result["other_no_cors"].startswith("error: ")
            # Nothing reached the other service from the served page (connect-src), and no planted cookie ever did.
            assert OtherApp.seen == [], OtherApp.seen
            page.goto(f"{other}/set")
            assert all("planted" not in cookie for _, _, cookie in OtherApp.seen)
            # Files beside pages/ are not served to the browser either.
            for path in ("gold/neighbour.txt", "meta.jsonl", "p/../meta.jsonl"):
                response = page.goto(f"{server.url}{path}")
                assert response is not None and response.status == 404, path
                assert GOLD_SECRET not in page.content() and META_SECRET not in page.content()
        context.close()
