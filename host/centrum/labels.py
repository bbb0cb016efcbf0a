"""Annotator labels: a local SQLite store in the host's data directory, export to a data set, agreement.

A label is what an annotator selected as the main content of one page (issue #9, "Annotator mode"): the page URL,
the UTC time, the annotator's name, the protocol-v1 snapshot (zlib-compressed JSON), the selected node ids, a stable
path of each selected node, their text (computed by the host with :meth:`Snapshot.text_of` unless given), the
serialized page (the snapshot's ``source`` or ``label.source``) and, optionally, the data set / page id it belongs to.

Safety (issue #10): every statement is parameterized; nothing in a label is ever used as a file path (exported file
names are derived from the label's integer id plus a ``[A-Za-z0-9._-]`` slug); a write is one ``BEGIN IMMEDIATE``
transaction in WAL mode with ``synchronous=FULL``, so a writer killed mid-write loses only its own uncommitted label.

Node paths (:func:`node_path`) are ``tag:k`` steps from the root joined by ``>``, ``k`` being the 1-based position
among the element children in the collector's tree (``html:1>body:2>div:3``); they survive a re-render of the same
page, where node ids may shift, so node-level scores can be computed against a new snapshot (:func:`resolve_path`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from .paths import centrum_home, data_dir, make_private, private_dir, private_file
from .snapshot import Snapshot, SnapshotError, parse_snapshot

DB_NAME = "labels.sqlite3"

# Size limits of one label (a snapshot itself is bounded by the 64 MiB native-messaging request limit).
MAX_URL_CHARS = 8192
MAX_NAME_CHARS = 256  # annotator, dataset, page_id
MAX_NODES = 10_000
MAX_TEXT_CHARS = 32 * 1024 * 1024
MAX_SOURCE_CHARS = 64 * 1024 * 1024
MAX_SNAPSHOT_JSON_BYTES = 64 * 1024 * 1024

LABEL_FIELDS = ("url", "annotator", "nodes", "snapshot", "text", "source", "dataset", "page_id")

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
    conn.execute("BEGIN IMMEDIATE")
    try:
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
        conn.execute("COMMIT")
        return max(version, upto)
    except BaseException:
        conn.execute("ROLLBACK")
        raise


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


def node_path(snapshot: Snapshot, node: int, index: np.ndarray | None = None) -> str:
    """``tag:k>tag:k>...`` from the root to ``node`` (see the module docstring)."""
    index = child_index(snapshot) if index is None else index
    # The root is step 1 of a one-element "children of the document" list.
    return ">".join(f"{snapshot.tags[i]}:{max(1, int(index[i]))}" for i in reversed(snapshot.ancestors(node)))


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


def validate_label(label: Any) -> LabelRecord:
    """Check a ``label.save`` label object; every problem raises :class:`LabelError` naming the field."""
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

    raw = label.get("snapshot")
    if not isinstance(raw, dict):
        raise _request_error("label.snapshot", "missing" if raw is None else
                             f"expected a protocol-1 snapshot object, got {type(raw).__name__}")
    try:
        snapshot = parse_snapshot(raw)
    except SnapshotError as e:
        raise LabelError("E_REQUEST", f"label.snapshot.{e.field}: {e}", f"label.snapshot.{e.field}") from e

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
    node_list = [int(v) for v in nodes_raw]  # selection order kept as the annotator made it

    text = _check_str(label, "text", MAX_TEXT_CHARS, required=False)
    if text is None:
        text = _scrub(snapshot.text_of(node_list))
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
    stored = {k: v for k, v in raw.items() if k != "source"}  # the source is stored once, in its own column
    snapshot_json = json.dumps(stored, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if len(snapshot_json) > MAX_SNAPSHOT_JSON_BYTES:
        raise _request_error("label.snapshot", f"{len(snapshot_json)} bytes exceed the limit of "
                                               f"{MAX_SNAPSHOT_JSON_BYTES}")
    index = child_index(snapshot)
    return LabelRecord(
        url=url, annotator=annotator, dataset=dataset, page_id=page_id, nodes=node_list,
        node_paths=[node_path(snapshot, v, index) for v in node_list], text=text,
        title=_scrub(snapshot.page.title or ""), lang=_scrub(snapshot.page.lang or ""), n_elements=snapshot.n,
        snapshot_json=snapshot_json, source=source)


# ---------------------------------------------------------------------------------------------- store / read


def save_label(db: str | Path | sqlite3.Connection | None, label: Any) -> int:
    """Validate and store one label; returns its id. ``db`` is a path, an open connection, or None (default db)."""
    rec = validate_label(label)
    snapshot_blob = zlib.compress(rec.snapshot_json, 6)
    source_blob = zlib.compress(rec.source.encode("utf-8"), 6)
    created = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    with _open(db) as conn:
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                cur = conn.execute(
                    "INSERT INTO labels (created, url, annotator, dataset, page_id, title, lang, nodes, node_paths,"
                    " text, n_elements, snapshot, snapshot_sha256, source)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (created, rec.url, rec.annotator, rec.dataset, rec.page_id, rec.title, rec.lang,
                     json.dumps(rec.nodes), json.dumps(rec.node_paths, ensure_ascii=False), rec.text,
                     rec.n_elements, snapshot_blob, hashlib.sha256(rec.snapshot_json).hexdigest(), source_blob))
                label_id = int(cur.lastrowid or 0)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise LabelError("E_STORAGE", f"cannot store the label: {e}") from e
    return label_id


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
_META_CHARSET = re.compile(r"(<meta\b[^>]*?charset\s*=\s*[\"']?)([\w:.-]+)", re.IGNORECASE)
_HEAD_TAG = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def export_html(source: str) -> str:
    """The serialized page as a stand-alone file: no ``data-cx`` ids; declared UTF-8 (it is written as UTF-8)."""
    html = _DATA_CX.sub("", source)
    html, count = _META_CHARSET.subn(lambda m: m.group(1) + "utf-8", html)
    if count == 0:
        html = _HEAD_TAG.sub(lambda m: m.group(0) + '<meta charset="utf-8">', html, count=1)
    return html


def safe_page_id(label_id: int, hint: str | None) -> str:
    """A file-name-safe page id: the label id plus a slug of ``hint``; never empty, never starts with a dot."""
    slug = _SLUG_BAD.sub("-", hint or "").strip(".-_")[:60].strip(".-_")
    return f"{int(label_id):06d}-{slug}" if slug else f"{int(label_id):06d}"


def _inside(folder: Path, name: str) -> Path:
    # Belt and braces: ids are built from [A-Za-z0-9._-] only, so a file can never leave its folder.
    path = folder / name
    if "/" in name or "\\" in name or "\0" in name or name.startswith(".") or path.resolve().parent != folder.resolve():
        raise ValueError(f"unsafe export file name {name!r}")
    return path


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
    out = Path(out_dir)
    pages_dir, gold_dir = out / "pages", out / "gold"
    if out.exists() and any(out.iterdir()):
        if not force:
            raise FileExistsError(f"{out} is not empty (use --force to replace its pages/, gold/ and meta.jsonl)")
        for folder, ext in ((pages_dir, ".html"), (gold_dir, ".txt")):
            for f in folder.glob(f"*{ext}") if folder.is_dir() else ():
                f.unlink()
    pages_dir.mkdir(parents=True, exist_ok=True)
    gold_dir.mkdir(parents=True, exist_ok=True)
    with _open(db) as conn:
        labels = list_labels(conn)
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for lab in labels:
            groups.setdefault(("label", str(lab["id"])) if every else page_key(lab), []).append(lab)
        rows = []
        for group in groups.values():
            first = group[0]
            full = load_label(conn, first["id"])
            pid = safe_page_id(first["id"], _hint(first))
            page_file, gold_file = _inside(pages_dir, f"{pid}.html"), _inside(gold_dir, f"{pid}.txt")
            page_file.write_text(export_html(full["source"]), encoding="utf-8")
            gold_file.write_text(first["text"], encoding="utf-8")
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
    with (out / "meta.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "README.md").write_text(
        "# Annotator labels exported by `centrum labels export`\n\n"
        f"{len(rows)} pages from {len(labels)} labels ({'every label' if every else 'first label per page'}).\n"
        "`pages/<id>.html`: the serialized page as the annotator saw it (node ids removed); `gold/<id>.txt`: the\n"
        "text of the selected nodes; `meta.jsonl`: url, annotator, time, language, `nodes` (ids in the stored\n"
        "snapshot) and `node_paths` (`tag:k>...` from the root, k = position among element children).\n",
        encoding="utf-8")
    return rows


# ---------------------------------------------------------------------------------------------- agreement


def _cover(snapshot: Snapshot, nodes: Sequence[int]) -> np.ndarray:
    """Mask of the elements inside the selected subtrees."""
    mark = np.zeros(snapshot.n + 1, dtype=np.int64)
    sel = np.asarray([v for v in nodes if 0 <= v < snapshot.n], dtype=np.int64)
    np.add.at(mark, sel, 1)
    np.add.at(mark, snapshot.subtree_end[sel], -1)
    return np.cumsum(mark)[: snapshot.n] > 0


def node_f1(snap_a: Snapshot, nodes_a: Sequence[int], snap_b: Snapshot, paths_b: Sequence[str],
            nodes_b: Sequence[int]) -> float:
    """F1 of the element sets covered by two selections, B's nodes carried into A's snapshot by their paths."""
    cover_a = _cover(snap_a, nodes_a)
    size_b = int(_cover(snap_b, nodes_b).sum())
    mapped = [v for v in (resolve_path(snap_a, p) for p in paths_b) if v is not None]
    inter = min(int((cover_a & _cover(snap_a, mapped)).sum()), size_b)
    total = int(cover_a.sum()) + size_b
    return 1.0 if total == 0 else 2 * inter / total


def agreement(db: str | Path | sqlite3.Connection | None = None, tokenizer: str = "fair") -> dict[str, Any]:
    """Pairwise agreement of annotators on each page labelled by two or more of them (latest label of each).

    Token F1 is the evaluation's shingle F1 (:func:`centrum.evaluation.metrics.score_page`, symmetric) of the two
    texts; node F1 compares the sets of elements inside the selected subtrees. Means: per page over its pairs,
    then over pages.
    """
    from .evaluation import tokenize
    from .evaluation.metrics import Gold, score_page

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
