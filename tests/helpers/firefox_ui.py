"""The harness the Firefox tests share (``test_extension_firefox``, ``test_firefox_reader``): Firefox ESR over
WebDriver BiDi with a minimal WebSocket client on the standard library (text frames only, which is all BiDi uses),
the extension installed from a temporary copy that adds one test-only content script (BiDi cannot click a toolbar
button: the page posts "centrum-test-press" and the shim forwards it to the background's press handler) and the
``http://127.0.0.1/*`` host permission a click would have granted, and the page server. Test modules import this,
never each other."""

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


class PageHandler(http.server.BaseHTTPRequestHandler):
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


def make_test_extension(base: Path) -> Path:
    target = base / "extension"
    shutil.copytree(EXTENSION, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["host_permissions"] = ["http://127.0.0.1/*"]
    manifest["content_scripts"] = [{"matches": ["http://127.0.0.1/*"], "js": ["test-shim.js"]}]
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2))
    (target / "test-shim.js").write_text(SHIM)
    return target


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
    url = f"{served.enter_context(loopback(PageHandler))}/article.html"

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


def wait_for(bidi: Bidi, context: str, expression: str, what: str, timeout_s: float = 45) -> Any:
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
    wait_for(bidi, context, "document.documentElement.getAttribute('data-test-storage') === 'set'", "storage")
    bidi.evaluate(context, "document.documentElement.removeAttribute('data-test-storage')")
PRESS = "window.postMessage('centrum-test-press', '*')"
