"""A small synthetic crawl as a WARC file, the way a crawler records one: each page, its stylesheet and its image
as separate response records (per-record gzip members, as crawlers write them). Used by the batch tests and
``centrum bench --batch``; the same pages are also written as files so ``centrum extract`` can read them."""

from __future__ import annotations

import gzip
import io
import struct
import zlib
from pathlib import Path

from ..core.limits import MIB

HOST = "http://archive.test"
CSS = b"""body { font-family: serif; margin: 0 auto; max-width: 50em; }
nav, footer { font-size: 80%; color: #555; }
.hidden-by-css { display: none; }
"""


def _png(rgb: tuple[int, int, int] = (200, 60, 40), size: int = 8) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


WORDS = ("harbour", "ledger", "meadow", "engine", "quartz", "lantern", "orchard", "signal", "tundra", "velvet",
         "archive", "beacon", "cobalt", "delta", "ember", "fjord", "granite", "hollow", "island", "juniper")


def page_html(i: int, charset_meta: bool = True, paragraphs: int = 5) -> str:
    """Page ``i``: navigation, an article of a few paragraphs, a sidebar, a footer; text only the CSS hides."""
    para = [" ".join(WORDS[(i * 7 + k * 3 + j) % len(WORDS)] for j in range(14)).capitalize() + "."
            for k in range(paragraphs)]
    meta = '<meta charset="utf-8">' if charset_meta else ""
    return (f"<!DOCTYPE html><html lang=en><head>{meta}<title>Page {i}</title>"
            f'<link rel="stylesheet" href="static/site.css"></head><body>'
            f'<nav><a href="/">Home</a> <a href="/p/{i + 1}.html">Next</a> <a href="/about">About</a></nav>'
            f"<article><h1>Story number {i}</h1>"
            + "".join(f"<p>{p} Paragraph {k} of story {i} caf\u00e9.</p>" for k, p in enumerate(para))
            + f'<img src="static/img{i % 3}.png" alt="figure {i}" width="8" height="8">'
            # A tracker on another host the crawl did not capture: refused, never fetched.
            + f'<img src="http://tracker.invalid/t.gif?p={i}" alt="" width="1" height="1">'
            f'<p class="hidden-by-css">Only visible without the stylesheet {i}.</p></article>'
            f"<aside><h2>Related</h2><ul><li><a href='/p/{i + 2}.html'>Other</a></li></ul></aside>"
            f"<footer>Copyright {i} Archive Test</footer></body></html>")


def response_record(url: str, content_type: str, body: bytes, status: int = 200, location: str | None = None,
                    headers: dict[str, str] | None = None, record_id: str | None = None) -> bytes:
    """One gzip member holding a WARC response record of an HTTP response with this body (``headers``: more HTTP
    headers, e.g. a Content-Encoding the body is in; ``record_id``: the WARC-Record-ID instead of a fresh one)."""
    from fastwarc.warc import WarcRecord, WarcRecordType

    rec = WarcRecord()
    rec.init_headers(record_type=WarcRecordType.response)
    rec.headers["WARC-Target-URI"] = url
    rec.headers["Content-Type"] = "application/http; msgtype=response"
    if record_id is not None:
        rec.headers["WARC-Record-ID"] = record_id
    reason = "OK" if status == 200 else "Status"
    where = f"Location: {location}\r\n" if location else ""
    more = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    http = (f"HTTP/1.1 {status} {reason}\r\n{where}{more}Content-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
    rec.set_bytes_content(http)
    buf = io.BytesIO()
    rec.write(buf, checksum_data=True)
    return gzip.compress(buf.getvalue(), compresslevel=1)


def plain_record(record_type: str, url: str, block: bytes, content_type: str,
                 headers: dict[str, str] | None = None) -> bytes:
    """One gzip member holding a WARC record that is not a response (warcinfo, request, revisit...)."""
    from fastwarc.warc import WarcRecord, WarcRecordType

    rec = WarcRecord()
    rec.init_headers(record_type=getattr(WarcRecordType, record_type))
    if url:
        rec.headers["WARC-Target-URI"] = url
    rec.headers["Content-Type"] = content_type
    for k, v in (headers or {}).items():
        rec.headers[k] = v
    rec.set_bytes_content(block)
    buf = io.BytesIO()
    rec.write(buf, checksum_data=True)
    return gzip.compress(buf.getvalue(), compresslevel=1)


FIRST_PAGE_ID = "<urn:uuid:00000000-0000-4000-8000-000000000046>"
# The records of :func:`write_mixed_crawl` by what they are, with the row status each must get.
MIXED = {
    "page": "ok", "recrawl": "ok", "exact duplicate": "ok", "stylesheet": "skipped: not HTML",
    "image": "skipped: not HTML", "json": "skipped: not HTML", "revisit": "skipped: revisit",
    "404": "http_error", "301": "http_error", "empty": "failed", "random bytes": "failed", "xhtml": "ok",
    "utf-16": "ok", "iso-8859-1": "ok",
}


def write_mixed_crawl(warc: Path) -> dict[str, list[str]]:
    """A WARC with every kind of record a crawl holds: a warcinfo and a request record (read, not rows), pages, a
    recrawl of a page (same URL, new bytes), an exact duplicate (same bytes, another URL), non-HTML responses, a
    revisit, a 404 and a 301, an empty page, random bytes served as HTML, an XHTML page, a UTF-16 page (BOM) and an
    ISO-8859-1 page with curly quotes (bytes 0x93/0x94, which browsers read as windows-1252). Returns each kind's
    WARC-Target-URIs in order (see :data:`MIXED`)."""
    import random

    kinds: dict[str, list[str]] = {k: [] for k in MIXED}

    def add(kind: str, url: str, record: bytes) -> bytes:
        kinds[kind].append(url)
        return record

    rng = random.Random(46)
    latin = ("<html lang=fr><head><title>Latin</title></head><body><article><h1>Guillemets</h1>"
             + "<p>\u201cQuoted words\u201d in a latin page, caf\u00e9 cr\u00e8me, long enough to be the content "
             "of this page and kept whole by the extractor.</p>" * 4 + "</article></body></html>")
    xhtml = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" '
             'lang="en"><head><title>X</title></head><body><article><h1>XHTML page</h1>'
             + "<p>An XHTML document served as application/xhtml+xml with a paragraph of plain words.</p>" * 4
             + "</article></body></html>")
    with warc.open("wb") as f:
        f.write(plain_record("warcinfo", "", b"software: centrum tests\r\n", "application/warc-fields"))
        f.write(plain_record("request", page_url(0), b"GET /p/0.html HTTP/1.1\r\nHost: archive.test\r\n\r\n",
                             "application/http; msgtype=request"))
        f.write(add("stylesheet", f"{HOST}/p/static/site.css", response_record(f"{HOST}/p/static/site.css",
                                                                                "text/css", CSS)))
        f.write(add("image", f"{HOST}/p/static/img0.png", response_record(f"{HOST}/p/static/img0.png", "image/png",
                                                                           _png())))
        f.write(add("json", f"{HOST}/api.json", response_record(f"{HOST}/api.json", "application/json",
                                                                 b'{"a": 1}')))
        for i in range(3):
            f.write(add("page", page_url(i), response_record(page_url(i), "text/html", page_html(i).encode("utf-8"),
                                                             record_id=FIRST_PAGE_ID if i == 0 else None)))
        f.write(add("recrawl", page_url(1), response_record(page_url(1), "text/html",
                                                            page_html(11).encode("utf-8"))))
        f.write(add("exact duplicate", f"{HOST}/copy/2.html", response_record(f"{HOST}/copy/2.html", "text/html",
                                                                             page_html(2).encode("utf-8"))))
        f.write(add("404", f"{HOST}/missing.html", response_record(
            f"{HOST}/missing.html", "text/html", b"<html><body><h1>Not found</h1><p>No such page.</p></body></html>",
            status=404)))
        f.write(add("301", f"{HOST}/old.html", response_record(
            f"{HOST}/old.html", "text/html", b"<html><body>Moved</body></html>", status=301,
            location=page_url(0))))
        f.write(add("empty", f"{HOST}/empty.html", response_record(f"{HOST}/empty.html", "text/html", b"")))
        f.write(add("random bytes", f"{HOST}/noise.html", response_record(
            f"{HOST}/noise.html", "text/html", bytes(rng.getrandbits(8) for _ in range(4096)))))
        f.write(add("xhtml", f"{HOST}/x.xhtml", response_record(f"{HOST}/x.xhtml", "application/xhtml+xml",
                                                                 xhtml.encode("utf-8"))))
        f.write(add("revisit", page_url(0), plain_record(
            "revisit", page_url(0), b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
            "application/http; msgtype=response",
            {"WARC-Profile": "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
             "WARC-Refers-To-Target-URI": page_url(0), "WARC-Refers-To": FIRST_PAGE_ID})))
        f.write(add("utf-16", f"{HOST}/u16.html", response_record(f"{HOST}/u16.html", "text/html",
                                                                   page_html(5).encode("utf-16"))))
        f.write(add("iso-8859-1", f"{HOST}/latin.html", response_record(
            f"{HOST}/latin.html", "text/html; charset=iso-8859-1", latin.encode("windows-1252"))))
    return kinds


def page_url(i: int) -> str:
    return f"{HOST}/p/{i}.html"


def write_crawl(warc: Path, pages: int, folder: Path | None = None, latin1_every: int = 10,
                paragraphs: int = 5) -> list[str]:
    """Write ``pages`` pages (plus one stylesheet and three images, each its own record) to ``warc``; every
    ``latin1_every``-th page is windows-1252 bytes declared only by the HTTP header. With ``folder``, the same
    pages go to ``folder/p/<i>.html`` with ``folder/p/static/`` beside them (what `centrum extract` renders: inside
    the page's folder, since a saved page reaches no file outside it). Returns the page URLs."""
    urls = []
    with warc.open("wb") as f:
        f.write(response_record(f"{HOST}/p/static/site.css", "text/css", CSS))
        for k in range(3):
            f.write(response_record(f"{HOST}/p/static/img{k}.png", "image/png", _png((40 * k, 90, 200 - 40 * k))))
        for i in range(pages):
            latin = latin1_every > 0 and i % latin1_every == latin1_every - 1
            html = page_html(i, charset_meta=not latin, paragraphs=paragraphs)
            body = html.encode("windows-1252" if latin else "utf-8")
            ctype = "text/html; charset=windows-1252" if latin else "text/html"
            f.write(response_record(page_url(i), ctype, body))
            urls.append(page_url(i))
            if folder is not None:
                (folder / "p").mkdir(parents=True, exist_ok=True)
                # The file copy is UTF-8 with its <meta>: the same characters the archived bytes decode to.
                (folder / "p" / f"{i}.html").write_text(page_html(i, charset_meta=True, paragraphs=paragraphs),
                                                       encoding="utf-8")
    if folder is not None:
        static = folder / "p" / "static"
        static.mkdir(parents=True, exist_ok=True)
        (static / "site.css").write_bytes(CSS)
        for k in range(3):
            (static / f"img{k}.png").write_bytes(_png((40 * k, 90, 200 - 40 * k)))
    return urls


# ---- hostile records (the tests of centrum.core.limits.INPUT_LIMITS)
# ----------------------------------------------------
_ZEROS = bytes(MIB)


def gzip_zeros(size: int, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
    """A gzip member that inflates to ``prefix``, ``size`` zero bytes, then ``suffix`` (1 GiB of zeros: ~1 MB), built
    without compressing the zeros: one MiB of them is compressed once after a full flush (which makes the deflate
    output of equal input equal) and repeated, so a 1 GiB bomb takes a second and a few MB of memory."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the gzip header and trailer are written here
    crc = zlib.crc32(prefix)
    parts = [b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff", comp.compress(prefix), comp.flush(zlib.Z_FULL_FLUSH)]
    block = comp.compress(_ZEROS) + comp.flush(zlib.Z_FULL_FLUSH)
    whole, rest = divmod(size, MIB)
    if whole:
        parts.append(block * whole)
        for _ in range(whole):
            crc = zlib.crc32(_ZEROS, crc)
    parts += [comp.compress(bytes(rest) + suffix), comp.flush()]
    crc = zlib.crc32(suffix, zlib.crc32(bytes(rest), crc))
    total = len(prefix) + size + len(suffix)
    parts.append(struct.pack("<II", crc & 0xFFFFFFFF, total & 0xFFFFFFFF))
    return b"".join(parts)


def bomb_record(url: str, decoded: int, content_type: str = "text/html") -> bytes:
    """A response record (one gzip member) whose body is ``Content-Encoding: gzip`` of ``decoded`` zero bytes."""
    return response_record(url, content_type, gzip_zeros(decoded), headers={"Content-Encoding": "gzip"})


def long_record(url: str, body_bytes: int, content_type: str = "text/html") -> bytes:
    """A response record of ``body_bytes`` zero bytes as sent (a stored block that long), streamed into its gzip
    member without holding it."""
    import uuid

    http = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {body_bytes}\r\n\r\n".encode()
    head = (f"WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{uuid.uuid4()}>\r\n"
            f"WARC-Date: 2026-01-01T00:00:00Z\r\nWARC-Target-URI: {url}\r\n"
            f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http) + body_bytes}\r\n\r\n"
            ).encode()
    return gzip_zeros(body_bytes, head + http, b"\r\n\r\n")
