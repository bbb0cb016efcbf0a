"""Every limit the host enforces on a request, in one place.

host/PROTOCOL.md's "Limits" table lists the same names and values (tests/unit/test_protocol_doc.py compares them),
and each limit is checked before the work it bounds starts, so that an oversized or hostile request gets an error
answer naming the limit instead of exhausting memory or the stack. This module imports nothing heavy: the host
reads it on every cold start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

MIB = 1024 * 1024

# Browser -> host: Chrome's documented maximum message size. A larger frame is answered E_TOO_LARGE (skipped).
REQUEST_BYTES = 64 * MIB
# A request's `id` and `type` strings: both are echoed in the answer, the id in every chunk envelope, which must
# stay under message_bytes. An integer id must be exact in JavaScript (|id| < 2^53). Answered E_REQUEST.
ID_CHARS = 256
# JSON nesting of a request (objects and arrays). A snapshot request nests 4 deep and a label 5; the cap keeps
# the decoder's recursion (Python's limit is ~1000 frames) far away. Answered E_JSON, checked before decoding.
JSON_DEPTH = 32
# Snapshot sizes (E_SNAPSHOT), checked on the array lengths before any column is converted.
ELEMENTS = 2_000_000
TEXT_NODES = 4_000_000
# A press without the page source sends its ld+json scripts' texts alone (`json_ld`, E_SNAPSHOT): real pages have a
# few scripts of kilobytes; the caps keep the list from becoming a second payload (extension/src/pack.js stops
# collecting at the same values).
JSON_LD_SCRIPTS = 256
JSON_LD_CHARS = 4 * MIB
# Algorithm parameters (E_PARAMS): a string value's length and a list value's item count. Real values are a tag
# list or a preset name; the caps keep a parameter from becoming a second payload.
PARAM_STRING_CHARS = 1_000
PARAM_LIST_ITEMS = 1_000
# Host -> browser: a response's JSON beyond this loses its debug payload ({"trimmed": true}); every framed
# message (a chunk) stays under the browsers' 1 MB cap.
RESPONSE_BYTES = 16 * MIB
MESSAGE_BYTES = 1 * MIB

# name -> value, the names PROTOCOL.md uses.
LIMITS: dict[str, int] = {
    "request_bytes": REQUEST_BYTES,
    "json_depth": JSON_DEPTH,
    "id_chars": ID_CHARS,
    "elements": ELEMENTS,
    "text_nodes": TEXT_NODES,
    "json_ld_scripts": JSON_LD_SCRIPTS,
    "json_ld_chars": JSON_LD_CHARS,
    "param_string_chars": PARAM_STRING_CHARS,
    "param_list_items": PARAM_LIST_ITEMS,
    "response_bytes": RESPONSE_BYTES,
    "message_bytes": MESSAGE_BYTES,
}


# ---- `centrum batch`'s inputs ---------------------------------------------------------------------------------------
# Crawled bytes are untrusted: a record may lie about its size or inflate a thousandfold (a 1 MB gzip body of zeros
# is 1 GiB decoded). Each limit is checked while the bytes stream in (read in chunks, stopped one byte past it), so
# an oversized input is refused after reading at most its limit, never held or inflated whole. A page over a limit
# becomes a failed row (error_code E_TOO_LARGE, a message naming the limit, its value and the record) and the run goes
# on; an archived subresource over one is refused to the page, as one the crawl lacks, with a warning on the row.
# These are not part of the native-messaging protocol (LIMITS above, PROTOCOL.md's table).


@dataclass(frozen=True)
class InputLimit:
    name: str
    value: int
    why: str


WARC_RECORD_BYTES = 64 * MIB
BODY_BYTES = 16 * MIB
PAGE_FILE_BYTES = 16 * MIB
PAGE_ARCHIVE_BYTES = 64 * MIB
ROW_TEXT_CHARS = 1 * MIB

INPUT_LIMITS: dict[str, InputLimit] = {limit.name: limit for limit in (
    InputLimit("warc_record_bytes", WARC_RECORD_BYTES,
               "a WARC record's stored block (its WARC Content-Length: HTTP headers and body as sent), checked on "
               "the header before a byte of the body is read; web pages and their parts are far smaller, while "
               "video or dataset records need not be rendered"),
    InputLimit("body_bytes", BODY_BYTES,
               "an archived HTTP body after its Content- and Transfer-Encoding are decoded, counted while it inflates: "
               "the decompression-bomb bound, for the page and for every subresource served to it"),
    InputLimit("page_file_bytes", PAGE_FILE_BYTES,
               "a saved page (centrum extract and eval of a file, an .html file of a batch input folder), read at most "
               "this far: the same bound as an archived page's body"),
    InputLimit("page_archive_bytes", PAGE_ARCHIVE_BYTES,
               "all archived bodies served to one page (itself, its stylesheets, scripts, images and fonts, over the "
               "renderer's passes): a page that names thousands of large archived files is cut off at this total"),
    InputLimit("row_text_chars", ROW_TEXT_CHARS,
               "characters of a batch row's text and of its Markdown, each: a main content longer than a long book "
               "(a 10 MB listing or log page) is cut there, at a line end when one is near, and the row says so "
               "(text_truncated, and a warning with the full length), so one page cannot swell a shard"),
)}


# Bytes asked of a reader at a time: the most one read holds beyond a limit.
READ_CHUNK = 1 * MIB


class TooLarge(ValueError):
    """An input over one of :data:`INPUT_LIMITS`, found while streaming it (E_TOO_LARGE)."""

    def __init__(self, subject: str, limit: str, what: str) -> None:
        value = INPUT_LIMITS[limit].value
        super().__init__(f"{subject}: {what} is over the {limit} limit ({value} bytes, {value / MIB:g} MiB); "
                         f"refused without reading further")
        self.limit = limit


def read_capped(reader: Any, limit: str, subject: str, what: str) -> bytes:
    """At most ``INPUT_LIMITS[limit]`` bytes of ``reader`` (``read(n)`` -> bytes, b"" at the end), read in chunks: one
    byte past the limit raises :class:`TooLarge`, so a stream that would inflate without end is stopped there."""
    cap = INPUT_LIMITS[limit].value
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = reader.read(min(READ_CHUNK, cap + 1 - size))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > cap:
            raise TooLarge(subject, limit, what)
        chunks.append(chunk)


def read_page_file(path: str | os.PathLike[str]) -> bytes:
    """A saved page's bytes (``centrum extract``, ``eval``, ``batch`` over a folder), refused past ``page_file_bytes``
    (OSError as ``open`` raises it). A ``.gz`` page (a data set's ``pages/<id>.html.gz``) is inflated, counted while it
    inflates: the limit bounds what it holds, not what it weighs."""
    name = os.fspath(path)
    if name.endswith(".gz"):
        import gzip
        import zlib

        try:
            with gzip.open(name, "rb") as z:
                return read_capped(z, "page_file_bytes", f"file {name}", "the file once inflated")
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise OSError(f"{name}: not a readable gzip file ({e})") from None
    with open(name, "rb") as f:
        return read_capped(f, "page_file_bytes", f"file {name}", "the file")
