"""A small synthetic crawl as a WARC file, the way a crawler records one: each page, its stylesheet and its image
as separate response records (per-record gzip members, as crawlers write them). Used by the batch tests and
``centrum bench --batch``; the same pages are also written as files so ``centrum extract`` can read them."""

from __future__ import annotations

import gzip
import io
import struct
import zlib
from pathlib import Path

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
            f'<link rel="stylesheet" href="../static/site.css"></head><body>'
            f'<nav><a href="/">Home</a> <a href="/p/{i + 1}.html">Next</a> <a href="/about">About</a></nav>'
            f"<article><h1>Story number {i}</h1>"
            + "".join(f"<p>{p} Paragraph {k} of story {i} caf\u00e9.</p>" for k, p in enumerate(para))
            + f'<img src="../static/img{i % 3}.png" alt="figure {i}" width="8" height="8">'
            # A tracker on another host the crawl did not capture: refused, never fetched.
            + f'<img src="http://tracker.invalid/t.gif?p={i}" alt="" width="1" height="1">'
            f'<p class="hidden-by-css">Only visible without the stylesheet {i}.</p></article>'
            f"<aside><h2>Related</h2><ul><li><a href='/p/{i + 2}.html'>Other</a></li></ul></aside>"
            f"<footer>Copyright {i} Archive Test</footer></body></html>")


def response_record(url: str, content_type: str, body: bytes, status: int = 200, location: str | None = None) -> bytes:
    """One gzip member holding a WARC response record of an HTTP response with this body."""
    from fastwarc.warc import WarcRecord, WarcRecordType

    rec = WarcRecord()
    rec.init_headers(record_type=WarcRecordType.response)
    rec.headers["WARC-Target-URI"] = url
    rec.headers["Content-Type"] = "application/http; msgtype=response"
    reason = "OK" if status == 200 else "Status"
    where = f"Location: {location}\r\n" if location else ""
    http = (f"HTTP/1.1 {status} {reason}\r\n{where}Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
            .encode("ascii") + body)
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
    pages go to ``folder/p/<i>.html`` with ``folder/static/`` beside them (what `centrum extract` renders).
    Returns the page URLs."""
    urls = []
    with warc.open("wb") as f:
        f.write(response_record(f"{HOST}/static/site.css", "text/css", CSS))
        for k in range(3):
            f.write(response_record(f"{HOST}/static/img{k}.png", "image/png", _png((40 * k, 90, 200 - 40 * k))))
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
        (folder / "static").mkdir(parents=True, exist_ok=True)
        (folder / "static" / "site.css").write_bytes(CSS)
        for k in range(3):
            (folder / "static" / f"img{k}.png").write_bytes(_png((40 * k, 90, 200 - 40 * k)))
    return urls
