"""Serve a data-set folder in the shared layout on the loopback interface, offline, for annotation campaigns.

``pages/<id>.html`` is answered at ``/p/<id>`` byte for byte as saved, its charset in the ``Content-Type`` as the
evaluation's renderer reads it (:func:`centrum.charset.sniff`), and any other file under ``pages/`` at
``/p/<relative path>`` (a saved page's own images and styles). Nothing else is served: not ``gold/``, not
``meta.jsonl``, and nothing about a campaign's queue, which lives in the label database and is reached only by the
extension through native messaging; a page script on this origin can read the other saved pages and nothing more.

Safety: the socket binds 127.0.0.1 only. A request's path is never joined to a folder: the files are listed once
at start into a dict keyed by their relative path, and a request is a lookup in it (no ``..``, no symlink out of
``pages/``). A request whose ``Host`` is not this server's loopback name and port is refused, so a web page cannot
reach the server through a DNS name rebound to 127.0.0.1. Every answer carries a Content-Security-Policy that
allows this origin only (inline scripts and styles as saved, ``data:``/``blob:`` images), so a saved page fetches
nothing from elsewhere and posts no form; ``form-action 'none'``, ``base-uri 'self'`` (a saved ``<base href>`` to
the original site is ignored), ``nosniff``, no referrer, no caching. Only GET and HEAD are answered.
"""

from __future__ import annotations

import contextlib
import mimetypes
import re
import threading
from collections.abc import Callable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from . import charset

CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self'; "
       "frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'; "
       "frame-ancestors 'self'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}
MAX_FILES = 200_000
_PAGE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


class ServeError(Exception):
    """A folder that cannot be served."""


def index_files(root: str | Path) -> tuple[dict[str, Path], list[str]]:
    """``(relative path -> file, page ids)`` of a shared-layout folder (``pages/`` or the folder itself)."""
    root = Path(root)
    pages = root / "pages" if (root / "pages").is_dir() else root
    if not pages.is_dir():
        raise ServeError(f"{root}: not a folder")
    base = pages.resolve()
    files: dict[str, Path] = {}
    for path in sorted(base.rglob("*")):
        if len(files) >= MAX_FILES:
            raise ServeError(f"{pages}: more than {MAX_FILES} files")
        real = path.resolve()
        if not real.is_file() or not real.is_relative_to(base):  # a symlink out of pages/ is not served
            continue
        rel = path.relative_to(base).as_posix()
        if not any(part.startswith(".") for part in rel.split("/")):
            files[rel] = real
    ids = sorted(rel[:-5] for rel in files if "/" not in rel and rel.endswith(".html") and _PAGE_ID.fullmatch(rel[:-5]))
    if not ids:
        raise ServeError(f"{pages}: no .html pages")
    return files, ids


def _index_page(ids: list[str]) -> bytes:
    items = "".join(f'<li><a href="/p/{i}">{i}</a></li>' for i in ids)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>centrum serve</title></head>"
            f"<body><h1>{len(ids)} pages</h1><ol>{items}</ol></body></html>").encode()


def make_handler(files: dict[str, Path], ids: list[str], port_of: list[int]) -> type[BaseHTTPRequestHandler]:
    index = _index_page(ids)

    class Handler(BaseHTTPRequestHandler):
        server_version = "centrum-serve"
        sys_version = ""

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass  # quiet: the command prints its URL; a request log would only repeat page ids

        def _send(self, status: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            for k, v in HEADERS.items():
                self.send_header(k, v)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _host_ok(self) -> bool:
            host = self.headers.get("Host", "")
            return host in (f"127.0.0.1:{port_of[0]}", f"localhost:{port_of[0]}")

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if not self._host_ok():
                self._send(HTTPStatus.MISDIRECTED_REQUEST, b"this server answers only http://127.0.0.1:PORT/\n")
                return
            path = unquote(urlsplit(self.path).path)
            if path == "/":
                self._send(HTTPStatus.OK, index, "text/html; charset=utf-8")
                return
            rel = path[3:] if path.startswith("/p/") else None
            if rel is not None and rel in ids:
                rel += ".html"
            target = files.get(rel) if rel else None
            if target is None:
                self._send(HTTPStatus.NOT_FOUND, b"not found\n")
                return
            try:
                body = target.read_bytes()
            except OSError:
                self._send(HTTPStatus.NOT_FOUND, b"not found\n")
                return
            # A page's charset as the renderer of `centrum eval` reads it (the one sniffer), so the annotator sees
            # the text the evaluation scores; Chromium would read an undeclared UTF-8 file as windows-1252.
            ctype = f"text/html; charset={charset.sniff(body)}" if target.suffix.lower() in (".html", ".htm") else (
                mimetypes.guess_type(target.name)[0] or "application/octet-stream")
            self._send(HTTPStatus.OK, body, ctype)

        do_HEAD = do_GET  # noqa: N815

        def _refuse(self) -> None:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"only GET and HEAD\n")

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse  # noqa: N815

    return Handler


@contextlib.contextmanager
def _in_thread(server: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    """Serve ``server`` from a daemon thread (its request threads are daemons too, as ThreadingHTTPServer's are); shut
    down, closed and joined on leaving."""
    thread = threading.Thread(target=server.serve_forever, name="loopback-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def loopback(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """``with loopback(Handler) as base:`` serves ``handler`` on 127.0.0.1 at a free port from a daemon thread;
    ``base`` is ``http://127.0.0.1:PORT`` (no trailing slash)."""
    with _in_thread(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


class QuietFileHandler(SimpleHTTPRequestHandler):
    """A folder's files (``functools.partial(QuietFileHandler, directory=...)``) without a log line per request: for
    folders this program wrote itself (the pipeline bench's pages, test fixtures). Unlike :class:`DatasetServer` it has
    no Host check, no CSP and no fixed file list, so it is not for saved pages from the web."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature of the base class
        pass


class DatasetServer:
    """``with DatasetServer(DIR) as s: s.url`` serves DIR on 127.0.0.1 in a thread (``port=0``: a free port)."""

    def __init__(self, root: str | Path, port: int = 0) -> None:
        self.files, self.ids = index_files(root)
        port_of = [port]
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(self.files, self.ids, port_of))
        self.port = port_of[0] = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/"
        self._running = contextlib.ExitStack()

    def page_url(self, page_id: str) -> str:
        return f"{self.url}p/{page_id}"

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def __enter__(self) -> DatasetServer:
        self._running.enter_context(_in_thread(self.httpd))
        return self

    def __exit__(self, *exc: object) -> None:
        self._running.close()
