"""The extension in Firefox ESR over WebDriver BiDi (no geckodriver): content script -> background -> native host
process started by Firefox -> highlight, then reader view and restore.

Firefox speaks BiDi itself (``--remote-debugging-port``); the test talks to it over a WebSocket with a minimal
client written on the standard library (text frames only, which is all BiDi uses). BiDi cannot click a toolbar
button, so the extension is installed from a temporary copy that adds one test-only content script and the
``http://127.0.0.1/*`` host permission that a click would have granted (activeTab): the page posts
"centrum-test-press" and the shim forwards it to the background's press handler, the same function the button
calls. Everything else (background, messaging, collect.js, view.js, the host) is the shipped code.
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_extension_chromium import extract_ok_lines

from centrum.annotation.serve import loopback
from centrum.bench.extension_browser import free_port, stop
from centrum.native.install import GECKO_ID, HOST_NAME

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "extension"

ARTICLE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Valley report</title></head><body>
<header id="top"><a href="/">Home</a> <a href="/news">News</a></header>
<main id="content"><h1>Snow closes the valley road</h1>
<p>The road to the upper valley closed on Tuesday after a night of heavy snow.</p>
<p>Crews expect to reopen it <a href="javascript:void(0)" onclick="window.__pwned = 1">by Friday</a>.</p>
<script>window.__runs = (window.__runs || 0) + 1;</script>
</main>
<aside id="side">Related: last winter's closures.</aside>
<footer id="foot">Contact the newsroom.</footer></body></html>"""

SHIM = """// Test-only (tests/e2e/test_extension_firefox.py): BiDi cannot click the toolbar button, so the page asks.
window.addEventListener("message", (event) => {
  if (event.source !== window) return;
  if (event.data === "centrum-test-press") {
    browser.runtime.sendMessage({ type: "centrum.press" }).then(
      (r) => window.postMessage({ centrumTestResult: JSON.stringify(r) }, "*"));
  } else if (event.data && event.data.centrumTestStorage) {
    // What the settings panel would write (the algorithm), to provoke a host error.
    browser.storage.local.set(event.data.centrumTestStorage).then(
      () => document.documentElement.setAttribute("data-test-storage", "set"));
  }
});
"""


def firefox_path() -> str:
    for candidate in (os.environ.get("CENTRUM_FIREFOX"), shutil.which("firefox-esr"), shutil.which("firefox")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail("Firefox not found: apt-get install firefox-esr, or set CENTRUM_FIREFOX")


class WebSocket:
    """Just enough RFC 6455 for WebDriver BiDi: client handshake, masked text frames out, text frames in."""

    def __init__(self, host: str, port: int, path: str, timeout: float = 60) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            part = self.sock.recv(4096)
            if not part:
                raise ConnectionError("websocket handshake: connection closed")
            head += part
        status, _, rest = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n")[0]:
            raise ConnectionError(f"websocket handshake refused: {status[:200]!r}")
        self.buffer = rest

    def _recv_exact(self, n: int) -> bytes:
        while len(self.buffer) < n:
            part = self.sock.recv(max(65536, n - len(self.buffer)))
            if not part:
                raise ConnectionError("websocket closed")
            self.buffer += part
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send_text(self, text: str) -> None:
        payload = text.encode()
        header = bytearray([0x81])
        n = len(payload)
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack("!H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(header) + mask + masked)

    def recv_text(self) -> str:
        parts: list[bytes] = []
        while True:
            b0, b1 = self._recv_exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._recv_exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._recv_exact(8))[0]
            payload = self._recv_exact(n)  # servers never mask
            opcode = b0 & 0x0F
            if opcode == 0x9:  # ping -> pong
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            if opcode == 0x8:
                raise ConnectionError("websocket closed by Firefox")
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode()

    def close(self) -> None:
        self.sock.close()


class Bidi:
    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send_text(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv_text())
            if msg.get("id") != my_id:
                continue  # events
            if msg.get("type") == "error" or "error" in msg:
                raise RuntimeError(f"{method}: {msg.get('error')}: {msg.get('message')}")
            result: dict[str, Any] = msg["result"]
            return result

    def evaluate(self, context: str, expression: str) -> Any:
        out = self.call("script.evaluate", {"expression": expression, "target": {"context": context},
                                            "awaitPromise": True, "resultOwnership": "none"})
        if out.get("type") == "exception":
            raise RuntimeError(f"page exception: {out['exceptionDetails'].get('text')}")
        return _value(out["result"])


# ---- reaching the extension's UI ----------------------------------------------------------------------------------
# The panels live in a closed shadow root (view.js, issue #20): page script sees `shadowRoot === null`. BiDi's
# serialization can include closed shadow roots (includeShadowTree "all"): the tests take the root's reference
# from there and call functions on it; clicks and keys go in as real input (input.performActions, isTrusted true).


# The tests' own calls run in a BiDi sandbox: a page's overridden DOM methods (hostile-ui.html records who calls
# them) see the extension's calls or nobody's, never the test's.
SANDBOX = "centrum-test"


def ui_root(bidi: Bidi, context: str) -> str | None:
    """The sharedId of the extension UI's closed shadow root, or None when there is no UI on the page."""
    out = bidi.call("script.evaluate", {
        "expression": "document.querySelector('centrum-ui')", "target": {"context": context, "sandbox": SANDBOX},
        "awaitPromise": False,
        "serializationOptions": {"maxDomDepth": 0, "includeShadowTree": "all"}})
    node = out.get("result", {})
    if node.get("type") != "node":
        return None
    shadow = node.get("value", {}).get("shadowRoot")
    return shadow.get("sharedId") if shadow else None


def ui_eval(bidi: Bidi, context: str, function: str, arg: Any = None) -> Any:
    """Call ``function`` (JS ``(root, arg) => ...``) with the UI's closed shadow root (null without a UI) and
    ``arg`` (JSON); returns its value."""
    root = ui_root(bidi, context)
    out = bidi.call("script.callFunction", {
        "functionDeclaration": f"function (root) {{ return ({function})(root, {json.dumps(arg)}); }}",
        "arguments": [{"sharedId": root} if root else {"type": "null"}],
        "target": {"context": context, "sandbox": SANDBOX},
        "awaitPromise": True, "resultOwnership": "none"})
    if out.get("type") == "exception":
        raise RuntimeError(f"exception: {out['exceptionDetails'].get('text')}")
    return _value(out["result"])


def ui_wait(bidi: Bidi, context: str, function: str, what: str, arg: Any = None, timeout_s: float = 45) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = ui_eval(bidi, context, function, arg)
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; last {last!r}; UI text: "
                         f"{ui_eval(bidi, context, '(r) => r && r.textContent')!r}")


def mouse(bidi: Bidi, context: str, x: float, y: float, click: bool = True) -> None:
    """A real pointer move (and click) at viewport coordinates."""
    steps: list[dict[str, Any]] = [{"type": "pointerMove", "x": round(x), "y": round(y)}]
    if click:
        steps += [{"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]
    bidi.call("input.performActions", {"context": context, "actions": [
        {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": steps}]})


KEYS = {"ArrowUp": "\ue013", "ArrowDown": "\ue015", "Enter": "\ue007", "Escape": "\ue00c"}


def keys(bidi: Bidi, context: str, *names: str) -> None:
    """Real key presses: named keys (KEYS) or text typed character by character."""
    steps: list[dict[str, Any]] = []
    for name in names:
        for ch in [KEYS[name]] if name in KEYS else list(name):
            steps += [{"type": "keyDown", "value": ch}, {"type": "keyUp", "value": ch}]
    bidi.call("input.performActions", {"context": context, "actions": [{"type": "key", "id": "keyboard",
                                                                        "actions": steps}]})


def ui_click(bidi: Bidi, context: str, selector: str, click: bool = True) -> None:
    """A real click (or only a move, to hover) on the centre of an element of the extension's UI."""
    box = ui_eval(bidi, context, """(root, sel) => { const el = root && root.querySelector(sel); if (!el) return null;
        el.scrollIntoView({block: 'nearest'}); const r = el.getBoundingClientRect();
        return [r.left + r.width / 2, r.top + r.height / 2]; }""", selector)
    assert box, f"no {selector!r} in the extension's UI"
    mouse(bidi, context, box[0], box[1], click)


def _value(remote: dict[str, Any]) -> Any:
    """BiDi RemoteValue -> Python (only the kinds these tests read)."""
    kind = remote["type"]
    if kind in ("string", "number", "boolean"):
        return remote["value"]
    if kind in ("null", "undefined"):
        return None
    if kind == "array":
        return [_value(v) for v in remote.get("value", [])]
    if kind == "object":
        return {k: _value(v) for k, v in remote.get("value", [])}
    return remote


FIXTURE_PAGES = REPO / "tests" / "fixtures" / "pages"


class _Handler(http.server.BaseHTTPRequestHandler):
    """/article.html, and /pages/NAME.html from tests/fixtures/pages (the hostile pages)."""

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?")[0]
        body = None
        if path == "/article.html":
            body = ARTICLE.encode()
        elif path.startswith("/pages/") and path.endswith(".html") and "/" not in path[len("/pages/"):]:
            file = FIXTURE_PAGES / path[len("/pages/"):]
            body = file.read_bytes() if file.is_file() else None
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body or b"not found")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def test_test_copy_is_shipped_code_plus_shim(tmp_path: Path) -> None:
    test_copy = make_test_extension(tmp_path)
    for name in ("src/background.js", "src/messaging.js", "src/view.js", "src/modes/ui.js", "src/modes/reader.js",
                 "src/collect.js", "src/ui.css"):
        assert (test_copy / name).read_bytes() == (EXTENSION / name).read_bytes()
    shipped = json.loads((EXTENSION / "manifest.json").read_text())
    patched = json.loads((test_copy / "manifest.json").read_text())
    added = {k for k in patched if patched[k] != shipped.get(k)}
    assert added == {"host_permissions", "content_scripts"}


def make_test_extension(base: Path) -> Path:
    target = base / "extension"
    shutil.copytree(EXTENSION, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["host_permissions"] = ["http://127.0.0.1/*"]
    manifest["content_scripts"] = [{"matches": ["http://127.0.0.1/*"], "js": ["test-shim.js"]}]
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2))
    (target / "test-shim.js").write_text(SHIM)
    return target


@pytest.fixture
def firefox(tmp_path: Path) -> Iterator[tuple[Bidi, Path, str]]:
    yield from run_firefox(tmp_path, install=True)


def run_firefox(tmp_path: Path, install: bool) -> Iterator[tuple[Bidi, Path, str]]:
    home, profile, centrum_home = tmp_path / "home", tmp_path / "profile", tmp_path / "centrum"
    home.mkdir()
    profile.mkdir()
    env = {**os.environ, "HOME": str(home), "CENTRUM_HOME": str(centrum_home), "MOZ_CRASHREPORTER_DISABLE": "1"}
    if install:
        # Host manifest in $HOME/.mozilla/native-messaging-hosts/ with allowed_extensions = the gecko id.
        out = subprocess.run([sys.executable, "-m", "centrum.cli", "install-host", "--browser", "firefox"], env=env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        manifest = json.loads((home / ".mozilla/native-messaging-hosts" / f"{HOST_NAME}.json").read_text())
        assert manifest["allowed_extensions"] == [GECKO_ID]
    extension = make_test_extension(tmp_path)

    served = contextlib.ExitStack()  # the page server, closed with Firefox below
    url = f"{served.enter_context(loopback(_Handler))}/article.html"

    port = free_port()
    log = open(tmp_path / "firefox.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([firefox_path(), "--headless", "--no-remote", "--profile", str(profile),
                             f"--remote-debugging-port={port}"], env=env, stdout=log, stderr=log)
    ws = None
    try:
        deadline = time.monotonic() + 60
        while ws is None:
            try:
                ws = WebSocket("127.0.0.1", port, "/session")
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        bidi = Bidi(ws)
        bidi.call("session.new", {"capabilities": {}})
        installed = bidi.call("webExtension.install", {"extensionData": {"type": "path", "path": str(extension)}})
        assert installed["extension"] == GECKO_ID
        yield bidi, centrum_home, url
    finally:
        if ws is not None:
            try:
                ws.send_text(json.dumps({"id": 10**6, "method": "session.end", "params": {}}))
            except OSError:
                pass
            ws.close()
        stop(proc, timeout_s=15)
        log.close()
        served.close()


def _wait(bidi: Bidi, context: str, expression: str, what: str, timeout_s: float = 45) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = bidi.evaluate(context, expression)
        if last:
            return last
        time.sleep(0.2)
    toast = ui_eval(bidi, context, "(root) => root && root.textContent")
    raise AssertionError(f"timed out waiting for {what}; last {last!r}; centrum-ui text: {toast!r}")


STAGE = "document.documentElement.getAttribute('data-centrum-stage')"


def darkest(bidi: Bidi, context: str, element_id: str) -> int:
    """The darkest grey level (0-255) on screen within the element's box: black text shows as about 0, text dimmed
    to a quarter over white as about 191."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    time.sleep(0.2)  # a frame or two: what the last change drew is on screen
    x, y, w, h = bidi.evaluate(context, f"(() => {{ const r = document.getElementById('{element_id}')"
                                        ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    shot = bidi.call("browsingContext.captureScreenshot", {"context": context, "clip": {
        "type": "box", "x": x, "y": y, "width": w, "height": h}})
    grey = np.asarray(Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("L"))
    return int(grey.min())


def set_algorithm(bidi: Bidi, context: str, name: str) -> None:
    bidi.evaluate(context, f"window.postMessage({{centrumTestStorage: {{algorithm: {json.dumps(name)}}}}}, '*')")
    _wait(bidi, context, "document.documentElement.getAttribute('data-test-storage') === 'set'", "storage")
    bidi.evaluate(context, "document.documentElement.removeAttribute('data-test-storage')")
PRESS = "window.postMessage('centrum-test-press', '*')"


def test_firefox_round_trip(firefox: tuple[Bidi, Path, str]) -> None:
    bidi, centrum_home, url = firefox
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
    # The shim is a content script: wait until Firefox has injected it (document_idle). The expected element
    # follows from the semantic baseline, whatever the host's default algorithm becomes.
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")
    before = bidi.evaluate(context, "document.documentElement.outerHTML")
    assert darkest(bidi, context, "side") < 60
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
    marked = bidi.evaluate(context, "[...document.querySelectorAll('[data-centrum-main]')].map(e => e.id)")
    assert marked == ["content"]
    # One outline, drawn in the view's closed shadow root around the answer.
    outlines = ui_eval(bidi, context, "(root) => root.querySelectorAll('.layer[data-layer=\"main\"] .box').length")
    assert outlines == 1
    assert darkest(bidi, context, "side") > 150 and darkest(bidi, context, "content") < 60  # the rest is dimmed

    # The host was started by Firefox for this extension (its arguments: manifest path and the gecko id).
    log = (centrum_home / "host.log").read_text()
    assert GECKO_ID in log and extract_ok_lines(log)

    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'reader'", "the reader view")
    assert bidi.evaluate(context, "document.querySelector('centrum-ui').shadowRoot") is None  # closed to the page
    text = ui_eval(bidi, context, "(root) => root.querySelector('.reader').innerText")
    assert "Snow closes the valley road" in text and "reopen it by Friday" in text
    assert "Related" not in text and "newsroom" not in text
    html = ui_eval(bidi, context, "(root) => root.querySelector('.reader').innerHTML")
    assert "onclick" not in html and "javascript:" not in html and "<script" not in html

    bidi.evaluate(context, PRESS)
    _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")
    assert bidi.evaluate(context, "document.documentElement.outerHTML") == before
    assert bidi.evaluate(context, "[window.__pwned ?? null, window.__runs]") == [None, 1]

    # A host error is shown on the page.
    set_algorithm(bidi, context, "no-such-algorithm")
    bidi.evaluate(context, PRESS)
    shown = ui_wait(bidi, context, "(root) => { const t = root?.querySelector('.toast[role=alert]'); "
                                   "return t && t.getBoundingClientRect().width > 0 ? t.textContent : null; }",
                    "the error message")
    assert "E_UNKNOWN_ALGORITHM" in shown and "no-such-algorithm" in shown


def test_firefox_hostile_pages_reader(firefox: tuple[Bidi, Path, str]) -> None:
    """The reader part of tests/e2e/test_ui_hostile.py in Firefox: hidden text stays out of the reader, and page
    elements named like the extension's globals (centrumView, centrumClean, centrumNodes, browser twice, ...) stop
    neither the reader nor the panels."""
    from test_ui_hostile import check_hidden_text

    bidi, _, url = firefox
    base = url.rsplit("/", 1)[0]
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.setViewport", {"context": context, "viewport": {"width": 1280, "height": 800}})
    bidi.call("browsingContext.navigate", {"context": context, "url": f"{base}/pages/hostile-hidden.html",
                                           "wait": "complete"})
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")

    def read() -> str:
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'reader'", "the reader view")
        text: str = ui_eval(bidi, context, "(root) => root.querySelector('.reader').innerText")
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")
        return text

    check_hidden_text(read())

    bidi.call("browsingContext.navigate", {"context": context, "url": f"{base}/pages/hostile-names.html",
                                           "wait": "complete"})
    time.sleep(0.5)
    # The names are taken on the page (Firefox gives the first element for a repeated id, Chromium a collection).
    assert bidi.evaluate(context, "[window.centrumView instanceof HTMLDivElement, window.browser instanceof "
                                  "HTMLDivElement || window.browser instanceof HTMLCollection]") == [True, True]
    text = read()
    assert "The names page" in text and "A second paragraph of the story" in text and "a div named" not in text
    # The panels reach the background too (the annotator opens through a runtime message).
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
    ui_click(bidi, context, ".toast button[data-mode=annotate]")
    _wait(bidi, context, f"{STAGE} === 'annotate'", "the annotator")
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")


def test_firefox_esc_and_close_end_every_mode(firefox: tuple[Bidi, Path, str]) -> None:
    """Esc ends the highlight, the reader right after it opens (no click into it first: it takes the focus from the
    toast's button, which goes with the toast), the debugger and the annotator; so does each one's ×.
    Each time the page is back as it was. (Focus left in the browser's toolbar by a real click on the button, where
    the issue saw Esc lost, is out of BiDi's reach: the test checks that the reader holds the focus.)"""
    bidi, _, url = firefox
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")
    before = bidi.evaluate(context, "document.documentElement.outerHTML")
    # Each mode's ×: the toast's over the highlight, the reader's toolbar, the panels' own.
    close_button = {None: ".toast button.x", "reader": ".reader .bar [data-action='close']",
                    "debugger": ".panel.debugger button.x", "annotate": ".panel.annot button.x"}
    for mode, close in ((None, "Escape"), (None, "x"), ("reader", "Escape"), ("reader", "x"),
                        ("debugger", "Escape"), ("debugger", "x"), ("annotate", "Escape"), ("annotate", "x")):
        bidi.evaluate(context, PRESS)
        _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
        if mode:
            ui_click(bidi, context, f".toast button[data-mode={mode}]")
            _wait(bidi, context, f"{STAGE} === '{mode}'", mode, timeout_s=90)
        if mode == "reader":  # the keyboard is the reader's (Esc, arrows, Page Down)
            assert ui_eval(bidi, context, "(root) => root.activeElement?.className") == "reader"
        if close == "x":
            ui_click(bidi, context, close_button[mode])
        else:
            keys(bidi, context, "Escape")
        _wait(bidi, context, "!document.querySelector('centrum-ui')", f"the restore of {mode} by {close}")
        assert bidi.evaluate(context, "document.documentElement.outerHTML") == before, (mode, close)


ATTACK = """(() => { const a = window.__attack; return {rounds: a.rounds, clicks: a.clicks, keys: a.keys,
    roots: a.roots.length, found: a.found, ownCalls: a.ownCalls, typed: a.typed}; })()"""


def test_firefox_page_script_cannot_drive_the_panels(firefox: tuple[Bidi, Path, str]) -> None:
    """tests/e2e/test_ui_hostile.py's page script in Firefox (content scripts behind Xray wrappers): after the press
    it clicks, keys and reaches into every shadow root without finding the UI or saving anything; the user's real
    clicks and keys save exactly one label."""
    from centrum.annotation.labels import list_labels

    bidi, centrum_home, url = firefox
    page = url.rsplit("/", 1)[0] + "/pages/hostile-ui.html"
    db = centrum_home / "labels.sqlite3"
    context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
    bidi.call("browsingContext.setViewport", {"context": context, "viewport": {"width": 1280, "height": 800}})
    bidi.call("browsingContext.navigate", {"context": context, "url": page, "wait": "complete"})
    time.sleep(0.5)
    set_algorithm(bidi, context, "semantic")

    def let_the_page_try() -> None:
        before = bidi.evaluate(context, ATTACK)["rounds"]
        time.sleep(1.5)
        assert bidi.evaluate(context, ATTACK)["rounds"] - before > 10

    bidi.evaluate(context, PRESS)
    _wait(bidi, context, f"{STAGE} === 'highlight'", "the highlight")
    let_the_page_try()
    assert bidi.evaluate(context, STAGE) == "highlight"
    ui_click(bidi, context, ".toast button[data-mode=annotate]")
    _wait(bidi, context, f"{STAGE} === 'annotate'", "the annotator")
    let_the_page_try()
    status = ui_eval(bidi, context, "(root) => [root.querySelector('.panel.annot .status').textContent, "
                                    "root.querySelectorAll('.panel.annot ol.picked li').length]")
    assert status == ["click a word inside the main content", 0]
    assert not db.exists() or list_labels(db) == []
    seen = bidi.evaluate(context, ATTACK)
    assert seen["clicks"] > 100 and seen["keys"] > 100
    assert seen["roots"] == 0 and seen["found"] == [] and seen["ownCalls"] == [], seen

    # The user: a click on a word, Enter, a name with the save key in it, Save.
    p1 = bidi.evaluate(context, "(() => { const r = document.getElementById('p1').getBoundingClientRect(); "
                                "return [r.left + 12, r.top + 8]; })()")
    mouse(bidi, context, p1[0], p1[1])
    keys(bidi, context, "Enter")
    ui_click(bidi, context, ".panel.annot input.annotator")
    keys(bidi, context, "carlos")
    ui_click(bidi, context, ".panel.annot button.save")
    ui_wait(bidi, context, "(root) => root.querySelector('.panel.annot .status').textContent.startsWith('Saved')",
            "the saved label")
    assert [r["annotator"] for r in list_labels(db)] == ["carlos"]
    assert not set("carlos") & set(bidi.evaluate(context, ATTACK)["typed"])
    let_the_page_try()
    assert len(list_labels(db)) == 1
    bidi.evaluate(context, PRESS)
    _wait(bidi, context, "!document.querySelector('centrum-ui')", "the restore")


def test_firefox_host_missing(tmp_path: Path) -> None:
    with contextlib.contextmanager(run_firefox)(tmp_path, install=False) as (bidi, _, url):
        context = bidi.call("browsingContext.getTree", {})["contexts"][0]["context"]
        bidi.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
        time.sleep(0.5)
        bidi.evaluate(context, PRESS)
        shown = ui_wait(bidi, context, "(root) => root?.querySelector('.toast[role=alert]')?.textContent ?? null",
                        "the message")
        assert "E_HOST_MISSING" in shown and "centrum install-host" in shown
