"""What ``centrum batch`` reads: WARC / WARC.gz files, folders of ``.html`` files and text files of URLs, as a stream
of small :class:`Task` descriptors (never the page bytes: a worker reads its own record from the WARC at the
record's offset, so the driver's memory stays bounded however large the crawl).

A WARC is indexed once by the driver (one pass over its headers): the HTML response records become tasks, and every
response record's URL -> offset goes into the :class:`WarcIndex` the renderer serves subresources from.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ..core import charset
from ..core.limits import WARC_RECORD_BYTES, TooLarge, read_capped, read_page_file
from ..core.render import Archived

HTML_TYPES = ("text/html", "application/xhtml+xml")
WARC_SUFFIXES = (".warc", ".warc.gz")
# The headers an archived response is served with: what the page needs to be understood (type, redirect target);
# never the archived Content-Encoding / Transfer-Encoding, since the body is served decoded.
SERVED_HEADERS = ("content-type", "location")


class InputError(ValueError):
    """An input path that cannot be read as a WARC, a folder of pages or a URL list."""


# Row statuses decided from a record's headers alone (the record is not sent to a worker). Every WARC record of
# interest (response, revisit) gets a row, so the rows of a run add up to the records read.
OK = "ok"
HTTP_ERROR = "http_error"  # an HTML response whose HTTP status is not 2xx (404, 301, 500...): no text extracted
SKIPPED_NOT_HTML = "skipped: not HTML"
SKIPPED_REVISIT = "skipped: revisit"
SKIPPED_DUPLICATE = "skipped: duplicate record id"
INTEREST = ("response", "revisit")  # the WARC record types that get a row; the others are counted, by type


@dataclass(frozen=True)
class Task:
    """One input record. ``record_id`` is the row key of the output (WARC-Record-ID, file path or URL); the other
    fields are the record's provenance, copied to its row so any row leads back to its record."""

    record_id: str
    url: str
    kind: str  # "warc" | "file" | "url"
    path: str = ""  # the WARC or the HTML file
    offset: int = -1  # the record's start in the WARC
    length: int = -1  # its stored length there (the gzip member, for a .warc.gz)
    warc_type: str = ""
    warc_date: str = ""
    content_hash: str = ""  # sha1 of the HTTP payload as archived (base32, as WARC-Payload-Digest writes it)
    content_type: str = ""
    http_status: int | None = None
    # The earliest input record this one repeats: the same payload (an exact duplicate), else the same URL (a
    # recrawl); a revisit names the record it refers to. The row is still written (and an HTML one extracted).
    duplicate_of: str = ""
    # "" : sent to a worker; otherwise the row's status, decided from the headers (http_error, skipped: ...).
    status: str = ""
    # A record repeating an earlier record's WARC-Record-ID: its row (keyed by :func:`position_id`) says so.
    repeats_id: str = ""


@dataclass(frozen=True)
class IndexEntry:
    offset: int
    status: int
    content_type: str


WarcIndex = dict[str, IndexEntry]  # URL (without fragment) -> its first response record


def is_warc(path: Path) -> bool:
    return path.name.lower().endswith(WARC_SUFFIXES)


def _is_html(content_type: str | None) -> bool:
    return bool(content_type) and content_type.split(";", 1)[0].strip().lower() in HTML_TYPES  # type: ignore[union-attr]


@dataclass
class WarcCounts:
    """Records read from the WARCs of a run, by WARC-Type (the summary's denominator)."""

    by_type: dict[str, int]

    def add(self, kind: str) -> None:
        self.by_type[kind] = self.by_type.get(kind, 0) + 1


def _payload_hash(record: object) -> str:
    """sha1 (base32, WARC's spelling) of a record's HTTP payload as archived, read in bounded chunks."""
    digest = hashlib.sha1(usedforsecurity=False)
    reader = record.reader  # type: ignore[attr-defined]
    while chunk := reader.read(1 << 20):
        digest.update(chunk)
    return "sha1:" + base64.b32encode(digest.digest()).decode("ascii")


def index_warc(path: Path, counts: WarcCounts | None = None) -> tuple[WarcIndex, list[Task]]:
    """One pass over a WARC: the URL index of its response records and a task per record of interest (every
    response and revisit record; :data:`INTEREST`), the ones needing no extraction already given their status."""
    try:
        from fastwarc.warc import ArchiveIterator
    except ImportError:
        raise InputError(f"{path}: reading WARC files needs fastwarc: pip install 'centrum[batch]'") from None

    index: WarcIndex = {}
    tasks: list[Task] = []
    offsets: list[int] = []  # every record's start: a record's length is the distance to the next one
    records = 0
    try:
        for record in ArchiveIterator(str(path), parse_http=True):
            records += 1
            pos = int(record.stream_pos)
            offsets.append(pos)
            kind = (record.headers.get("WARC-Type") or "unknown").strip().lower()
            if counts is not None:
                counts.add(kind)
            if kind not in INTEREST:
                continue
            url = (record.headers.get("WARC-Target-URI") or "").strip("<> ")
            rid = record.record_id or position_id(str(path), pos)
            date = record.headers.get("WARC-Date") or ""
            if kind == "revisit":
                refers = (record.headers.get("WARC-Refers-To") or "").strip()
                tasks.append(Task(rid, url, "warc", str(path), pos, warc_type=kind, warc_date=date,
                                  duplicate_of=refers, status=SKIPPED_REVISIT))
                continue
            http = record.http_headers
            ctype = (record.http_content_type or http.get("Content-Type") or "") if http is not None else ""
            status = int(http.status_code or 0) if http is not None else 0
            if url and http is not None:
                index.setdefault(url.split("#", 1)[0], IndexEntry(pos, status, ctype))
            decided = ""
            if not _is_html(ctype):
                decided = SKIPPED_NOT_HTML
            elif status and not 200 <= status < 300:
                decided = HTTP_ERROR
            tasks.append(Task(rid, url, "warc", str(path), pos, warc_type=kind, warc_date=date,
                              content_hash=_payload_hash(record), content_type=ctype,
                              http_status=status or None, status=decided))
    except OSError as e:
        raise InputError(f"{path}: not a readable WARC file: {e}") from None
    if records == 0 and path.stat().st_size > 0:
        # fastwarc stops quietly at bytes it cannot parse: a truncated or foreign file must not pass as empty.
        raise InputError(f"{path}: not a readable WARC file: no WARC record found")
    ends = {start: end for start, end in zip(offsets, [*offsets[1:], path.stat().st_size], strict=True)}
    return index, [replace(t, length=ends[t.offset] - t.offset) for t in tasks]


class Repeats:
    """Which earlier input record a record repeats (see :attr:`Task.duplicate_of`), over all inputs of a run in
    input order, so the answer is the same whatever order workers finish in, and again on --resume."""

    def __init__(self) -> None:
        self.by_hash: dict[str, str] = {}
        self.by_url: dict[str, str] = {}

    def mark(self, task: Task) -> Task:
        if task.kind == "file":
            return self._mark_file(task)
        if task.kind != "warc":
            return task
        if task.warc_type == "revisit":  # the record it refers to, else the URL's first response
            return task if task.duplicate_of else replace(task, duplicate_of=self.by_url.get(task.url, ""))
        first = self.by_hash.get(task.content_hash) if task.content_hash else None
        first = first or self.by_url.get(task.url)
        if task.content_hash:
            self.by_hash.setdefault(task.content_hash, task.record_id)
        if task.url:
            self.by_url.setdefault(task.url, task.record_id)
        return replace(task, duplicate_of=first) if first and first != task.record_id else task

    def _mark_file(self, task: Task) -> Task:
        """A saved page whose bytes an earlier file of the run has (a folder's copies of one page): hashed here, in
        input order, so every run marks the same file; an unreadable file is left to the worker to report."""
        try:
            digest = Page(None, read_page_file(task.path)).content_hash()
        except (OSError, ValueError):
            return task
        first = self.by_hash.setdefault(digest, task.record_id)
        return replace(task, content_hash=digest, duplicate_of=first if first != task.record_id else "")


def position_id(path: str, offset: int) -> str:
    """The row key of a WARC record that has no id of its own to use (none, or an earlier record's)."""
    return f"{Path(path).name}@{offset}"


def as_duplicate(task: Task) -> Task:
    """``task``, a WARC record repeating an id already given to another record, as the row that accounts for it."""
    return replace(task, record_id=position_id(task.path, task.offset), repeats_id=task.record_id,
                   status=SKIPPED_DUPLICATE)


def read_response(path: str, offset: int, body: bool = True) -> tuple[int, dict[str, str], bytes, str | None]:
    """(HTTP status, headers (lower-case names), decoded body, HTTP charset) of the response record at ``offset``;
    ``body=False`` reads the headers only (the body comes back empty). Raises :class:`TooLarge` for a record over
    ``warc_record_bytes`` (before its body is read) or a body over ``body_bytes`` (while it is decoded)."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    with open(path, "rb") as f:
        f.seek(offset)
        for record in ArchiveIterator(f, record_types=WarcRecordType.response, parse_http=True,
                                      auto_decode="all"):
            subject = f"record {record.record_id or position_id(path, offset)}"
            if int(record.content_length) > WARC_RECORD_BYTES:
                raise TooLarge(subject, "warc_record_bytes", f"its stored length of {record.content_length} bytes")
            http = record.http_headers
            headers = {k.lower(): v for k, v in (http.items() if http is not None else [])}
            data = read_capped(record.reader, "body_bytes", subject, "its decoded body") if body else b""
            return int(http.status_code or 0) if http is not None else 0, headers, data, record.http_charset
    raise InputError(f"{path}: no response record at offset {offset}")


def html_charset(body: bytes, http_charset: str | None) -> str:
    """The charset of an archived HTML page (:func:`centrum.core.charset.sniff`, the HTTP header as the transport's)."""
    return charset.sniff(body, http_charset)


@dataclass(frozen=True)
class Page:
    """A record's page as read: its bytes and the transport's charset. :meth:`html` is the one decoding from bytes
    to text (``centrum.core.charset``, as ``centrum extract`` and ``eval`` read a page), never a bare
    ``bytes.decode``."""

    http_status: int | None
    body: bytes
    http_charset: str | None = None

    @property
    def charset(self) -> str:
        return html_charset(self.body, self.http_charset)

    def html(self) -> str:
        return charset.decode(self.body, self.http_charset)

    def content_hash(self) -> str:
        """sha1 of the bytes in WARC's spelling (the same as :func:`index_warc`'s for an archived payload)."""
        return "sha1:" + base64.b32encode(hashlib.sha1(self.body, usedforsecurity=False).digest()).decode("ascii")


def read_page(task: Task) -> Page:
    """The one reader from a task's record to its page: an archived response (body decoded of its
    Content-Encoding), or a saved file (``centrum.core.limits.read_page_file``, as ``centrum extract`` reads it); a URL
    has no bytes before it is rendered. Raises :class:`TooLarge` past a limit, OSError / ValueError if unreadable."""
    if task.kind == "warc":
        status, _headers, body, http_charset = read_response(task.path, task.offset)
        return Page(status, body, http_charset)
    if task.kind == "file":
        return Page(None, read_page_file(task.path))
    return Page(None, b"")


def follow(path: str, index: WarcIndex, url: str, hops: int = 5) -> IndexEntry | None:
    """The archived response for ``url``, redirects followed inside the archive (Chromium's request to a redirect
    target is not intercepted, so an archived 3xx is resolved here and its target served under the first URL);
    None when the archive lacks the URL or a redirect's target."""
    from urllib.parse import urljoin

    entry = index.get(url)
    for _ in range(hops):
        if entry is None or entry.status not in (301, 302, 303, 307, 308):
            return entry
        _status, headers, _body, _charset = read_response(path, entry.offset, body=False)
        location = headers.get("location")
        if not location:
            return None
        entry = index.get(urljoin(url, location).split("#", 1)[0])
    return None if entry is None or entry.status in (301, 302, 303, 307, 308) else entry


def archived(path: str, entry: IndexEntry, page: bool = False) -> Archived:
    """The archived response to serve for ``entry``; an HTML page gets its charset spelled out in Content-Type."""
    status, headers, body, http_charset = read_response(path, entry.offset)
    served = {k: v for k, v in headers.items() if k in SERVED_HEADERS}
    if page or _is_html(headers.get("content-type")):
        served["content-type"] = f"text/html; charset={html_charset(body, http_charset)}"
    return Archived(status or 200, served, body)


def iter_inputs(inputs: list[Path], counts: WarcCounts | None = None
                ) -> Iterator[tuple[Path, WarcIndex | None, list[Task]]]:
    """Per input: (path, its WARC index or None, its tasks), one input at a time."""
    for path in inputs:
        if is_warc(path) and path.is_file():
            index, tasks = index_warc(path, counts)
            yield path, index, tasks
        elif path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix.lower() in (".html", ".htm") and p.is_file())
            yield path, None, [Task(str(p.resolve()), p.resolve().as_uri(), "file", str(p.resolve())) for p in files]
        elif path.is_file():
            yield path, None, _url_tasks(path)
        else:
            raise InputError(f"no such input: {path}")


def _url_tasks(path: Path) -> list[Task]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: expected a WARC file, a folder of .html files or a UTF-8 file of URLs: "
                         f"{e}") from None
    tasks, seen = [], set()
    for n, line in enumerate(lines, 1):
        url = line.strip()
        if not url or url.startswith("#"):
            continue
        if not url.lower().startswith(("http://", "https://")):
            raise InputError(f"{path}:{n}: not an http(s) URL: {url[:100]!r}")
        if url not in seen:
            seen.add(url)
            tasks.append(Task(url, url, "url"))
    return tasks


def check_inputs(inputs: list[Path]) -> None:
    for path in inputs:
        if not os.path.exists(path):
            raise InputError(f"no such input: {path}")
