"""Annotation campaigns: a queue of pages in the label store, each page given to ``overlap`` distinct annotators.

A campaign is made from a data-set folder in the shared layout (``pages/<id>.html``, optional ``meta.jsonl`` for
URLs; the pages are then served by ``centrum serve DIR`` and keyed by their id, since the server's port changes) or
from a text file of http(s) URLs, one a line. An **assignment** is one (page, annotator) pair, made when the
annotator asks for their next page (:func:`next_page`): their open assignment if they have one (so a browser
restart resumes where they stopped), else the first page, in campaign order, that fewer than ``overlap`` annotators
hold and that this annotator never held (a UNIQUE (page, annotator) index makes a page given twice to one
annotator impossible, and the claim is one ``BEGIN IMMEDIATE`` transaction, so two annotators asking at once
cannot both take the last slot). A skipped assignment frees its slot for another annotator; a flagged one keeps it
(the page itself is the problem: it is listed for review with its reason).

A submitted label (:func:`submit`) is stored like any ``label.save`` label (same validation, ``save_id``
idempotency) with the campaign's data set and page id forced; the suggestion the panel started from (the default
extractor's nodes in the same snapshot) is stored as node paths beside it, and whether the annotator changed it.

Agreement (:func:`status`), per page and pair of annotators: node F1 and token F1
(:func:`centrum.annotation.labels.node_f1`,
the evaluation's shingle F1) and Cohen's kappa over the page's elements, each element "inside a selected subtree"
or not for each annotator. Kappa is two proportions and one table, computed here with numpy: scikit-learn's
``cohen_kappa_score`` computes the same figure but would bring scipy and joblib into the host for ten lines, and
Krippendorff's alpha equals kappa's two-coder nominal case up to a small-sample correction, while a page here
always has two coders per pair. A page whose lowest pair node F1 is under the threshold goes to the adjudication
list; a reviewer then picks one annotator's label or saves a merged selection (:func:`adjudicate`), which becomes
the page's gold in :func:`export_campaign`.

Everything a request carries is hostile: names are checked against a character set, ids are integers, nothing is
a path, and an assignment is only answered to the annotator who holds it.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..core.snapshot import Snapshot, parse_snapshot
from ..core.tree import covered
from . import labels as L

CAMPAIGN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
PAGE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
MAX_REASON_CHARS = 1000
MAX_OVERLAP = 100
MAX_PAGES = 1_000_000
MAX_URL_CHARS = L.MAX_URL_CHARS  # a campaign page's URL: the label store's limit for a label's URL
_HTTP_URL = re.compile(r"(?i:https?)://[^\x00-\x20\x7f]+")
DEFAULT_THRESHOLD = 0.9  # lowest pair node F1 a page may have and stay off the adjudication list
STATES = ("open", "done", "skipped", "flagged")

DB = str | Path | sqlite3.Connection | None


def _now() -> str:
    return L._timestamp(datetime.now(UTC))


def _err(field: str, message: str) -> L.LabelError:
    return L.LabelError("E_REQUEST", f"{field}: {message}", field)


def _str(value: Any, field: str, limit: int = L.MAX_NAME_CHARS) -> str:
    """A non-empty request string of at most ``limit`` characters (valid Unicode); errors name ``field``."""
    try:
        out = L._check_str({"v": value}, "v", limit)
    except L.LabelError as e:
        raise _err(field, e.message.removeprefix("label.v: ")) from None
    assert out is not None
    return out


# ---------------------------------------------------------------------------------------------- creation


def pages_from(path: str | Path) -> tuple[str | None, list[tuple[str, str | None]]]:
    """The pages of a new campaign: ``(data set name, [(page id, url)])`` from a shared-layout folder (ids are the
    ``pages/*.html`` stems, URLs from ``meta.jsonl``) or a file of URLs (ids ``u00001``...; no data set)."""
    path = Path(path)
    if path.is_dir():
        pages_dir = path / "pages" if (path / "pages").is_dir() else path
        ids = sorted(p.stem for p in pages_dir.glob("*.html"))
        if not ids:
            raise ValueError(f"{pages_dir}: no .html pages")
        bad = [i for i in ids if not PAGE_ID_RE.fullmatch(i)]
        if bad:
            raise ValueError(f"{pages_dir}: page ids must be 1-200 characters of A-Z a-z 0-9 . _ - (first bad: "
                             f"{bad[0]!r})")
        urls: dict[str, str] = {}
        meta = path / "meta.jsonl"
        if meta.is_file():
            for k, line in enumerate(meta.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    row = json.loads(line) if line.strip() else {}
                except json.JSONDecodeError as e:
                    raise ValueError(f"{meta}: line {k} is not JSON ({e.msg})") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{meta}: line {k} is not a JSON object")
                if isinstance(row.get("id"), str) and row.get("url") is not None:
                    urls[row["id"]] = campaign_url(row["url"], f"{meta}: line {k}")
        return path.resolve().name, [(i, urls.get(i)) for i in ids]
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for k, line in enumerate(lines, 1):
        url = line.strip()
        if url and not url.startswith("#"):
            out.append((f"u{len(out) + 1:05d}", campaign_url(url, f"{path}: line {k}")))
    if not out:
        raise ValueError(f"{path}: no URLs")
    return None, out


def campaign_url(value: Any, where: str) -> str:
    """``value`` when it is an http(s) URL with a host, at most :data:`MAX_URL_CHARS` characters, no white space or
    control characters; else ValueError naming ``where`` (file and line). The extension opens these URLs in the
    annotator's tab: a ``javascript:``, ``file:`` or ``data:`` one must never get that far."""
    shown = repr(value[:80]) if isinstance(value, str) else type(value).__name__
    if not isinstance(value, str):
        raise ValueError(f"{where}: the URL is a {shown}, not a string")
    if len(value) > MAX_URL_CHARS:
        raise ValueError(f"{where}: the URL has {len(value)} characters, over the limit of {MAX_URL_CHARS}")
    try:
        parts = urlsplit(value)
    except ValueError:  # e.g. an unbalanced "[" in the host
        parts = None
    if parts is None or not _HTTP_URL.fullmatch(value) or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{where}: not an http(s) URL: {shown}")
    return value


def create_campaign(db: DB, name: str, pages: Sequence[tuple[str, str | None]], *, overlap: int = 1,
                    annotators: Sequence[str] | None = None, dataset: str | None = None) -> dict[str, Any]:
    """Store a new campaign and its pages (in the given order); returns :func:`campaign_info`."""
    if not CAMPAIGN_RE.fullmatch(name or ""):
        raise _err("campaign", "1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit")
    if not 1 <= overlap <= MAX_OVERLAP:
        raise _err("overlap", f"must be 1..{MAX_OVERLAP}")
    names = list(dict.fromkeys(a.strip() for a in annotators or () if a.strip()))
    if annotators is not None and not names:
        raise _err("annotators", "no annotator name given")
    if names and overlap > len(names):
        raise _err("overlap", f"{overlap} annotators per page, but only {len(names)} annotators")
    if not pages or len(pages) > MAX_PAGES:
        raise _err("pages", f"a campaign has 1..{MAX_PAGES} pages")
    for pid, url in pages:
        if url is not None:
            try:
                campaign_url(url, f"page {pid!r}")
            except ValueError as e:
                raise _err("pages", str(e)) from None
    with L._open(db) as conn:
        try:
            with L.write_transaction(conn):
                if conn.execute("SELECT 1 FROM campaigns WHERE name = ?", (name,)).fetchone():
                    raise _err("campaign", f"a campaign named {name!r} exists")
                cur = conn.execute("INSERT INTO campaigns (name, created, overlap, dataset, annotators) VALUES "
                                   "(?, ?, ?, ?, ?)", (name, _now(), overlap, dataset,
                                                       json.dumps(names) if names else None))
                cid = int(cur.lastrowid or 0)
                conn.executemany("INSERT INTO campaign_pages (campaign, position, page_id, url) VALUES (?, ?, ?, ?)",
                                 [(cid, k + 1, pid, url) for k, (pid, url) in enumerate(pages)])
        except sqlite3.IntegrityError as e:
            raise _err("pages", f"a page id is given twice ({e})") from e
        except sqlite3.Error as e:
            raise L.LabelError("E_STORAGE", f"cannot store the campaign: {e}") from e
        return campaign_info(conn, name)


def campaign_info(conn: sqlite3.Connection, name: Any) -> dict[str, Any]:
    """The campaign named ``name`` (a request field: checked) as ``{id, name, overlap, dataset, annotators, pages}``."""
    if not isinstance(name, str) or not CAMPAIGN_RE.fullmatch(name):
        raise _err("campaign", "expected a campaign name (1-64 characters of A-Z a-z 0-9 . _ -)")
    row = conn.execute("SELECT id, name, overlap, dataset, annotators FROM campaigns WHERE name = ?",
                       (name,)).fetchone()
    if row is None:
        raise _err("campaign", f"no campaign named {name!r} (centrum labels campaign create)")
    n = conn.execute("SELECT COUNT(*) FROM campaign_pages WHERE campaign = ?", (row[0],)).fetchone()[0]
    return {"id": int(row[0]), "name": row[1], "overlap": int(row[2]), "dataset": row[3],
            "annotators": json.loads(row[4]) if row[4] else None, "pages": int(n)}


# ---------------------------------------------------------------------------------------------- queue


def _annotator(value: Any, info: dict[str, Any], field: str = "annotator") -> str:
    name = _str(value, field)
    if info["annotators"] is not None and name not in info["annotators"]:
        raise _err(field, f"{name!r} is not an annotator of campaign {info['name']!r}")
    return name


def _write(conn: sqlite3.Connection, fn: Any) -> Any:
    """Run ``fn()`` in one BEGIN IMMEDIATE transaction."""
    try:
        with L.write_transaction(conn):
            return fn()
    except sqlite3.Error as e:
        raise L.LabelError("E_STORAGE", f"cannot update the campaign: {e}") from e


def _claim(conn: sqlite3.Connection, info: dict[str, Any], annotator: str) -> int | None:
    """The annotator's open assignment, else a new one on the first page with a free slot they never held.

    One indexed lookup per holder count below the overlap (``campaign_pages_free``: campaign, holders, position),
    each passing only the free pages this annotator already holds, never the full ones.
    """
    row = conn.execute("SELECT id FROM assignments WHERE campaign = ? AND annotator = ? AND state = 'open' "
                       "ORDER BY id LIMIT 1", (info["id"], annotator)).fetchone()
    if row is not None:
        return int(row[0])
    found = []
    for holders in range(info["overlap"]):
        row = conn.execute(
            "SELECT p.position, p.id FROM campaign_pages p WHERE p.campaign = ? AND p.holders = ?"
            " AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.page = p.id AND a.annotator = ?)"
            " ORDER BY p.position LIMIT 1", (info["id"], holders, annotator)).fetchone()
        if row is not None:
            found.append((int(row[0]), int(row[1])))
    if not found:
        return None
    page = min(found)[1]
    now = _now()
    cur = conn.execute("INSERT INTO assignments (campaign, page, annotator, state, created, updated) VALUES "
                       "(?, ?, ?, 'open', ?, ?)", (info["id"], page, annotator, now, now))
    conn.execute("UPDATE campaign_pages SET holders = holders + 1 WHERE id = ?", (page,))
    return int(cur.lastrowid or 0)


def _progress(conn: sqlite3.Connection, info: dict[str, Any], annotator: str) -> dict[str, int]:
    """How many pages this annotator finished (done, skipped or flagged) and how many they can have in all: the
    pages they hold or held, plus the pages with a free slot they never held."""
    cid, k = info["id"], info["overlap"]
    finished, mine, mine_free = conn.execute(
        "SELECT COALESCE(SUM(a.state != 'open'), 0), COUNT(*), COALESCE(SUM(p.holders < ?), 0) FROM assignments a"
        " JOIN campaign_pages p ON p.id = a.page WHERE a.campaign = ? AND a.annotator = ?",
        (k, cid, annotator)).fetchone()
    free = conn.execute("SELECT COUNT(*) FROM campaign_pages WHERE campaign = ? AND holders < ?",
                        (cid, k)).fetchone()[0]
    return {"finished": int(finished), "total": int(mine) + int(free) - int(mine_free)}


def next_page(db: DB, campaign: Any, annotator: Any) -> dict[str, Any]:
    """The annotator's current page (claimed if needed): ``{assignment, page_id, url, dataset, position, total}``
    (``position`` counts from 1 among this annotator's pages) or ``{"assignment": None, ...}`` when none is left."""
    with L._open(db) as conn:
        info = campaign_info(conn, campaign)
        who = _annotator(annotator, info)
        aid = _write(conn, lambda: _claim(conn, info, who))
        prog = _progress(conn, info, who)
        out: dict[str, Any] = {"campaign": info["name"], "annotator": who, "assignment": aid,
                               "finished": prog["finished"], "total": prog["total"], "dataset": info["dataset"]}
        if aid is None:
            return {**out, "page_id": None, "url": None, "position": None}
        pid, url = conn.execute("SELECT p.page_id, p.url FROM assignments a JOIN campaign_pages p ON p.id = a.page "
                                "WHERE a.id = ?", (aid,)).fetchone()
        return {**out, "page_id": pid, "url": url, "position": prog["finished"] + 1}


def _assignment(conn: sqlite3.Connection, info: dict[str, Any], who: str, aid: Any) -> tuple[int, str, str | None]:
    """(page row id, page id, page url) of the annotator's assignment ``aid``; refuses anyone else's."""
    if isinstance(aid, bool) or not isinstance(aid, int) or not 0 < aid < 2**53:
        raise _err("assignment", "expected a positive integer (from campaign.next)")
    row = conn.execute("SELECT a.page, p.page_id, p.url, a.annotator, a.campaign FROM assignments a JOIN "
                       "campaign_pages p ON p.id = a.page WHERE a.id = ?", (aid,)).fetchone()
    if row is None or row[3] != who or row[4] != info["id"]:
        raise _err("assignment", f"assignment {aid} is not {who!r}'s in campaign {info['name']!r}")
    return int(row[0]), row[1], row[2]


def _set_state(conn: sqlite3.Connection, aid: int, state: str, *, reason: str | None = None,
               label: int | None = None, suggestion: str | None = None, changed: bool | None = None) -> None:
    conn.execute("UPDATE assignments SET state = ?, reason = ?, label = ?, suggestion_paths = ?, changed = ?, "
                 "updated = ? WHERE id = ?", (state, reason, label, suggestion,
                                              None if changed is None else int(changed), _now(), aid))


def skip_or_flag(db: DB, request: dict[str, Any], state: str) -> dict[str, Any]:
    """``campaign.skip`` / ``campaign.flag``: the assignment ends without a label (a flag needs a ``reason``)."""
    _fields(request, ("campaign", "annotator", "assignment", "reason"))
    reason = request.get("reason")
    if state == "flagged" or reason is not None:
        reason = _str(reason, "reason", MAX_REASON_CHARS)
    with L._open(db) as conn:
        info = campaign_info(conn, request.get("campaign"))
        who = _annotator(request.get("annotator"), info)
        aid = request.get("assignment")
        page, _, _ = _assignment(conn, info, who, aid)
        _write(conn, lambda: _move(conn, aid, page, state, reason=reason))
    return {"assignment": aid, "state": state}


def _move(conn: sqlite3.Connection, aid: int, page: int, state: str, **fields: Any) -> None:
    """Set an assignment's state; the page's holder count follows (a skipped assignment holds no slot)."""
    before = conn.execute("SELECT state FROM assignments WHERE id = ?", (aid,)).fetchone()[0]
    _set_state(conn, aid, state, **fields)
    change = (before == "skipped") - (state == "skipped")
    if change:
        conn.execute("UPDATE campaign_pages SET holders = holders + ? WHERE id = ?", (change, page))


def _fields(request: dict[str, Any], known: Sequence[str]) -> None:
    unknown = sorted(str(k) for k in request if k not in (*known, "v", "id", "type"))
    if unknown:
        raise _err(unknown[0], f"unknown field (known: {', '.join(known)})")


def _suggestion_paths(rec: L.LabelRecord, raw: Any) -> list[str]:
    """The suggestion's node ids (the default extractor's answer in the label's snapshot) as node paths."""
    if raw is None:
        return []
    snap = rec.snapshot
    assert snap is not None
    if not isinstance(raw, list) or len(raw) > L.MAX_NODES:
        raise _err("suggestion", f"expected a list of at most {L.MAX_NODES} node ids")
    for k, v in enumerate(raw):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < snap.n:
            raise _err(f"suggestion[{k}]", f"not a node id of the snapshot (0..{snap.n - 1})")
    top = sorted(set(int(v) for v in raw))
    ends = np.maximum.accumulate(snap.subtree_end[top]) if top else np.zeros(0, dtype=np.int64)
    disjoint = [v for k, v in enumerate(top) if k == 0 or v >= ends[k - 1]]  # nested ones are inside their parent
    return L.node_paths(snap, disjoint)


def submit(db: DB, request: dict[str, Any]) -> dict[str, Any]:
    """``campaign.submit``: store the label of the annotator's assignment; answers ``{label_id, changed}``."""
    _fields(request, ("campaign", "annotator", "assignment", "label", "suggestion"))
    label = request.get("label")
    if not isinstance(label, dict):
        raise _err("label", "expected a label object (as in label.save)")
    for key in ("annotator", "dataset", "page_id"):
        if key in label:
            raise _err(f"label.{key}", "set by the campaign, not by the request")
    with L._open(db) as conn:
        info = campaign_info(conn, request.get("campaign"))
        who = _annotator(request.get("annotator"), info)
        aid = request.get("assignment")
        page_row, page_id, page_url = _assignment(conn, info, who, aid)
        rec = L.validate_label({**label, "annotator": who, "dataset": info["dataset"] or info["name"],
                                "page_id": page_id})
        if page_url:  # served pages have a changing 127.0.0.1 port: the page's own URL is what identifies it
            rec = replace(rec, url=L.strip_query(page_url))
        paths = _suggestion_paths(rec, request.get("suggestion"))
        label_id = L.store_record(conn, rec)
        changed = bool(paths) and sorted(paths) != sorted(rec.node_paths)
        _write(conn, lambda: _move(conn, aid, page_row, "done", label=label_id, suggestion=json.dumps(paths),
                                   changed=changed if paths else None))
    return {"assignment": aid, "label_id": label_id, "changed": changed if paths else None}


# ---------------------------------------------------------------------------------------------- agreement


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two binary labellings of the same items: (p_o - p_e) / (1 - p_e). Two identical constant
    labellings (p_e = 1) agree perfectly: 1.0."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if a.size == 0:
        return 1.0
    po = float(np.mean(a == b))
    pa, pb = float(a.mean()), float(b.mean())
    pe = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if pe >= 1.0 else (po - pe) / (1 - pe)


def pair_agreement(snap_a: Snapshot, lab_a: dict[str, Any], snap_b: Snapshot, lab_b: dict[str, Any],
                   tokenize: Any) -> dict[str, float]:
    """Node F1, token F1 and kappa of two labels of one page; B's nodes are carried into A's snapshot by path."""
    from ..gold.metrics import Gold, score_page

    mapped = [v for v in (L.resolve_path(snap_a, p) for p in lab_b["node_paths"]) if v is not None]
    return {"node_f1": L.node_f1(snap_a, lab_a["nodes"], snap_b, lab_b["node_paths"], lab_b["nodes"]),
            "token_f1": float(score_page(Gold(text=lab_a["text"]), lab_b["text"], tokenize)["f1"]),
            "kappa": cohen_kappa(covered(snap_a, lab_a["nodes"]), covered(snap_a, mapped))}


def _page_labels(conn: sqlite3.Connection, cid: int) -> dict[str, list[dict[str, Any]]]:
    """Page id -> the labels of its done assignments (assignment order), each with ``annotator``."""
    out: dict[str, list[dict[str, Any]]] = {}
    # Joined with labels: a label deleted since (centrum labels delete) is simply gone from the campaign's figures.
    rows = conn.execute("SELECT p.page_id, a.label FROM assignments a JOIN campaign_pages p ON p.id = a.page "
                        "JOIN labels l ON l.id = a.label WHERE a.campaign = ? AND a.state = 'done' "
                        "ORDER BY p.position, a.id", (cid,)).fetchall()
    by_id = {lab["id"]: lab for lab in _labels_by_id(conn, [int(r[1]) for r in rows])}
    for pid, lid in rows:
        out.setdefault(pid, []).append(by_id[int(lid)])
    return out


def _labels_by_id(conn: sqlite3.Connection, ids: Sequence[int]) -> list[dict[str, Any]]:
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    return [L._summary(r) for r in conn.execute(f"SELECT {L._SUMMARY_COLS} FROM labels WHERE id IN ({marks})",
                                                list(ids))]


# (database file, each label's id and creation time, tokenizer) -> pair figures. A stored label never changes and
# ids are not reused within a database (AUTOINCREMENT; the time tells a re-created database's labels apart), so the
# host computes a pair once however often the review panel asks for the adjudication list.
_PAIRS: dict[tuple[Any, ...], dict[str, float]] = {}
_MAX_PAIRS = 100_000


def _page_agreement(conn: sqlite3.Connection, labs: list[dict[str, Any]], tokenizer: str) -> list[dict[str, Any]]:
    from ..gold import tokenize as tokenizers

    snaps: dict[int, Snapshot] = {}
    db_file = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")

    def snap(lab_id: int) -> Snapshot:
        if lab_id not in snaps:
            snaps[lab_id] = parse_snapshot(L.load_label(conn, lab_id)["snapshot"])
        return snaps[lab_id]

    pairs = []
    for i in range(len(labs)):
        for j in range(i + 1, len(labs)):
            a, b = labs[i], labs[j]
            key = (db_file, a["id"], a["created"], b["id"], b["created"], tokenizer)
            if key not in _PAIRS:
                if len(_PAIRS) >= _MAX_PAIRS:
                    _PAIRS.clear()
                _PAIRS[key] = pair_agreement(snap(a["id"]), a, snap(b["id"]), b, tokenizers.get(tokenizer))
            pairs.append({"a": a["annotator"], "b": b["annotator"], "label_a": a["id"], "label_b": b["id"],
                          **_PAIRS[key]})
    return pairs


def _adjudicated(conn: sqlite3.Connection, cid: int) -> dict[str, dict[str, Any]]:
    rows = conn.execute("SELECT p.page_id, d.reviewer, d.label, d.how, d.created FROM adjudications d JOIN "
                        "campaign_pages p ON p.id = d.page JOIN labels l ON l.id = d.label WHERE p.campaign = ?",
                        (cid,)).fetchall()
    return {r[0]: {"reviewer": r[1], "label_id": int(r[2]), "how": r[3], "time": r[4]} for r in rows}


def _annotator_progress(conn: sqlite3.Connection, info: dict[str, Any]) -> dict[str, dict[str, Any]]:
    names = list(info["annotators"] or [])
    counts: dict[str, dict[str, Any]] = {}
    for who, state, n, changed, suggested in conn.execute(
            "SELECT annotator, state, COUNT(*), SUM(changed = 1), SUM(changed IS NOT NULL) FROM assignments "
            "WHERE campaign = ? GROUP BY annotator, state", (info["id"],)):
        if who not in names:
            names.append(who)
        c = counts.setdefault(who, {s: 0 for s in STATES} | {"changed": 0, "with_suggestion": 0})
        c[state] = int(n)
        c["changed"] += int(changed or 0)
        c["with_suggestion"] += int(suggested or 0)
    out = {}
    for who in names:
        c = counts.get(who, {s: 0 for s in STATES} | {"changed": 0, "with_suggestion": 0})
        c["total"] = _progress(conn, info, who)["total"]
        out[who] = c
    return out


def status(db: DB, name: str, *, threshold: float = DEFAULT_THRESHOLD, tokenizer: str = "fair") -> dict[str, Any]:
    """Progress per annotator, agreement per page and pair, the adjudication list and the flagged pages."""
    from ..gold import tokenize as tokenizers

    tokenizers.get(tokenizer)  # an unknown tokenizer is refused before any work
    with L._open(db) as conn:
        info = campaign_info(conn, name)
        adjudicated = _adjudicated(conn, info["id"])
        pages = []
        for pid, labs in _page_labels(conn, info["id"]).items():
            pairs = _page_agreement(conn, labs, tokenizer) if len(labs) > 1 else []
            row: dict[str, Any] = {"page_id": pid, "annotators": [lab["annotator"] for lab in labs], "pairs": pairs,
                                   "adjudicated": adjudicated.get(pid)}
            for key in ("node_f1", "token_f1", "kappa"):
                row[key] = float(np.mean([p[key] for p in pairs])) if pairs else None
            row["min_node_f1"] = min((p["node_f1"] for p in pairs), default=None)
            pages.append(row)
        flagged = [{"page_id": r[0], "annotator": r[1], "reason": r[2]} for r in conn.execute(
            "SELECT p.page_id, a.annotator, a.reason FROM assignments a JOIN campaign_pages p ON p.id = a.page "
            "WHERE a.campaign = ? AND a.state = 'flagged' ORDER BY p.position", (info["id"],))]
        complete = conn.execute(
            "SELECT COUNT(*) FROM campaign_pages p WHERE p.campaign = ? AND (SELECT COUNT(*) FROM assignments a "
            "WHERE a.page = p.id AND a.state IN ('done', 'flagged')) >= ?", (info["id"], info["overlap"])).fetchone()[0]
        progress = _annotator_progress(conn, info)
    scored = [p for p in pages if p["pairs"]]
    return {"campaign": info, "threshold": threshold, "complete_pages": int(complete), "annotators": progress,
            "pages": pages, "flagged": flagged,
            "adjudicate": [p["page_id"] for p in scored if p["min_node_f1"] < threshold and not p["adjudicated"]],
            **{key: float(np.mean([p[key] for p in scored])) if scored else None
               for key in ("node_f1", "token_f1", "kappa")}}


# ---------------------------------------------------------------------------------------------- adjudication


def _page_row(conn: sqlite3.Connection, info: dict[str, Any], page_id: Any) -> tuple[int, str | None]:
    if not isinstance(page_id, str) or not PAGE_ID_RE.fullmatch(page_id):
        raise _err("page_id", "expected a campaign page id (A-Z a-z 0-9 . _ -)")
    row = conn.execute("SELECT id, url FROM campaign_pages WHERE campaign = ? AND page_id = ?",
                       (info["id"], page_id)).fetchone()
    if row is None:
        raise _err("page_id", f"no page {page_id!r} in campaign {info['name']!r}")
    return int(row[0]), row[1]


def review(db: DB, request: dict[str, Any]) -> dict[str, Any]:
    """``campaign.review``: the pages to adjudicate, and for ``page_id`` its labels (``nodes`` resolved in the
    request's ``snapshot`` by node path, so the panel can outline each annotator's choice on the live page)."""
    _fields(request, ("campaign", "reviewer", "page_id", "snapshot", "threshold"))
    threshold = request.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
        raise _err("threshold", "expected a number in [0, 1]")
    _str(request.get("reviewer"), "reviewer")
    st = status(db, request.get("campaign"), threshold=float(threshold))  # type: ignore[arg-type]
    out: dict[str, Any] = {"adjudicate": st["adjudicate"], "page": None}
    page_id = request.get("page_id")
    if page_id is None:
        return out
    with L._open(db) as conn:
        info = campaign_info(conn, request.get("campaign"))
        _page_row(conn, info, page_id)
        labs = _page_labels(conn, info["id"]).get(page_id, [])
    snap = None
    if request.get("snapshot") is not None:
        try:
            snap = parse_snapshot(request["snapshot"])
        except Exception as e:  # noqa: BLE001 - SnapshotError and type errors of a hostile object alike
            raise _err("snapshot", str(e)) from e
    entries = []
    for lab in labs:
        nodes = [L.resolve_path(snap, p) for p in lab["node_paths"]] if snap is not None else None
        entries.append({"label_id": lab["id"], "annotator": lab["annotator"], "node_paths": lab["node_paths"],
                        "nodes": [v for v in nodes if v is not None] if nodes is not None else None,
                        "words": len(lab["text"].split())})
    page = next((p for p in st["pages"] if p["page_id"] == page_id), None)
    out["page"] = {"page_id": page_id, "labels": entries, "adjudicated": page and page["adjudicated"],
                   "node_f1": page and page["node_f1"]}
    return out


def adjudicate(db: DB, request: dict[str, Any]) -> dict[str, Any]:
    """``campaign.adjudicate``: the page's gold becomes one annotator's label (``pick``: its label id) or a merged
    selection the reviewer made (``label``, stored under the reviewer's name)."""
    _fields(request, ("campaign", "reviewer", "page_id", "pick", "label"))
    reviewer = _str(request.get("reviewer"), "reviewer")
    pick, label = request.get("pick"), request.get("label")
    if (pick is None) == (label is None):
        raise _err("pick", "give exactly one of pick (a label id) and label (a merged selection)")
    with L._open(db) as conn:
        info = campaign_info(conn, request.get("campaign"))
        page_row, page_url = _page_row(conn, info, request.get("page_id"))
        if pick is not None:
            ids = {lab["id"] for lab in _page_labels(conn, info["id"]).get(request["page_id"], [])}
            if isinstance(pick, bool) or not isinstance(pick, int) or pick not in ids:
                raise _err("pick", f"not a label of page {request['page_id']!r} (its labels: {sorted(ids)})")
            label_id, how = int(pick), "pick"
        else:
            if not isinstance(label, dict) or any(k in label for k in ("annotator", "dataset", "page_id")):
                raise _err("label", "expected a label object without annotator, dataset and page_id")
            rec = L.validate_label({**label, "annotator": reviewer, "dataset": info["dataset"] or info["name"],
                                    "page_id": request["page_id"]})
            if page_url:
                rec = replace(rec, url=L.strip_query(page_url))
            label_id, how = L.store_record(conn, rec), "merge"
        _write(conn, lambda: conn.execute(
            "INSERT OR REPLACE INTO adjudications (page, reviewer, label, how, created) VALUES (?, ?, ?, ?, ?)",
            (page_row, reviewer, label_id, how, _now())))
    return {"page_id": request["page_id"], "label_id": label_id, "how": how}


# ---------------------------------------------------------------------------------------------- export


def export_campaign(db: DB, name: str, out_dir: str | Path, *, force: bool = False) -> list[dict[str, Any]]:
    """Write the campaign as a data set in the shared layout: per labelled page, ``pages/<page id>.html`` (the page
    as the gold's annotator saw it), ``gold/<page id>.txt`` and a meta row with ``node_paths``. The gold is the
    adjudicated label where there is one, else the page's only label, else its first (``gold_from`` says which)."""
    rows = []
    with L.ExportFolder(out_dir, force=force) as out, L._open(db) as conn:
        info = campaign_info(conn, name)
        adjudicated = _adjudicated(conn, info["id"])
        for pid, labs in _page_labels(conn, info["id"]).items():
            adj = adjudicated.get(pid)
            gold_id = adj["label_id"] if adj else labs[0]["id"]
            gold = L.load_label(conn, gold_id)
            how = (f"adjudicated ({adj['how']} by {adj['reviewer']})" if adj else
                   "single label" if len(labs) == 1 else f"first of {len(labs)} labels, not adjudicated")
            out.page(pid, gold["source"])
            out.gold(pid, gold["text"])
            primary = re.split(r"[-_]", (gold["lang"] or "").strip().lower())[0]
            rows.append({"id": pid, "url": gold["url"], "title": gold["title"], "language": primary or "und",
                         "lang": gold["lang"], "annotator": gold["annotator"], "time": gold["created"],
                         "label_id": gold_id, "annotators": [lab["annotator"] for lab in labs],
                         "label_ids": [lab["id"] for lab in labs], "gold_from": how, "campaign": info["name"],
                         "dataset": gold["dataset"], "page_id": pid, "nodes": gold["nodes"],
                         "node_paths": gold["node_paths"], "n_elements": gold["n_elements"],
                         "source_dataset": f"centrum labels campaign {info['name']}",
                         "gold_type": "text of the selected nodes (node-level gold in node_paths)", "split": "test"})
        out.file("meta.jsonl", "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        out.file("README.md",
                 f"# Campaign `{info['name']}` exported by `centrum labels export --campaign`\n\n"
                 f"{len(rows)} labelled pages of {info['pages']} "
                 f"({sum(r['gold_from'].startswith('adj') for r in rows)} adjudicated). `pages/<id>.html`: the page\n"
                 "as the gold's annotator saw it (scripts, event handlers and javascript: URLs cut, every element\n"
                 "kept); `gold/<id>.txt`: the text of the selected nodes; `meta.jsonl`: `node_paths` (node-level\n"
                 "gold, `tag:k>...` from the root), `gold_from`, every annotator of the page.\n")
    return rows


# ---------------------------------------------------------------------------------------------- native host


def _handler(fn: Any) -> Any:
    def handle(request: dict[str, Any]) -> Any:
        return fn(None, request)
    return handle


def _next(db: DB, request: dict[str, Any]) -> dict[str, Any]:
    _fields(request, ("campaign", "annotator"))
    return next_page(db, request.get("campaign"), request.get("annotator"))


# Request type -> function(db, request); HANDLERS are the native host's (the default database).
REQUESTS: dict[str, Any] = {
    "campaign.next": _next,
    "campaign.submit": submit,
    "campaign.skip": lambda db, r: skip_or_flag(db, r, "skipped"),
    "campaign.flag": lambda db, r: skip_or_flag(db, r, "flagged"),
    "campaign.review": review,
    "campaign.adjudicate": adjudicate,
}
HANDLERS = {rtype: _handler(fn) for rtype, fn in REQUESTS.items()}
