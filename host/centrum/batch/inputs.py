"""What ``centrum batch`` reads: WARC / WARC.gz files, folders of ``.html`` files and text files of URLs, as a stream
of small :class:`Task` descriptors (never the page bytes: a worker reads its own record from the WARC at the
record's offset, so the driver's memory stays bounded however large the crawl).

A WARC is indexed once by the driver (one pass over its headers): the HTML response records become tasks, and every
response record's URL -> offset goes into the :class:`WarcIndex` the renderer serves subresources from.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .. import charset
from ..limits import WARC_RECORD_BYTES, TooLarge, read_capped
from ..render import Archived

HTML_TYPES = ("text/html", "application/xhtml+xml")
WARC_SUFFIXES = (".warc", ".warc.gz")
# The headers an archived response is served with: what the page needs to be understood (type, redirect target);
# never the archived Content-Encoding / Transfer-Encoding, since the body is served decoded.
SERVED_HEADERS = ("content-type", "location")


class InputError(ValueError):
    """An input path that cannot be read as a WARC, a folder of pages or a URL list."""


@dataclass(frozen=True)
class Task:
    """One input record. ``record_id`` is the row key of the output (WARC-Record-ID, file path or URL)."""

    record_id: str
    url: str
    kind: str  # "warc" | "file" | "url"
    path: str = ""  # the WARC or the HTML file
    offset: int = -1  # the record's start in the WARC
    # A record repeating an earlier record's id: its row (keyed by :func:`position_id`) says so, it is not processed.
    duplicate_of: str = ""


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


def index_warc(path: Path) -> tuple[WarcIndex, list[Task]]:
    """One pass over a WARC: the URL index of its response records and the tasks of its HTML responses."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    index: WarcIndex = {}
    tasks: list[Task] = []
    records = 0
    try:
        for record in ArchiveIterator(str(path), parse_http=True):
            records += 1
            if record.record_type != WarcRecordType.response:
                continue
            url = (record.headers.get("WARC-Target-URI") or "").strip("<> ")
            if not url or record.http_headers is None:
                continue
            ctype = record.http_content_type or record.http_headers.get("Content-Type") or ""
            status = int(record.http_headers.status_code or 0)
            key = url.split("#", 1)[0]
            index.setdefault(key, IndexEntry(int(record.stream_pos), status, ctype))
            if _is_html(ctype):  # every one, repeated ids too: the engine gives each record its row
                rid = record.record_id or position_id(str(path), int(record.stream_pos))
                tasks.append(Task(rid, url, "warc", str(path), int(record.stream_pos)))
    except OSError as e:
        raise InputError(f"{path}: not a readable WARC file: {e}") from None
    if records == 0 and path.stat().st_size > 0:
        # fastwarc stops quietly at bytes it cannot parse: a truncated or foreign file must not pass as empty.
        raise InputError(f"{path}: not a readable WARC file: no WARC record found")
    return index, tasks


def position_id(path: str, offset: int) -> str:
    """The row key of a WARC record that has no id of its own to use (none, or an earlier record's)."""
    return f"{Path(path).name}@{offset}"


def as_duplicate(task: Task) -> Task:
    """``task``, a WARC record repeating an id already given to another record, as the row that accounts for it."""
    return Task(position_id(task.path, task.offset), task.url, task.kind, task.path, task.offset,
                duplicate_of=task.record_id)


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
    """The charset of an archived HTML page (:func:`centrum.charset.sniff`, the HTTP header as the transport's)."""
    return charset.sniff(body, http_charset)


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


def iter_inputs(inputs: list[Path]) -> Iterator[tuple[Path, WarcIndex | None, list[Task]]]:
    """Per input: (path, its WARC index or None, its tasks), one input at a time."""
    for path in inputs:
        if is_warc(path) and path.is_file():
            index, tasks = index_warc(path)
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
