"""centrum serve: a shared-layout folder's pages/ on the loopback interface under a host name of its own
(``<random>.centrum.localhost``), pages byte for byte, nothing else of the folder, a sandboxing CSP that allows this
server only, Host checked (DNS rebinding, bare 127.0.0.1), only GET/HEAD, bounded connections (idle ones closed by a
timeout, a cap that evicts silent sockets, never a thread per socket); the command prints its URL."""

from __future__ import annotations

import http.client
import os
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from centrum.annotation.serve import CSP, DOMAIN, WORKERS, DatasetServer, Limits, ServeError

PAGE = "<html><head><meta charset=\"windows-1252\"></head><body><p>caf\xe9</p></body></html>".encode("cp1252")


def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "set"
    (root / "pages" / "img").mkdir(parents=True)
    (root / "gold").mkdir()
    (root / "pages" / "a1.html").write_bytes(PAGE)
    (root / "pages" / "b-2.html").write_text("<p>two</p>", encoding="utf-8")
    (root / "pages" / "c3.html").write_text("<p>caf\u00e9 \u4e2d\u6587</p>", encoding="utf-8")
    (root / "pages" / "img" / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "pages" / ".hidden.html").write_text("secret", encoding="utf-8")
    (root / "gold" / "a1.txt").write_text("the gold", encoding="utf-8")
    (root / "meta.jsonl").write_text('{"id": "a1"}\n', encoding="utf-8")
    (tmp_path / "outside.txt").write_text("outside", encoding="utf-8")
    (root / "pages" / "link.txt").symlink_to(tmp_path / "outside.txt")
    return root


def get(port: int, path: str, host: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """One request to 127.0.0.1:port with the given Host header (what a browser resolving the name sends)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path, skip_host=True)
    conn.putheader("Host", host)
    conn.endheaders()
    r = conn.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    conn.close()
    return out


def test_pages_as_saved_and_nothing_else(tmp_path: Path) -> None:
    with DatasetServer(dataset(tmp_path)) as s:
        host = f"{s.name}:{s.port}"
        assert s.httpd.server_address[0] == "127.0.0.1" and s.ids == ["a1", "b-2", "c3"]
        assert s.url == f"http://{host}/" and s.name.endswith(f".{DOMAIN}") and len(s.name) == 16 + 1 + len(DOMAIN)
        status, headers, body = get(s.port, "/p/a1", host)
        assert status == 200 and body == PAGE and headers["content-type"] == "text/html; charset=windows-1252"
        # An undeclared UTF-8 page is declared UTF-8 (as the evaluation's renderer reads it), bytes unchanged.
        assert get(s.port, "/p/c3", host)[1]["content-type"] == "text/html; charset=utf-8"
        # Sandboxed to an opaque origin (no allow-same-origin): no cookies, no storage, other pages unreadable.
        assert headers["content-security-policy"] == CSP and CSP.startswith("sandbox allow-scripts;")
        assert "allow-same-origin" not in CSP and "default-src 'self'" in CSP and "connect-src 'self'" in CSP
        assert "form-action 'none'" in CSP and headers["x-content-type-options"] == "nosniff"
        assert not [k for k in headers if k in ("set-cookie", "access-control-allow-origin")]
        assert get(s.port, "/p/img/x.png", host)[1]["content-type"] == "image/png"
        assert get(s.port, "/p/b-2.html", host)[2] == b"<p>two</p>"
        assert b"/p/a1" in get(s.port, "/", host)[2]
        for path in ("/gold/a1.txt", "/meta.jsonl", "/p/../gold/a1.txt", "/p/%2e%2e/gold/a1.txt", "/p/link.txt",
                     "/p/.hidden.html", "/p//etc/passwd", "/p/", "/a1", "/p/a1/"):
            status, headers, body = get(s.port, path, host)
            assert status == 404 and b"gold" not in body and b"secret" not in body, path
            assert headers["content-security-policy"] == CSP
        # A page on a name rebound to 127.0.0.1 cannot read the server, nor can the bare loopback address (whose
        # cookie jar every local service shares), nor another name of the same domain; other methods are refused.
        for other in (f"evil.example:{s.port}", f"127.0.0.1:{s.port}", f"localhost:{s.port}", "127.0.0.1:1",
                      f"{'0' * 16}.{DOMAIN}:{s.port}", s.name, f"{s.name}:1"):
            status, _, body = get(s.port, "/p/a1", other)
            assert status == 421 and body != PAGE and s.name.encode() not in body, other
        assert get(s.port, "/p/a1", host.upper())[0] == 200  # host names are case-insensitive
        assert get(s.port, "/p/a1", host, method="POST")[0] == 405
        assert get(s.port, "/p/a1", host, method="HEAD")[2] == b""


def test_each_server_has_a_name_of_its_own(tmp_path: Path) -> None:
    root = dataset(tmp_path)
    with DatasetServer(root) as a, DatasetServer(root) as b:
        assert a.name != b.name
        assert get(a.port, "/p/a1", f"{b.name}:{a.port}")[0] == 421


def test_a_folder_without_pages_is_refused(tmp_path: Path) -> None:
    # Pages right in the folder, gold and meta beside them: serving the folder would serve those too.
    (tmp_path / "a1.html").write_text("<p>page</p>", encoding="utf-8")
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "a1.txt").write_text("the gold", encoding="utf-8")
    (tmp_path / "meta.jsonl").write_text('{"id": "a1"}\n', encoding="utf-8")
    with pytest.raises(ServeError, match=r"no pages/ folder \(centrum serve serves DIR/pages/ only"):
        DatasetServer(tmp_path)
    (tmp_path / "pages").mkdir()
    with pytest.raises(ServeError, match="no .html pages"):
        DatasetServer(tmp_path)


def test_limits_are_checked() -> None:
    for bad in ({"idle_timeout_s": 0}, {"idle_timeout_s": float("nan")}, {"max_connections": 0}, {"workers": 0}):
        with pytest.raises(ServeError):
            Limits(**bad)  # type: ignore[arg-type]


def start(root: Path, *args: str) -> tuple[subprocess.Popen[str], str, int]:
    """``centrum serve ROOT ARGS`` in its own process: (process, host name, port) from the line it prints."""
    proc = subprocess.Popen([sys.executable, "-m", "centrum.cli", "serve", str(root), *args], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout
    line = proc.stdout.readline()
    assert line.startswith("serving 3 pages of ") and f".{DOMAIN}:" in line, line
    address = line.split(" at http://")[1].split("/")[0]
    name, port = address.rsplit(":", 1)
    return proc, name, int(port)


def test_command_prints_its_url_and_serves(tmp_path: Path) -> None:
    root = dataset(tmp_path)
    proc, name, port = start(root)
    try:
        assert get(port, "/p/a1", f"{name}:{port}")[2] == PAGE
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    for folder, message in ((tmp_path / "none", "not a folder"), (root / "pages", "no pages/ folder")):
        bad = subprocess.run([sys.executable, "-m", "centrum.cli", "serve", str(folder)], capture_output=True,
                             text=True, timeout=60)
        assert bad.returncode == 1 and message in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    bad = subprocess.run([sys.executable, "-m", "centrum.cli", "serve", str(root), "--idle-timeout", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "timeouts must be" in bad.stderr


def threads_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads: line")


def closed_by(socks: list[socket.socket], deadline: float) -> tuple[int, float]:
    """Wait until every socket reads EOF (or a reset) or ``deadline`` passes: (how many closed, when the last did)."""
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    closed, last = 0, 0.0
    while closed < len(socks) and time.monotonic() < deadline:
        for key, _ in sel.select(max(0.0, deadline - time.monotonic())):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            if not data:  # anything else would be an answer to a request never sent
                sel.unregister(sock)
                closed, last = closed + 1, time.monotonic()
    sel.close()
    return closed, last


def test_a_thousand_idle_connections_are_closed_by_the_timeout_while_a_request_is_answered(tmp_path: Path) -> None:
    root = dataset(tmp_path)
    timeout = 3.0
    proc, name, port = start(root, "--idle-timeout", str(timeout))
    idle: list[socket.socket] = []
    try:
        baseline = threads_of(proc.pid)
        opened = time.monotonic()
        for k in range(1000):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            if k % 10 == 0:  # a tenth start a request and never finish it (slowloris)
                s.sendall(b"GET /p/a1 HTTP/1.1\r\nHost: ")
            s.setblocking(False)
            idle.append(s)
        # A real request among them is answered at once, and no socket got a thread of its own.
        t0 = time.monotonic()
        assert get(port, "/p/a1", f"{name}:{port}")[2] == PAGE
        assert time.monotonic() - t0 < 2.0
        assert threads_of(proc.pid) <= baseline + WORKERS, (baseline, threads_of(proc.pid))
        # The idle ones are still open before the timeout (it is the timeout that closes them) ...
        early, _ = closed_by(idle, opened + timeout * 0.5)
        assert early == 0
        # ... and all closed once it has passed.
        closed, last = closed_by(idle, opened + timeout + 10)
        assert closed == 1000 and last - opened >= timeout * 0.9, (closed, last - opened)
        assert get(port, "/p/b-2", f"{name}:{port}")[2] == b"<p>two</p>"
        assert proc.poll() is None
    finally:
        for s in idle:
            s.close()
        proc.terminate()
        proc.wait(timeout=30)


def test_the_cap_evicts_silent_connections_and_never_starves_a_request(tmp_path: Path) -> None:
    root = dataset(tmp_path)
    with DatasetServer(root, limits=Limits(idle_timeout_s=60, max_connections=50, workers=2)) as s:
        idle = []
        try:
            for _ in range(200):
                c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
                c.setblocking(False)
                idle.append(c)
            t0 = time.monotonic()
            assert get(s.port, "/p/a1", f"{s.name}:{s.port}")[2] == PAGE
            assert time.monotonic() - t0 < 2.0
            # Long before the 60 s timeout the oldest silent ones were closed to make room; never more than 50 open.
            closed, _ = closed_by(idle[:150], time.monotonic() + 10)
            assert closed == 150
            assert sum(1 for _ in os.scandir(f"/proc/{os.getpid()}/fd")) < 10_000
        finally:
            for c in idle:
                c.close()
