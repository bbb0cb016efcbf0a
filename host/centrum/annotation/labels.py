"""Annotator labels: a local SQLite store in the host's data directory, export to a data set, agreement.

A label is what an annotator selected as the main content of one page (issue #9, "Annotator mode"): the page URL,
the UTC time, the annotator's name, the protocol-v1 snapshot (zlib-compressed JSON), the selected node ids, a stable
path of each selected node, their text (computed by the host with :meth:`Snapshot.text_of` unless given), the
serialized page (the snapshot's ``source`` or ``label.source``) and, optionally, the data set / page id it belongs to.

Privacy (issue #20): the stored page keeps no script contents and no form values (:func:`scrub_source`; a
textarea's text is blanked in the stored snapshot too), URLs are stored without query and fragment unless the label
says ``keep_query``, the database and its folder are private (:mod:`centrum.core.paths`), and :func:`delete_labels`
removes labels for good. A label may carry ``save_id``, a client-made random key: a retried save with the same key
stores nothing and answers the first label's id.

Safety (issue #10): every statement is parameterized; nothing in a label is ever used as a file path (exported file
names are derived from the label's integer id plus a ``[A-Za-z0-9._-]`` slug); a write is one ``BEGIN IMMEDIATE``
transaction in WAL mode with ``synchronous=FULL``, so a writer killed mid-write loses only its own uncommitted label.

Node paths (:func:`node_paths`) are ``tag:k`` steps from the root joined by ``>``, ``k`` being the 1-based position
among the element children in the collector's tree (``html:1>body:2>div:3``); they survive a re-render of the same
page, where node ids may shift, so node-level scores can be computed against a new snapshot (:func:`resolve_path`).
"""

from __future__ import annotations

import errno
import hashlib
import html
import json
import os
import re
import sqlite3
import stat
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..core import charset
from ..core.paths import (
    PRIVATE_DIR_MODE,
    PRIVATE_FILE_MODE,
    centrum_home,
    data_dir,
    make_private,
    private_dir,
    private_file,
)
from ..core.snapshot import Snapshot, SnapshotError, parse_snapshot
from ..core.tree import covered

DB_NAME = "labels.sqlite3"

# Size limits of one label (a snapshot itself is bounded by the 64 MiB native-messaging request limit).
MAX_URL_CHARS = 8192
MAX_NAME_CHARS = 256  # annotator, dataset, page_id
MAX_NODES = 10_000
MAX_TEXT_CHARS = 32 * 1024 * 1024
MAX_SOURCE_CHARS = 64 * 1024 * 1024
MAX_SNAPSHOT_JSON_BYTES = 64 * 1024 * 1024
# Node paths are as long as the selected nodes are deep: 1,000 nodes under a 4,000-deep chain would be 24 M
# characters. Real selections need far less (10,000 nodes at depth 50 are ~4 M); the sum is checked before a path is
# built, so a hostile page cannot make the host build (and store) an output of depth x nodes.
MAX_NODE_PATH_CHARS = 8 * 1024 * 1024
# save_id: a client-generated random key (e.g. crypto.randomUUID()) that makes a retried save store nothing twice.
SAVE_ID_RE = re.compile(r"[A-Za-z0-9._:-]{8,128}")

LABEL_FIELDS = ("url", "annotator", "nodes", "snapshot", "text", "source", "dataset", "page_id", "keep_query",
                "save_id")

# Migration k brings a database from version k to k + 1; a database newer than the last one is refused.
MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: the labels table.
    """
    CREATE TABLE labels (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created TEXT NOT NULL,
        url TEXT NOT NULL,
        annotator TEXT NOT NULL,
        dataset TEXT,
        page_id TEXT,
        title TEXT NOT NULL,
        lang TEXT NOT NULL,
        nodes TEXT NOT NULL,
        node_paths TEXT NOT NULL,
        text TEXT NOT NULL,
        n_elements INTEGER NOT NULL,
        snapshot BLOB NOT NULL,
        snapshot_sha256 TEXT NOT NULL,
        source BLOB NOT NULL
    );
    """,
    # 1 -> 2: agreement and export group labels by page.
    """
    CREATE INDEX labels_by_url ON labels(url, annotator);
    CREATE INDEX labels_by_page ON labels(dataset, page_id);
    """,
    # 2 -> 3: idempotent saves. NULL (a client that sends no key) is allowed any number of times.
    """
    ALTER TABLE labels ADD COLUMN save_id TEXT;
    CREATE UNIQUE INDEX labels_by_save_id ON labels(save_id);
    """,
    # 3 -> 4: annotation campaigns (centrum.annotation.campaigns): a queue of pages, each given to `overlap` annotators.
    # An assignment is one (page, annotator) pair, at most once; its label, the suggestion it started from.
    """
    CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        created TEXT NOT NULL,
        overlap INTEGER NOT NULL,
        dataset TEXT,
        annotators TEXT
    );
    CREATE TABLE campaign_pages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        campaign INTEGER NOT NULL REFERENCES campaigns(id),
        position INTEGER NOT NULL,
        page_id TEXT NOT NULL,
        url TEXT,
        UNIQUE (campaign, page_id)
    );
    CREATE TABLE assignments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        campaign INTEGER NOT NULL REFERENCES campaigns(id),
        page INTEGER NOT NULL REFERENCES campaign_pages(id),
        annotator TEXT NOT NULL,
        state TEXT NOT NULL,
        reason TEXT,
        label INTEGER REFERENCES labels(id),
        suggestion_paths TEXT,
        changed INTEGER,
        created TEXT NOT NULL,
        updated TEXT NOT NULL,
        UNIQUE (page, annotator)
    );
    CREATE INDEX assignments_by_annotator ON assignments(campaign, annotator, state);
    CREATE TABLE adjudications (
        page INTEGER PRIMARY KEY REFERENCES campaign_pages(id),
        reviewer TEXT NOT NULL,
        label INTEGER NOT NULL REFERENCES labels(id),
        how TEXT NOT NULL,
        created TEXT NOT NULL
    );
    """,
    # 4 -> 5: a page's holders (assignments not skipped) kept on the page with an index, so that the next free page
    # of a campaign is found without counting every page's assignments (a claim stays O(log n), not O(n)).
    """
    ALTER TABLE campaign_pages ADD COLUMN holders INTEGER NOT NULL DEFAULT 0;
    UPDATE campaign_pages SET holders = (SELECT COUNT(*) FROM assignments a WHERE a.page = campaign_pages.id
                                         AND a.state != 'skipped');
    CREATE INDEX campaign_pages_free ON campaign_pages(campaign, holders, position);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


class LabelError(Exception):
    """A label that cannot be stored. ``code`` is ``E_REQUEST`` (bad label; ``field`` names it) or ``E_STORAGE``."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


def _request_error(field: str, message: str) -> LabelError:
    return LabelError("E_REQUEST", f"{field}: {message}", field)


# ---------------------------------------------------------------------------------------------- database


def default_db_path() -> Path:
    return centrum_home() / DB_NAME


def _migrate(conn: sqlite3.Connection, upto: int = SCHEMA_VERSION) -> int:
    """Apply missing migrations in one write transaction (two processes opening a new db race safely)."""
    with write_transaction(conn):
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        version = int(row[0]) if row else 0
        if row is None:
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
        if version > SCHEMA_VERSION:
            raise LabelError("E_STORAGE", f"label database is version {version}, newer than this host "
                                          f"(knows up to {SCHEMA_VERSION}): update centrum")
        for k in range(version, upto):
            # executescript would COMMIT the open transaction: run the statements one by one instead.
            for stmt in MIGRATIONS[k].split(";"):
                if stmt.strip():
                    conn.execute(stmt)
        if upto > version:
            conn.execute("UPDATE schema_version SET version = ?", (upto,))
    return max(version, upto)


def connect(path: str | Path | None = None, *, upto: int = SCHEMA_VERSION) -> sqlite3.Connection:
    """Open (creating when needed) the label database; the schema is migrated to the current version."""
    path = Path(path) if path is not None else default_db_path()
    try:
        # The data folder is closed to other users even when it exists from an older install; a folder given
        # with --db is made private only when this creates it.
        if path.parent == centrum_home():
            data_dir()
        else:
            private_dir(path.parent)
    except OSError as e:
        raise LabelError("E_STORAGE", f"cannot create the label database folder {path.parent}: {e}") from e
    try:
        # 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database file's mode.
        private_file(path)
    except OSError as e:
        raise LabelError("E_STORAGE", f"cannot create the label database {path}: {e}") from e
    try:
        # Autocommit mode: transactions are explicit (BEGIN IMMEDIATE) so a write is exactly one transaction.
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    except sqlite3.Error as e:
        raise LabelError("E_STORAGE", f"cannot open label database {path}: {e}") from e
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        _wal(conn)
        for suffix in ("-wal", "-shm"):  # an older install's, created before the database was 0600
            make_private(path.with_name(path.name + suffix))
        conn.execute("PRAGMA synchronous = FULL")  # a committed label survives a crash of the machine too
        _migrate(conn, upto)
        return conn
    except BaseException as e:
        conn.close()
        if isinstance(e, sqlite3.Error):
            raise LabelError("E_STORAGE", f"cannot open label database {path}: {e}") from e
        raise


def _wal(conn: sqlite3.Connection) -> None:
    # Switching a new file to WAL needs an exclusive lock that the busy handler does not wait for: retry briefly.
    for attempt in range(50):
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or attempt == 49:
                raise
            time.sleep(0.05)


@contextmanager
def _open(db: str | Path | sqlite3.Connection | None) -> Iterator[sqlite3.Connection]:
    if isinstance(db, sqlite3.Connection):
        yield db
        return
    conn = connect(db)
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One ``BEGIN IMMEDIATE`` write transaction (the connection is in autocommit mode, see :func:`connect`):
    committed when the block ends, rolled back when it raises. A block may end it early itself (``ROLLBACK`` of a
    dry run or of a retried save): then nothing is left to commit."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        if conn.in_transaction:
            conn.execute("COMMIT")  # inside the try: a COMMIT that fails (busy, disk full) is rolled back too
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


# ---------------------------------------------------------------------------------------------- validation


def _check_str(label: dict[str, Any], key: str, limit: int, required: bool = True) -> str | None:
    value = label.get(key)
    if value is None and not required:
        return None
    field = f"label.{key}"
    if not isinstance(value, str):
        raise _request_error(field, f"expected a string, got {type(value).__name__}" if value is not None
                             else "missing")
    if required and not value.strip():
        raise _request_error(field, "must not be empty")
    if len(value) > limit:
        raise _request_error(field, f"{len(value)} characters exceed the limit of {limit}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _request_error(field, f"not valid Unicode (lone surrogate at {e.start})") from None
    return value


def _scrub(text: str) -> str:
    """Page text can hold lone surrogates (JSON allows them, UTF-8 does not): they become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def child_index(snapshot: Snapshot) -> np.ndarray:
    """1-based position of every element among its parent's element children (0 for the root)."""
    off, kids = snapshot.children_offsets
    idx = np.zeros(snapshot.n, dtype=np.int64)
    idx[kids] = np.arange(kids.size, dtype=np.int64) - off[snapshot.parent[kids]] + 1
    return idx


_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)


def _path_sums(parent: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Sum of ``weight`` over each element and its ancestors, by pointer doubling: O(n log depth) vectorized."""
    total = weight.astype(np.int64)
    jump = parent.astype(np.int64)
    while True:
        has = jump >= 0
        if not has.any():
            return total
        up = np.where(has, jump, 0)
        total = np.where(has, total + total[up], total)
        jump = np.where(has, jump[up], jump)


def node_paths(snapshot: Snapshot, nodes: Sequence[int], limit: int = MAX_NODE_PATH_CHARS) -> list[str]:
    """``tag:k>tag:k>...`` from the root to each of ``nodes`` (disjoint; see the module docstring), in their order.

    One pass over the nodes in document order keeps the current root path on a stack: an ancestor's step is made
    once however many selected nodes lie under it, so the Python work is linear in the elements and only the
    C-level joins grow with the output. The output itself is the sum of the nodes' depths; its length is computed
    vectorized first and a selection whose paths would exceed ``limit`` characters is refused before any is built.
    """
    if not len(nodes):
        return []
    index = np.maximum(child_index(snapshot), 1)  # the root is step 1 of a one-element "document children" list
    tag_len = np.fromiter((len(t) for t in snapshot.tag_names), dtype=np.int64, count=len(snapshot.tag_names))
    digits = 1 + np.searchsorted(_POW10, index, side="right")
    chars = _path_sums(snapshot.parent, tag_len[snapshot.tag_code] + digits + 2) - 1  # ":" and ">" per step
    total = int(chars[np.asarray(nodes, dtype=np.int64)].sum())
    if total > limit:
        raise _request_error("label.nodes", f"the paths of the selected nodes would take {total} characters, over "
                                            f"the limit of {limit} (the nodes are nested too deep)")
    tags, parent, end = snapshot.tags, snapshot.parent, snapshot.subtree_end
    out: dict[int, str] = {}
    stack: list[int] = []  # the root path of the last node, ancestors first
    steps: list[str] = []
    for v in sorted(int(x) for x in nodes):  # pre-order: a node's ancestors come before it
        while stack and not stack[-1] <= v < int(end[stack[-1]]):
            stack.pop()
            steps.pop()
        top = stack[-1] if stack else -1
        chain = []
        u = v
        while u != top:  # each element is walked at most once over the whole loop
            chain.append(u)
            u = int(parent[u])
        for u in reversed(chain):
            stack.append(u)
            steps.append(f"{tags[u]}:{int(index[u])}")
        out[v] = ">".join(steps)
    return [out[int(v)] for v in nodes]


def resolve_path(snapshot: Snapshot, path: str) -> int | None:
    """The element at ``path`` in ``snapshot`` (a re-render of the labelled page), None when the tree differs."""
    node = -1
    for step in path.split(">"):
        tag, _, k = step.rpartition(":")
        if not k.isdigit():
            return None
        if node < 0:
            cand = 0 if snapshot.n else -1
        else:
            kids = snapshot.children(node)
            cand = int(kids[int(k) - 1]) if 0 < int(k) <= kids.size else -1
        if cand < 0 or snapshot.tags[cand] != tag:
            return None
        node = cand
    return node if node >= 0 else None


# ---- what a label keeps of the page (issue #20): no script contents, no form values, no query string

# One token at a "<", read as the HTML tokenizer reads it: a comment, a start tag's name, or an end tag / other
# markup declaration. A start tag's attributes are then matched whole by _TAG_REST (quoted values may hold ">").
# Possessive quantifiers everywhere: a match never backtracks, so the scan is linear in the source.
_MARKUP = re.compile(r"<(?:(!--)|([A-Za-z][^\t\n\f\r />]*+)|(/[A-Za-z][^\t\n\f\r />]*+)|[/!?])")
_VALUE = r"""(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"[^"]*+"?+|'[^']*+'?+|[^\t\n\f\r >]*+))?+"""
_TAG_REST = re.compile(r"(?:[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r />=]*+" + _VALUE + r")*+>")
_ATTR = re.compile(r"[\t\n\f\r /]*+([^\t\n\f\r />][^\t\n\f\r />=]*+)" + _VALUE)
_COMMENT_END = re.compile(r"--!?>")
# Elements whose content is text up to their end tag (script data, RAWTEXT, RCDATA): markup-looking text inside
# them is not markup. Of these, script and textarea lose their content.
_RAW_TEXT = ("script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "textarea", "title")
_RAW_END = {name: re.compile(f"</{name}(?=[\t\n\f\r />])", re.IGNORECASE) for name in _RAW_TEXT}
_DROP_CONTENT = {"script", "textarea"}
# Form values as the page serialized them: hidden inputs (CSRF tokens, session ids), pre-filled fields, choices.
_DROP_ATTRS = {"input": {"value", "checked"}, "option": {"selected"}}
_SPECIAL = "|".join((*_RAW_TEXT, "plaintext", *_DROP_ATTRS))  # the start tags the loop below looks at
# Everything up to the next token that needs a look (one of the _SPECIAL start tags, or a tag that never ends),
# matched in one regex call: text, comments, other start and end tags, doctype and bogus comments. Most of a page is
# this, so the Python loop below runs once per special tag instead of once per tag.
_PLAIN = re.compile(
    r"(?:[^<]++"
    r"|<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?+)"
    r"|<(?!(?i:" + _SPECIAL + r")(?:[\t\n\f\r />]|\Z))[A-Za-z][^\t\n\f\r />]*+" + _TAG_REST.pattern
    + r"|</[A-Za-z][^\t\n\f\r />]*+" + _TAG_REST.pattern
    + r"|<(?![A-Za-z]|!--|/[A-Za-z])(?:[/!?][^>]*+>?+)?+"
    r")*+")


def _plain_is_sound() -> bool:
    """CPython 3.11 before 3.11.5 (Debian 12 ships 3.11.2) mis-matches possessive repeats of groups: there _PLAIN
    runs into the special tags it must stop at, and form values would be stored. Checked on inputs whose answer is
    known; where it fails, :data:`_PLAIN` falls back to plain text and lone ``<`` only (the loop then reads every
    tag itself: slower, same output)."""
    probes = {'<p data-cx="1"><input value="x">': 15, "a < b <!-- c --><textarea>": 16, "<b>x</b><option selected>": 8}
    for text, end in probes.items():
        m = _PLAIN.match(text, 0)
        if m is None or m.end() != end:
            return False
    return True


# Both alternatives start with different characters and nothing follows the repeat, so a plain greedy repeat never
# backtracks: still linear.
_PLAIN_FALLBACK = re.compile(r"(?:[^<]+|<(?![A-Za-z!/?]))*")
if not _plain_is_sound():
    _PLAIN = _PLAIN_FALLBACK


def _comment_end(source: str, start: int) -> int:
    """Where a comment whose "<!--" ends at ``start`` ends, as the HTML tokenizer has it: "<!-->" and "<!--->" at
    once, else after the next "-->" (or "--!>"), else at the end of the source."""
    if source.startswith(">", start) or source.startswith("->", start):
        return source.index(">", start) + 1
    e = _COMMENT_END.search(source, start)
    return e.end() if e else len(source)


def scrub_source(source: str) -> str:
    """The serialized page without script contents and form values, everything else byte for byte.

    Dropped: the text inside ``<script>`` and ``<textarea>``, and ``value``/``checked`` of ``<input>`` and
    ``selected`` of ``<option>``. A linear scan that tokenizes like a browser (comments, quoted attribute values
    and raw-text elements are skipped as units), so markup-looking text in a comment or a style sheet is left alone
    and a tag's ``data-cx`` id stays its last attribute. An unterminated tag at the end is cut, as a parser drops it.
    """
    keep: list[str] = []
    last = 0  # source[last:pos] is kept when the next cut is made
    pos = 0
    n = len(source)
    while pos < n:
        pos = _PLAIN.match(source, pos).end()  # type: ignore[union-attr]  # (...)*+ always matches
        m = _MARKUP.match(source, pos)
        if m is None:
            break
        if m.group(1):
            pos = _comment_end(source, m.end())
            continue
        name = m.group(2)
        if m.group(3):  # end tag: attributes (and their quoted ">") as in a start tag
            t = _TAG_REST.match(source, m.end())
            pos = t.end() if t else n
            continue
        if name is None:  # bogus comment ("</ x", "<!DOCTYPE", "<?xml"): up to the first ">"
            gt = source.find(">", m.end())
            pos = gt + 1 if gt >= 0 else n
            continue
        t = _TAG_REST.match(source, m.end())
        if t is None:  # the tag never ends: the parser drops it and everything after it
            keep.append(source[last:m.start()])
            last = pos = n
            break
        lname = name.lower()
        drop = _DROP_ATTRS.get(lname)
        if drop:
            for a in _ATTR.finditer(source, m.end(), t.end() - 1):
                if a.group(1).lower() in drop:
                    keep.append(source[last:a.start()])
                    last = a.end()
        pos = t.end()
        if lname == "plaintext":  # everything after it is text
            break
        end_re = _RAW_END.get(lname)
        if end_re is not None:
            e = end_re.search(source, pos)
            close = e.start() if e else n
            if lname in _DROP_CONTENT and close > pos:
                keep.append(source[last:pos])
                last = close
            pos = close
    keep.append(source[last:])
    return "".join(keep)


# ---- what an exported page may still do (issue #40): nothing. The attributes that run script or navigate to script
# are cut in place; every element stays where it was, so node paths (which count element children) and the text the
# labels refer to are unchanged.
_TEXT_RUN = _PLAIN_FALLBACK  # text and lone "<": every tag is looked at here, not only the _SPECIAL ones
_ATTR_VALUE = re.compile(r"""[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"([^"]*+)"?+|'([^']*+)'?+|([^\t\n\f\r >]*+))""")
_URL_SPACE = re.compile(r"[\x00-\x20\x7f]+")  # what a browser drops from a URL before reading its scheme
# Attributes that hold a URL a document may load or navigate to (HTML, SVG, MathML); a data: URL is kept only as an
# image outside a frame (a data: document in a frame runs its scripts).
_URL_ATTRS = frozenset(("href", "src", "srcset", "action", "formaction", "data", "poster", "background", "cite",
                        "codebase", "longdesc", "usemap", "dynsrc", "lowsrc", "ping", "manifest", "icon", "archive",
                        "classid", "xlink:href", "imagesrcset"))
_FRAMES = frozenset(("iframe", "frame", "object", "embed", "portal", "fencedframe"))
_TAG_LIKE = re.compile(r"<[A-Za-z/]")


def _runs_script(tag: str, name: str, raw: str) -> bool:
    """Whether attribute ``name="raw"`` of a ``<tag>`` runs or loads script: event handlers (``on*``), ``srcdoc``,
    anything of ``<script>``, a ``<meta http-equiv=refresh>``, an SVG animation of a handler or link, a
    ``javascript:``/``vbscript:`` URL anywhere in the value (also in ``style``, ``srcset`` or SVG ``values``), and a
    non-image ``data:`` URL."""
    if name.startswith("on") or name == "srcdoc" or tag == "script":
        return True
    value = html.unescape(raw)
    if tag == "meta" and name == "http-equiv" and value.strip().lower() == "refresh":
        return True
    if name == "attributename" and value.strip().lower().startswith(("on", "href", "xlink:href")):
        return True  # SVG <set>/<animate> writing an event handler or a link
    compact = _URL_SPACE.sub("", value).lower()
    if "javascript:" in compact or "vbscript:" in compact:
        return True
    return (name in _URL_ATTRS or name.endswith(":href")) and compact.startswith("data:") and (
        tag in _FRAMES or not compact.startswith("data:image/"))


def inert_html(source: str) -> str:
    """``source`` with nothing left that runs: no script contents (``<script>`` elements stay, empty and without
    attributes), no event-handler attributes, no ``javascript:``/``vbscript:`` URLs (see :func:`_runs_script`).

    The same linear, browser-like scan as :func:`scrub_source`, looking at every start tag's attributes; only
    attributes and script text are cut, so the elements, their order and their text stay byte for byte.
    """
    keep: list[str] = []
    last = pos = 0
    n = len(source)
    while pos < n:
        pos = _TEXT_RUN.match(source, pos).end()  # type: ignore[union-attr]  # (...)* always matches
        m = _MARKUP.match(source, pos)
        if m is None:
            break
        if m.group(1):
            pos = _comment_end(source, m.end())
            continue
        name = m.group(2)
        if m.group(3) or name is None:  # end tag (attributes skipped as a unit) or bogus comment
            t = _TAG_REST.match(source, m.end()) if m.group(3) else None
            gt = source.find(">", m.end())
            pos = (t.end() if t else n) if m.group(3) else (gt + 1 if gt >= 0 else n)
            continue
        t = _TAG_REST.match(source, m.end())
        if t is None:  # the tag never ends: the parser drops it and everything after it
            keep.append(source[last:m.start()])
            last = pos = n
            break
        lname = name.lower()
        for a in _ATTR.finditer(source, m.end(), t.end() - 1):
            v = _ATTR_VALUE.match(source, a.end(1), a.end())
            raw = next((g for g in v.groups() if g is not None), "") if v else ""
            if _runs_script(lname, a.group(1).lower(), raw):
                keep.append(source[last:a.start()])
                last = a.end()
        pos = t.end()
        end_re = _RAW_END.get(lname)
        if end_re is not None or lname == "plaintext":  # plaintext: text to the end
            e = end_re.search(source, pos) if end_re is not None else None
            close = e.start() if e else n
            # Inside <svg> or <math> these names are foreign elements whose content is markup (an <img onerror>
            # there breaks out into HTML), which this scan, reading it as text, would not look at: such content
            # is cut whole. Text without tags is the same in both readings and stays (a style sheet, a title).
            if close > pos and (lname in _DROP_CONTENT or _TAG_LIKE.search(source, pos, close)):
                keep.append(source[last:pos])
                last = close
            pos = close
    keep.append(source[last:])
    return "".join(keep)


def strip_query(url: str) -> str:
    """``url`` without its query and fragment (they can carry session tokens, search terms, e-mail addresses)."""
    cut = len(url)
    for mark in ("?", "#"):
        k = url.find(mark)
        if 0 <= k < cut:
            cut = k
    return url[:cut]


@dataclass(frozen=True)
class LabelRecord:
    """A validated label, ready to be stored."""

    url: str
    annotator: str
    dataset: str | None
    page_id: str | None
    nodes: list[int]
    node_paths: list[str]
    text: str
    title: str
    lang: str
    n_elements: int
    snapshot_json: bytes
    source: str
    save_id: str | None = None
    # The parsed snapshot, for callers that compute more from it (a campaign's suggestion paths); not stored.
    snapshot: Snapshot | None = dataclass_field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class _Header:
    """A label's plain fields, checked: who labelled which address, and the client's save key."""

    url: str
    annotator: str
    dataset: str | None
    page_id: str | None
    keep_query: bool
    save_id: str | None


def _check_header(label: Any) -> _Header:
    """The label is an object of known fields whose strings fit; its address loses its query unless asked to keep
    it (a query often carries session ids and tokens)."""
    if not isinstance(label, dict):
        raise _request_error("label", f"expected an object, got {type(label).__name__}")
    unknown = sorted(str(k) for k in label if k not in LABEL_FIELDS)
    if unknown:
        raise _request_error(f"label.{unknown[0]}", f"unknown field (known: {', '.join(LABEL_FIELDS)})")
    url = _check_str(label, "url", MAX_URL_CHARS)
    annotator = _check_str(label, "annotator", MAX_NAME_CHARS)
    dataset = _check_str(label, "dataset", MAX_NAME_CHARS, required=False)
    page_id = _check_str(label, "page_id", MAX_NAME_CHARS, required=False)
    assert url is not None and annotator is not None
    keep_query = label.get("keep_query", False)
    if not isinstance(keep_query, bool):
        raise _request_error("label.keep_query", f"expected true or false, got {type(keep_query).__name__}")
    save_id = label.get("save_id")
    if save_id is not None and (not isinstance(save_id, str) or not SAVE_ID_RE.fullmatch(save_id)):
        raise _request_error("label.save_id", "expected 8 to 128 characters of A-Z a-z 0-9 . _ : - (a random key "
                                              "the client makes once per label, e.g. crypto.randomUUID())")
    if not keep_query:
        url = strip_query(url)
    return _Header(url, annotator, dataset, page_id, keep_query, save_id)


def _check_snapshot(label: dict[str, Any]) -> tuple[dict[str, Any], Snapshot]:
    """The raw snapshot object (stored, minus its source) and its parsed form (checked by the protocol's rules)."""
    raw = label.get("snapshot")
    if not isinstance(raw, dict):
        raise _request_error("label.snapshot", "missing" if raw is None else
                             f"expected a protocol-1 snapshot object, got {type(raw).__name__}")
    try:
        return raw, parse_snapshot(raw)
    except SnapshotError as e:
        raise LabelError("E_REQUEST", f"label.snapshot.{e.field}: {e}", f"label.snapshot.{e.field}") from e


def _check_nodes(label: dict[str, Any], snapshot: Snapshot) -> list[int]:
    """The selected node ids: integers of this snapshot, each once, none inside another (a nested pick would count
    its text twice); returned in the order the annotator made them."""
    nodes_raw = label.get("nodes")
    if not isinstance(nodes_raw, list):
        raise _request_error("label.nodes", "missing" if nodes_raw is None else "expected a list of node ids")
    if not nodes_raw:
        raise _request_error("label.nodes", "no node selected")
    if len(nodes_raw) > MAX_NODES:
        raise _request_error("label.nodes", f"{len(nodes_raw)} nodes exceed the limit of {MAX_NODES}")
    for k, v in enumerate(nodes_raw):
        if isinstance(v, bool) or not isinstance(v, int):
            raise _request_error(f"label.nodes[{k}]", f"expected an integer node id, got {v!r:.40}")
        if not 0 <= v < snapshot.n:
            raise _request_error(f"label.nodes[{k}]", f"node {v} is not in the snapshot (0..{snapshot.n - 1})")
    nodes = np.asarray(nodes_raw, dtype=np.int64)
    order = np.sort(nodes)
    if order.size > 1 and np.any(order[1:] == order[:-1]):
        dup = int(order[1:][order[1:] == order[:-1]][0])
        raise _request_error("label.nodes", f"node {dup} is selected twice")
    # Pre-order ids: a node lies inside an earlier selected one iff it precedes the running max of subtree ends.
    ends = np.maximum.accumulate(snapshot.subtree_end[order])
    nested = np.nonzero(order[1:] < ends[:-1])[0]
    if nested.size:
        inner = int(order[nested[0] + 1])
        raise _request_error("label.nodes", f"node {inner} lies inside another selected node: selected nodes "
                                            "must be disjoint")
    return [int(v) for v in nodes_raw]


def _label_source(label: dict[str, Any], snapshot: Snapshot) -> str:
    """The serialized page to store: the label's own, else the snapshot's; scrubbed of form values either way."""
    source = _check_str(label, "source", MAX_SOURCE_CHARS, required=False)
    if source is None:
        source = snapshot.source
        if source is None:
            raise _request_error("label.source", "the serialized page is required (collect the snapshot with "
                                                 "source, or send label.source)")
        if len(source) > MAX_SOURCE_CHARS:
            raise _request_error("label.snapshot.source",
                                 f"{len(source)} characters exceed the limit of {MAX_SOURCE_CHARS}")
        source = _scrub(source)
    return scrub_source(source)


def _stored_snapshot(raw: dict[str, Any], snapshot: Snapshot, keep_query: bool) -> bytes:
    """The snapshot as stored: without its source (stored once, in its own column), its address stripped like the
    label's, its textareas blanked; refused when too large."""
    stored = {k: v for k, v in raw.items() if k != "source"}
    if not keep_query:
        stored["page"] = {**raw["page"], "url": strip_query(snapshot.page.url or "")}
    # A textarea's text is a form value too (pre-filled drafts, tokens): it is blanked in the stored snapshot.
    in_textarea = np.nonzero(snapshot.tags[snapshot.text_owner] == "textarea")[0] if snapshot.m else []
    if len(in_textarea):
        texts = list(raw["text"]["text"])
        for k in in_textarea:
            texts[int(k)] = ""
        stored["text"] = {**raw["text"], "text": texts}
    snapshot_json = json.dumps(stored, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if len(snapshot_json) > MAX_SNAPSHOT_JSON_BYTES:
        raise _request_error("label.snapshot", f"{len(snapshot_json)} bytes exceed the limit of "
                                               f"{MAX_SNAPSHOT_JSON_BYTES}")
    return snapshot_json


def validate_label(label: Any) -> LabelRecord:
    """Check a ``label.save`` label object; every problem raises :class:`LabelError` naming the field."""
    head = _check_header(label)
    raw, snapshot = _check_snapshot(label)
    node_list = _check_nodes(label, snapshot)
    paths = node_paths(snapshot, node_list)  # before the rest of the work: refuses a too deep selection
    text = _check_str(label, "text", MAX_TEXT_CHARS, required=False)
    if text is None:
        text = _scrub(snapshot.text_of(node_list))
    source = _label_source(label, snapshot)
    snapshot_json = _stored_snapshot(raw, snapshot, head.keep_query)
    return LabelRecord(
        url=head.url, annotator=head.annotator, dataset=head.dataset, page_id=head.page_id, nodes=node_list,
        node_paths=paths, text=text,
        title=_scrub(snapshot.page.title or ""), lang=_scrub(snapshot.page.lang or ""), n_elements=snapshot.n,
        snapshot_json=snapshot_json, source=source, save_id=head.save_id, snapshot=snapshot)


# ---------------------------------------------------------------------------------------------- store / read


def save_label(db: str | Path | sqlite3.Connection | None, label: Any) -> int:
    """Validate and store one label; returns its id. ``db`` is a path, an open connection, or None (default db)."""
    return store_record(db, validate_label(label))


def store_record(db: str | Path | sqlite3.Connection | None, rec: LabelRecord) -> int:
    """Store a validated label (:func:`validate_label`); a known ``save_id`` stores nothing (module docstring)."""
    snapshot_blob = zlib.compress(rec.snapshot_json, 6)
    source_blob = zlib.compress(rec.source.encode("utf-8"), 6)
    created = _timestamp(datetime.now(UTC))
    nodes_json = json.dumps(rec.nodes)
    with _open(db) as conn:
        try:
            with write_transaction(conn):
                # A retry of a save whose answer was lost: answer the first label's id, store nothing. Inside the
                # write transaction, so two copies of one request racing cannot both insert (and the UNIQUE index
                # would refuse the second anyway).
                first = conn.execute("SELECT id, url, annotator, nodes FROM labels WHERE save_id = ?",
                                     (rec.save_id,)).fetchone() if rec.save_id is not None else None
                if first is not None:
                    conn.execute("ROLLBACK")
                    if (first[1], first[2], first[3]) != (rec.url, rec.annotator, nodes_json):
                        raise _request_error("label.save_id", f"already used by label {first[0]}, a different "
                                                              "label (a client must make a new key per label)")
                    return int(first[0])
                cur = conn.execute(
                    "INSERT INTO labels (created, url, annotator, dataset, page_id, title, lang, nodes, node_paths,"
                    " text, n_elements, snapshot, snapshot_sha256, source, save_id)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (created, rec.url, rec.annotator, rec.dataset, rec.page_id, rec.title, rec.lang,
                     nodes_json, json.dumps(rec.node_paths, ensure_ascii=False), rec.text,
                     rec.n_elements, snapshot_blob, hashlib.sha256(rec.snapshot_json).hexdigest(), source_blob,
                     rec.save_id))
                label_id = int(cur.lastrowid or 0)
        except sqlite3.Error as e:
            raise LabelError("E_STORAGE", f"cannot store the label: {e}") from e
    return label_id


def delete_labels(db: str | Path | sqlite3.Connection | None, *, ids: Sequence[int] = (), url: str | None = None,
                  older_than: timedelta | None = None, now: datetime | None = None,
                  dry_run: bool = False) -> list[int]:
    """Delete the labels matching every given selector (ids, exact stored URL, created before ``now - older_than``);
    returns their ids (``dry_run``: only returns them). At least one selector is required: deleting everything is
    ``rm labels.sqlite3``.

    The rows' bytes are overwritten (``secure_delete``) and the WAL checkpointed and truncated, so a deleted label
    cannot be read back from the database file or its -wal.
    """
    where: list[str] = []
    args: list[Any] = []
    if ids:
        where.append(f"id IN ({', '.join('?' * len(ids))})")
        args += [int(i) for i in ids]
    if url is not None:
        where.append("url = ?")
        args.append(url)
    if older_than is not None:
        cutoff = (now or datetime.now(UTC)) - older_than
        where.append("created < ?")
        args.append(_timestamp(cutoff))
    if not where:
        raise ValueError("delete_labels needs ids, url or older_than")
    with _open(db) as conn:
        try:
            conn.execute("PRAGMA secure_delete = ON")
            with write_transaction(conn):
                cond = " AND ".join(where)
                gone = [int(r[0]) for r in conn.execute(f"SELECT id FROM labels WHERE {cond} ORDER BY id", args)]
                if dry_run:
                    conn.execute("ROLLBACK")
                    return gone
                conn.execute(f"DELETE FROM labels WHERE {cond}", args)
            # Best effort: a reader still on an old snapshot keeps the WAL; the next write's checkpoint clears it.
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as e:
            raise LabelError("E_STORAGE", f"cannot delete labels: {e}") from e
    return gone


def _timestamp(t: datetime) -> str:
    """The stored form of a time (UTC, milliseconds, ``Z``): ordered as text, so ``created < ?`` compares times."""
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_SUMMARY_COLS = "id, created, url, annotator, dataset, page_id, title, lang, nodes, node_paths, n_elements, text"


def _summary(row: Sequence[Any]) -> dict[str, Any]:
    keys = [c.strip() for c in _SUMMARY_COLS.split(",")]
    out = dict(zip(keys, row, strict=True))
    out["nodes"] = json.loads(out["nodes"])
    out["node_paths"] = json.loads(out["node_paths"])
    return out


def list_labels(db: str | Path | sqlite3.Connection | None = None, *, url: str | None = None,
                annotator: str | None = None) -> list[dict[str, Any]]:
    """Every label (oldest first) without snapshot and source; ``url``/``annotator`` filter exactly."""
    where, args = [], []
    if url is not None:
        where.append("url = ?")
        args.append(url)
    if annotator is not None:
        where.append("annotator = ?")
        args.append(annotator)
    sql = f"SELECT {_SUMMARY_COLS} FROM labels" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
    with _open(db) as conn:
        return [_summary(r) for r in conn.execute(sql, args)]


def load_label(db: str | Path | sqlite3.Connection | None, label_id: int) -> dict[str, Any]:
    """One label in full: the summary plus ``snapshot`` (the protocol-1 object, with ``source``) and ``source``."""
    with _open(db) as conn:
        row = conn.execute(f"SELECT {_SUMMARY_COLS}, snapshot, source FROM labels WHERE id = ?",
                           (int(label_id),)).fetchone()
    if row is None:
        raise KeyError(label_id)
    out = _summary(row[:-2])
    out["source"] = zlib.decompress(row[-1]).decode("utf-8")
    out["snapshot"] = json.loads(zlib.decompress(row[-2]))
    out["snapshot"]["source"] = out["source"]
    return out


# ---------------------------------------------------------------------------------------------- native host


def handle_label_save(request: dict[str, Any], db: str | Path | sqlite3.Connection | None = None) -> dict[str, Any]:
    """``label.save`` request of the native host (PROTOCOL.md) -> ``{"label_id": N}``; raises :class:`LabelError`."""
    if "label" not in request:
        raise _request_error("label", "missing (label.save needs a label object)")
    return {"label_id": save_label(db, request["label"])}


# ---------------------------------------------------------------------------------------------- export

_DATA_CX = re.compile(r' data-cx="\d+"(?=/?>)')  # the collector writes it last in every start tag
_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def export_html(source: str) -> str:
    """The serialized page as a stand-alone file: inert (:func:`inert_html`), no ``data-cx`` ids; declared UTF-8 (it
    is written as UTF-8)."""
    return charset.declare_utf8(_DATA_CX.sub("", inert_html(scrub_source(source))))


def safe_page_id(label_id: int, hint: str | None) -> str:
    """A file-name-safe page id: the label id plus a slug of ``hint``; never empty, never starts with a dot."""
    slug = _SLUG_BAD.sub("-", hint or "").strip(".-_")[:60].strip(".-_")
    return f"{int(label_id):06d}-{slug}" if slug else f"{int(label_id):06d}"


class ExportError(OSError):
    """An export folder this program will not write into (a symbolic link, not a folder, not empty)."""


class ExportFolder:
    """``DIR/pages/``, ``DIR/gold/`` and the files beside them (``meta.jsonl``, ``README.md``) for an export: private
    (folders this creates, and pages/ and gold/, are 0700; every file is 0600, whatever the umask) and never through a
    symbolic link: the folders are opened with O_NOFOLLOW and every file is made, removed or written relative to its
    folder's descriptor, so a link planted as DIR, pages/, gold/ or a file is refused or replaced, never followed.

    A non-empty DIR needs ``force``, which removes the ``*.html`` of pages/ and the ``*.txt`` of gold/ (a link among
    them is removed itself, not its target) and nothing else; ``meta.jsonl`` and ``README.md`` are rewritten.
    """

    def __init__(self, out_dir: str | Path, *, force: bool) -> None:
        out = Path(out_dir)
        if out.is_symlink():
            raise ExportError(f"{out} is a symbolic link: not followed (give the folder it points to)")
        if out.exists() and not out.is_dir():
            raise ExportError(f"{out} is not a folder")
        if out.is_dir() and any(out.iterdir()) and not force:
            raise FileExistsError(f"{out} is not empty (use --force to replace its pages/, gold/ and meta.jsonl)")
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            out.mkdir(mode=PRIVATE_DIR_MODE)
            os.chmod(out, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
        self.out = out
        self._fds: list[int] = []
        self._root = self._dir(None, str(out), out)
        self._pages = self._dir(self._root, "pages", out / "pages")
        self._gold = self._dir(self._root, "gold", out / "gold")
        for fd, ext in ((self._pages, ".html"), (self._gold, ".txt")):
            for entry in os.scandir(fd):
                if entry.name.endswith(ext) and not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=fd)

    def _dir(self, parent: int | None, name: str, shown: Path) -> int:
        if parent is not None:
            try:
                os.mkdir(name, PRIVATE_DIR_MODE, dir_fd=parent)
            except FileExistsError:
                pass
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                raise ExportError(f"{shown} is a symbolic link or not a folder: not followed") from None
            raise
        self._fds.append(fd)
        if parent is not None:
            os.fchmod(fd, PRIVATE_DIR_MODE)
        return fd

    def _write(self, dir_fd: int, name: str, text: str, shown: Path) -> None:
        # Belt and braces: ids are built from [A-Za-z0-9._-] only, so a file can never leave its folder.
        if not name or "/" in name or "\\" in name or "\0" in name or name.startswith("."):
            raise ValueError(f"unsafe export file name {name!r}")
        with suppress(FileNotFoundError):
            if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                os.unlink(name, dir_fd=dir_fd)  # the link goes, not what it points to
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                         PRIVATE_FILE_MODE, dir_fd=dir_fd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise ExportError(f"{shown} is a symbolic link: not followed") from None
            raise
        with open(fd, "w", encoding="utf-8", newline="") as f:
            os.fchmod(fd, PRIVATE_FILE_MODE)  # an older file of this name may have had a wider mode
            f.write(text)

    def page(self, pid: str, source: str) -> None:
        """``pages/<pid>.html``: the stored page, inert (:func:`export_html`)."""
        self._write(self._pages, f"{pid}.html", export_html(source), self.out / "pages" / f"{pid}.html")

    def gold(self, pid: str, text: str) -> None:
        self._write(self._gold, f"{pid}.txt", text, self.out / "gold" / f"{pid}.txt")

    def file(self, name: str, text: str) -> None:
        """A file beside pages/ and gold/ (``meta.jsonl``, ``README.md``)."""
        self._write(self._root, name, text, self.out / name)

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> ExportFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def page_key(label: dict[str, Any]) -> tuple[str, str]:
    """Labels of the same page: same (data set, page id) when a page id is given, else the same URL."""
    if label.get("page_id"):
        return ("page", json.dumps([label.get("dataset") or "", label["page_id"]]))
    return ("url", label["url"])


def _hint(label: dict[str, Any]) -> str:
    if label.get("page_id"):
        return str(label["page_id"])
    try:
        parts = urlsplit(label["url"])
    except ValueError:  # e.g. an unbalanced "[" in the host
        return ""
    return f"{parts.netloc}{parts.path}"


def export_dataset(db: str | Path | sqlite3.Connection | None, out_dir: str | Path, *, every: bool = False,
                   force: bool = False) -> list[dict[str, Any]]:
    """Write the labels as a data set (``pages/<id>.html``, ``gold/<id>.txt``, ``meta.jsonl``, ``README.md``).

    One page per labelled page (:func:`page_key`) with the gold of its first label, the other annotators listed in
    ``meta["annotators"]``; ``every=True`` writes every label as its own page instead. Returns the meta rows.
    """
    with ExportFolder(out_dir, force=force) as out, _open(db) as conn:
        labels = list_labels(conn)
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for lab in labels:
            groups.setdefault(("label", str(lab["id"])) if every else page_key(lab), []).append(lab)
        rows = []
        for group in groups.values():
            first = group[0]
            full = load_label(conn, first["id"])
            pid = safe_page_id(first["id"], _hint(first))
            out.page(pid, full["source"])
            out.gold(pid, first["text"])
            primary = re.split(r"[-_]", (first["lang"] or "").strip().lower())[0]
            rows.append({
                "id": pid, "url": first["url"], "title": first["title"],
                "language": primary or "und", "lang": first["lang"],
                "annotator": first["annotator"], "time": first["created"], "label_id": first["id"],
                "annotators": list(dict.fromkeys(g["annotator"] for g in group)),
                "label_ids": [g["id"] for g in group],
                "dataset": first["dataset"], "page_id": first["page_id"],
                "nodes": first["nodes"], "node_paths": first["node_paths"], "n_elements": first["n_elements"],
                "source_dataset": "centrum labels (annotator mode)",
                "gold_type": "text of the annotator-selected nodes (node-level labels in nodes / node_paths)",
                "split": "test",
            })
        out.file("meta.jsonl", "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        out.file("README.md",
                 "# Annotator labels exported by `centrum labels export`\n\n"
                 f"{len(rows)} pages from {len(labels)} labels "
                 f"({'every label' if every else 'first label per page'}).\n"
                 "`pages/<id>.html`: the serialized page as the annotator saw it (node ids removed; scripts, event\n"
                 "handlers and javascript: URLs cut, every element kept); `gold/<id>.txt`: the text of the selected\n"
                 "nodes; `meta.jsonl`: url, annotator, time, language, `nodes` (ids in the stored snapshot) and\n"
                 "`node_paths` (`tag:k>...` from the root, k = position among element children).\n")
    return rows


# ---------------------------------------------------------------------------------------------- agreement


def node_f1(snap_a: Snapshot, nodes_a: Sequence[int], snap_b: Snapshot, paths_b: Sequence[str],
            nodes_b: Sequence[int]) -> float:
    """F1 of the element sets covered by two selections, B's nodes carried into A's snapshot by their paths."""
    cover_a = covered(snap_a, nodes_a)
    size_b = int(covered(snap_b, nodes_b).sum())
    mapped = [v for v in (resolve_path(snap_a, p) for p in paths_b) if v is not None]
    inter = min(int((cover_a & covered(snap_a, mapped)).sum()), size_b)
    total = int(cover_a.sum()) + size_b
    return 1.0 if total == 0 else 2 * inter / total


def agreement(db: str | Path | sqlite3.Connection | None = None, tokenizer: str = "fair") -> dict[str, Any]:
    """Pairwise agreement of annotators on each page labelled by two or more of them (latest label of each).

    Token F1 is the evaluation's shingle F1 (:func:`centrum.gold.metrics.score_page`, symmetric) of the two
    texts; node F1 compares the sets of elements inside the selected subtrees. Means: per page over its pairs,
    then over pages.
    """
    from ..gold import tokenize
    from ..gold.metrics import Gold, score_page

    tok = tokenize.get(tokenizer)
    pages = []
    with _open(db) as conn:
        groups: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        for lab in list_labels(conn):
            groups.setdefault(page_key(lab), {})[lab["annotator"]] = lab  # later labels replace earlier ones
        for (_, _), by_annotator in groups.items():
            if len(by_annotator) < 2:
                continue
            labs = list(by_annotator.values())
            snaps = {lab["id"]: parse_snapshot(load_label(conn, lab["id"])["snapshot"]) for lab in labs}
            pairs = []
            for i in range(len(labs)):
                for j in range(i + 1, len(labs)):
                    a, b = labs[i], labs[j]
                    tf1 = float(score_page(Gold(text=a["text"]), b["text"], tok)["f1"])
                    nf1 = node_f1(snaps[a["id"]], a["nodes"], snaps[b["id"]], b["node_paths"], b["nodes"])
                    pairs.append({"a": a["annotator"], "b": b["annotator"], "label_a": a["id"],
                                  "label_b": b["id"], "token_f1": tf1, "node_f1": nf1})
            first = labs[0]
            pages.append({"url": first["url"], "dataset": first["dataset"], "page_id": first["page_id"],
                          "annotators": [lab["annotator"] for lab in labs], "pairs": pairs,
                          "token_f1": float(np.mean([p["token_f1"] for p in pairs])),
                          "node_f1": float(np.mean([p["node_f1"] for p in pairs]))})
    return {"pages": pages,
            "token_f1": float(np.mean([p["token_f1"] for p in pages])) if pages else None,
            "node_f1": float(np.mean([p["node_f1"] for p in pages])) if pages else None}
