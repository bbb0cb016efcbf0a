"""Serve a data-set folder in the shared layout on the loopback interface, offline, for annotation campaigns.

``DIR/pages/<id>.html`` is answered at ``/p/<id>`` byte for byte as saved, its charset in the ``Content-Type`` as
the evaluation's renderer reads it (:func:`centrum.core.charset.sniff`), and any other file under ``pages/`` at
``/p/<relative path>`` (a saved page's own images and styles). Nothing else is served: not ``gold/``, not
``meta.jsonl``, and nothing about a campaign's queue, which lives in the label database and is reached only by the
extension through native messaging. A folder without ``pages/`` is refused (serving the folder itself would serve
whatever lies beside the pages).

The saved pages are hostile (they come from the web, scripts and all), so they get an origin of their own:

* **A host name of this run**: ``http://<16 random hex>.centrum.localhost:PORT/``. Browsers resolve ``*.localhost``
  to the loopback interface themselves (Chromium, Firefox), and cookies ignore ports, so a page on
  ``127.0.0.1:PORT`` would share its cookie jar with every other loopback service; this name shares it with none.
  A request whose ``Host`` is not exactly that name and port is refused (421): a web page cannot reach the server
  through a DNS name rebound to 127.0.0.1, and the bare ``127.0.0.1:PORT`` gets nothing either.
* **A sandboxed document**: the Content-Security-Policy starts with ``sandbox allow-scripts`` (no
  ``allow-same-origin``), so the page runs with an opaque origin: no cookies (``document.cookie`` throws), no
  storage, and a fetch of another saved page is cross-origin and unreadable (no CORS headers are ever sent); no
  forms, pop-ups, top-level navigation of other contexts or plugins. The scripts still run: the page looks as saved.
  The rest of the policy allows this server only (inline scripts and styles as saved, ``data:``/``blob:`` images),
  so a saved page loads nothing from elsewhere and connects nowhere else; ``form-action 'none'``, ``base-uri
  'self'`` (a saved ``<base href>`` to the original site is ignored), ``frame-ancestors 'none'``, ``nosniff``, no
  referrer, no caching, and never a ``Set-Cookie``. (No policy can stop a document navigating itself away: what it
  could carry off is only what it can read, which is its own saved text.)

The files are listed once at start into a dict keyed by their relative path, and a request is a lookup in it: a
path is never joined to a folder (no ``..``, no symlink out of ``pages/``). Only GET and HEAD are answered.

Connections are bounded (:class:`Limits`): one selector thread accepts and reads each connection's request head
(up to :data:`MAX_HEAD_BYTES`) without taking a worker; a connection whose head has not arrived within the idle
timeout is closed, and when :data:`MAX_CONNECTIONS` are open the oldest still-silent one is closed to let a new
one in. Only a complete request head goes to the bounded worker pool, and its answer must be taken by the client
within the write timeout. So idle or slow sockets neither pile up threads nor starve a real request.
"""

from __future__ import annotations

import contextlib
import errno
import io
import mimetypes
import re
import resource
import secrets
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from ..core import charset

DOMAIN = "centrum.localhost"
CSP = ("sandbox allow-scripts; default-src 'self'; script-src 'self' 'unsafe-inline'; "
       "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
       "media-src 'self' data: blob:; connect-src 'self'; frame-src 'self'; worker-src 'self'; object-src 'none'; "
       "base-uri 'self'; form-action 'none'; frame-ancestors 'none'")
# No Cross-Origin-Resource-Policy: the sandboxed page's own images and styles are requested from its opaque origin,
# which "same-origin" or "same-site" would refuse; the random host name and the Host check keep other sites out.
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
MAX_FILES = 200_000
MAX_HEAD_BYTES = 16 * 1024  # request line and headers; a browser's GET is well under 4 KiB
IDLE_TIMEOUT_S = 10.0  # a connection's whole request head must arrive within this
WRITE_TIMEOUT_S = 30.0  # the client must take the whole answer within this
# Open at once, silent and being answered together: each costs a descriptor and a few KiB, never a thread. Lowered to
# what RLIMIT_NOFILE leaves (less a margin for files and the workers), so the cap, not a failing accept(), decides.
MAX_CONNECTIONS = 4096
WORKERS = 8  # threads answering complete requests
_PAGE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_HEAD_END = re.compile(rb"\r?\n\r?\n")


class ServeError(Exception):
    """A folder that cannot be served."""


@dataclass(frozen=True)
class Limits:
    """How long and how many: ``centrum serve --idle-timeout`` sets the first (tests use a short one)."""

    idle_timeout_s: float = IDLE_TIMEOUT_S
    write_timeout_s: float = WRITE_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS
    workers: int = WORKERS

    def __post_init__(self) -> None:
        if not (0 < self.idle_timeout_s <= 3600 and 0 < self.write_timeout_s <= 3600):
            raise ServeError("timeouts must be more than 0 and at most 3600 seconds")
        if not (1 <= self.max_connections <= 100_000 and 1 <= self.workers <= 256):
            raise ServeError("max_connections must be 1..100000 and workers 1..256")


def index_files(root: str | Path) -> tuple[dict[str, Path], list[str]]:
    """``(relative path -> file, page ids)`` of ``root/pages/`` (a shared-layout data-set folder)."""
    root = Path(root)
    if not root.is_dir():
        raise ServeError(f"{root}: not a folder")
    pages = root / "pages"
    if not pages.is_dir():
        raise ServeError(f"{root}: no pages/ folder (centrum serve serves DIR/pages/ only, never the files beside "
                         "it: put the .html files in DIR/pages/)")
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


@dataclass
class _Request:
    """A connection whose request head was read by the selector thread: the handler writes its answer by
    ``deadline`` (a monotonic time)."""

    sock: socket.socket
    head: bytes
    deadline: float


class _DeadlineWriter(io.RawIOBase):
    """A socket's writer that fails once ``deadline`` passes (a per-send timeout alone lets a client that takes one
    byte now and then hold a worker for ever)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock, self._deadline = sock, deadline

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        while view:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the client did not take the answer in time")
            self._sock.settimeout(left)
            view = view[self._sock.send(view):]
        return len(data)


def make_handler(files: dict[str, Path], ids: list[str]) -> type[BaseHTTPRequestHandler]:
    """The request handler of a :class:`BoundedServer` serving ``files``; the allowed ``Host`` is the server's."""
    index = _index_page(ids)

    class Handler(BaseHTTPRequestHandler):
        server_version = "centrum-serve"
        sys_version = ""
        server: BoundedServer  # type: ignore[assignment]  # the server this handler is made for

        def setup(self) -> None:
            # The head is already read (the selector thread did it); one request per connection (HTTP/1.0).
            req: _Request = self.request
            self.connection = req.sock
            self.rfile = io.BytesIO(req.head)
            self.wfile = _DeadlineWriter(req.sock, req.deadline)  # type: ignore[assignment]

        def finish(self) -> None:
            pass  # nothing buffered: _DeadlineWriter writes through; the server closes the socket

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

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.headers.get("Host", "").lower() != self.server.host:
                self._send(HTTPStatus.MISDIRECTED_REQUEST,
                           b"this server answers only at the address `centrum serve` printed\n")
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


class BoundedServer:
    """An HTTP server on 127.0.0.1 with the connection bounds of :class:`Limits` (see the module docstring).

    ``handler(request, client_address, server)`` answers one complete request (:func:`make_handler`); ``host`` is
    the one ``Host`` header value it accepts. Same life cycle as socketserver's: ``serve_forever()`` in a thread,
    ``shutdown()`` from another, then ``server_close()``.
    """

    def __init__(self, port: int, handler: Callable[..., Any], host_name: str, limits: Limits) -> None:
        self.limits = limits
        self.socket = socket.create_server(("127.0.0.1", port), backlog=1024)
        self.socket.setblocking(False)
        self.server_address: tuple[str, int] = self.socket.getsockname()[:2]
        self.host = f"{host_name}:{self.server_address[1]}".lower()
        self._handler = handler
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self.max_connections = limits.max_connections if soft == resource.RLIM_INFINITY else (
            max(16, min(limits.max_connections, soft - 64)))
        self._silent: dict[socket.socket, tuple[float, bytearray]] = {}  # oldest first: (deadline, head so far)
        self._busy = 0  # connections handed to the workers, not yet closed
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(limits.workers, thread_name_prefix="centrum-serve")
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)

    # -- the selector thread

    def serve_forever(self) -> None:
        self._stopped.clear()
        sel = selectors.DefaultSelector()
        sel.register(self.socket, selectors.EVENT_READ)
        sel.register(self._wake_r, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                first = next(iter(self._silent.values()), None)
                wait = 1.0 if first is None else min(1.0, max(0.0, first[0] - time.monotonic()))
                for key, _ in sel.select(wait):
                    if key.fileobj is self.socket:
                        self._accept(sel)
                    elif key.fileobj is self._wake_r:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(64)
                    else:
                        self._read(sel, key.fileobj)  # type: ignore[arg-type]  # only sockets are registered
                self._expire(sel)
        finally:
            for sock in list(self._silent):
                self._close(sel, sock)
            sel.close()
            self._stop.clear()
            self._stopped.set()

    def _open(self) -> int:
        with self._lock:
            return len(self._silent) + self._busy

    def _close(self, sel: selectors.BaseSelector, sock: socket.socket) -> None:
        self._silent.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(sock)
        sock.close()

    def _accept(self, sel: selectors.BaseSelector) -> None:
        for _ in range(256):  # a bounded batch: the silent ones get their turn to be read
            try:
                sock, _addr = self.socket.accept()
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM) and self._silent:
                    self._close(sel, next(iter(self._silent)))  # out of descriptors: the oldest silent one goes
                    continue
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    time.sleep(0.05)  # every descriptor is answering a request: wait for one instead of spinning
                return
            if self._open() >= self.max_connections:
                if not self._silent:  # every open connection is being answered: this one waits for nothing
                    sock.close()
                    continue
                self._close(sel, next(iter(self._silent)))
            sock.setblocking(False)
            self._silent[sock] = (time.monotonic() + self.limits.idle_timeout_s, bytearray())
            sel.register(sock, selectors.EVENT_READ)

    def _read(self, sel: selectors.BaseSelector, sock: socket.socket) -> None:
        entry = self._silent.get(sock)
        if entry is None:
            return
        try:
            data = sock.recv(MAX_HEAD_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        head = entry[1]
        head += data  # in place: the bytearray in self._silent
        complete = _HEAD_END.search(head) is not None
        if not data or (not complete and len(head) >= MAX_HEAD_BYTES):
            self._close(sel, sock)  # gone, or a head no browser sends
            return
        if not complete:
            return
        del self._silent[sock]
        sel.unregister(sock)
        with self._lock:
            self._busy += 1
        self._pool.submit(self._answer, sock, bytes(head))

    def _expire(self, sel: selectors.BaseSelector) -> None:
        now = time.monotonic()
        while self._silent:
            sock, (deadline, _) = next(iter(self._silent.items()))
            if deadline > now:
                return
            self._close(sel, sock)

    # -- the workers

    def _answer(self, sock: socket.socket, head: bytes) -> None:
        try:
            sock.setblocking(True)
            self._handler(_Request(sock, head, time.monotonic() + self.limits.write_timeout_s),
                          sock.getpeername()[:2], self)
        except Exception:  # noqa: BLE001 - a client that vanished or stalled must never end the server
            pass
        finally:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            with self._lock:
                self._busy -= 1

    # -- life cycle

    def shutdown(self) -> None:
        """Stop :meth:`serve_forever` (from another thread) and wait for it to return."""
        self._stop.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()
        self._pool.shutdown(wait=False, cancel_futures=True)  # a running answer ends by its write deadline
        self._wake_r.close()
        self._wake_w.close()


class _Serving(Protocol):
    def serve_forever(self) -> None: ...
    def shutdown(self) -> None: ...
    def server_close(self) -> None: ...


@contextlib.contextmanager
def _in_thread(server: _Serving) -> Iterator[_Serving]:
    """Serve ``server`` from a daemon thread; shut down, closed and joined on leaving."""
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
    """``with loopback(Handler) as base:`` serves ``handler`` on 127.0.0.1 at a free port from a daemon thread (its
    request threads are daemons too, as ThreadingHTTPServer's are); ``base`` is ``http://127.0.0.1:PORT`` (no
    trailing slash). For this program's own pages and tests: saved pages from the web go to :class:`DatasetServer`."""
    with _in_thread(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        assert isinstance(server, ThreadingHTTPServer)
        yield f"http://127.0.0.1:{server.server_address[1]}"


class QuietFileHandler(SimpleHTTPRequestHandler):
    """A folder's files (``functools.partial(QuietFileHandler, directory=...)``) without a log line per request: for
    folders this program wrote itself (the pipeline bench's pages, test fixtures). Unlike :class:`DatasetServer` it has
    no Host check, no CSP and no fixed file list, so it is not for saved pages from the web."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature of the base class
        pass


class DatasetServer:
    """``with DatasetServer(DIR) as s: s.url`` serves ``DIR/pages/`` at ``http://<random>.centrum.localhost:PORT/``
    from a thread (``port=0``: a free port; the name is new for every server)."""

    def __init__(self, root: str | Path, port: int = 0, limits: Limits | None = None) -> None:
        self.files, self.ids = index_files(root)
        self.name = f"{secrets.token_hex(8)}.{DOMAIN}"
        self.httpd = BoundedServer(port, make_handler(self.files, self.ids), self.name, limits or Limits())
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://{self.name}:{self.port}/"
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
