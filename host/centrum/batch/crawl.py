"""A small synthetic crawl as a WARC file, the way a crawler records one: each page, its stylesheet and its image
as separate response records (per-record gzip members, as crawlers write them). Used by the batch tests and
``centrum bench --batch``; the same pages are also written as files so ``centrum extract`` can read them."""

from __future__ import annotations

import gzip
import io
import struct
import zlib
from pathlib import Path

from ..limits import MIB

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


# ---- hostile records (the tests of centrum.limits.INPUT_LIMITS) ----------------------------------------------------
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
