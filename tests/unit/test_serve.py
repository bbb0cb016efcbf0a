"""centrum serve: a shared-layout folder on 127.0.0.1, pages byte for byte, nothing else of the folder, a CSP that
allows this origin only, Host checked (DNS rebinding), only GET/HEAD; the command prints its URL."""

from __future__ import annotations

import http.client
import subprocess
import sys
from pathlib import Path

import pytest

from centrum.serve import CSP, DatasetServer, ServeError

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


def get(port: int, path: str, method: str = "GET", host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path, skip_host=True)
    conn.putheader("Host", host or f"127.0.0.1:{port}")
    conn.endheaders()
    r = conn.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    conn.close()
    return out


def test_pages_as_saved_and_nothing_else(tmp_path: Path) -> None:
    with DatasetServer(dataset(tmp_path)) as s:
        assert s.httpd.server_address[0] == "127.0.0.1" and s.ids == ["a1", "b-2", "c3"]
        status, headers, body = get(s.port, "/p/a1")
        assert status == 200 and body == PAGE and headers["content-type"] == "text/html; charset=windows-1252"
        # An undeclared UTF-8 page is declared UTF-8 (as the evaluation's renderer reads it), bytes unchanged.
        assert get(s.port, "/p/c3")[1]["content-type"] == "text/html; charset=utf-8"
        assert headers["content-security-policy"] == CSP and "default-src 'self'" in CSP
        assert "form-action 'none'" in CSP and headers["x-content-type-options"] == "nosniff"
        assert get(s.port, "/p/img/x.png")[1]["content-type"] == "image/png"
        assert get(s.port, "/p/b-2.html")[2] == b"<p>two</p>"
        assert b"/p/a1" in get(s.port, "/")[2]
        for path in ("/gold/a1.txt", "/meta.jsonl", "/p/../gold/a1.txt", "/p/%2e%2e/gold/a1.txt", "/p/link.txt",
                     "/p/.hidden.html", "/p//etc/passwd", "/p/", "/a1", "/p/a1/"):
            status, headers, body = get(s.port, path)
            assert status == 404 and b"gold" not in body and b"secret" not in body, path
            assert headers["content-security-policy"] == CSP
        # A page on a name rebound to 127.0.0.1 cannot read the server; other methods are refused.
        assert get(s.port, "/p/a1", host=f"evil.example:{s.port}")[0] == 421
        assert get(s.port, "/p/a1", host="127.0.0.1:1")[0] == 421
        assert get(s.port, "/p/a1", method="POST")[0] == 405
        assert get(s.port, "/p/a1", method="HEAD")[2] == b""


def test_a_folder_without_pages_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ServeError, match="no .html pages"):
        DatasetServer(tmp_path)


def test_command_prints_its_url_and_serves(tmp_path: Path) -> None:
    root = dataset(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "centrum.cli", "serve", str(root)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout
        line = proc.stdout.readline()
        assert line.startswith("serving 3 pages of ") and "http://127.0.0.1:" in line
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        assert get(port, "/p/a1")[2] == PAGE
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    bad = subprocess.run([sys.executable, "-m", "centrum.cli", "serve", str(tmp_path / "none")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "not a folder" in bad.stderr
