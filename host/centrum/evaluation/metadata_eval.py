"""Metadata evaluation (``centrum eval --metadata``): title, author and publication date of each page against the
gold of data sets whose ``meta.jsonl`` carries ``title``, ``author`` and ``publish_date`` (WCXB), for Centrum and the
peers trafilatura (``extract_metadata``), htmldate (``find_date``, dates only) and Readability.js.

Centrum reads a page as the extension and ``centrum extract`` do: its cached render (``centrum eval`` caches it; the
rendered DOM, what it shows, the default algorithm's main content) through
:class:`centrum.output.outputs.Outputs`; a page without one in the cache is read from its source alone (every
element counts as shown). The peers read the saved bytes. Readability.js runs in Chromium on a document parsed
with ``DOMParser`` from the same source (no scripts, no loads, no layout), the one way the project runs it; its
answers are cached in ``$CENTRUM_CACHE/metadata-peers/`` by page hash, as are the Python peers' (they do not change
between runs of Centrum's code).

Scores, per page type and overall, each with Centrum's paired bootstrap interval against every peer:

* title: exact match after whitespace collapsing, Unicode NFKC, one form of quotes and case folding, over pages
  with a gold title;
* author: token F1 per page; precision = its mean over pages where the extractor names someone, recall = its mean
  over pages with a gold author, F1 their harmonic mean (naming someone on a page without gold author costs
  precision);
* date: the calendar day as written (``YYYY-MM-DD`` prefix) equal to the gold's, over pages with a gold date
  (accuracy); ``false`` is the share of pages without a gold date where a date is given.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core import charset
from ..core.limits import read_page_file
from ..core.paths import atomic_path, cache_root
from ..gold.datasets import DatasetError, load_dataset
from .cache import SnapshotCache

FIELDS = ("title", "author", "date")
Answer = dict[str, str | None]
BOOTSTRAP_SAMPLES = 1000
WINDOW = (1920, 1080)  # the renders `centrum eval` caches (its default window, no in-page extras)
MIN_TYPE_GOLD = 20  # a page type's row is only read against the acceptance bars with this many gold values


class MetadataDataError(ValueError):
    """A data set folder missing or without the metadata gold."""


@dataclass(frozen=True)
class MetaPage:
    dataset: str
    id: str
    path: Path
    url: str
    page_type: str
    gold: dict[str, str | None]

    def html(self) -> bytes:
        return read_page_file(self.path)


def load_pages(roots: Iterable[str | Path], limit: int | None = None) -> list[MetaPage]:
    """The pages of each data set (:func:`load_dataset`: ``pages/<id>.html`` or ``.html.gz``) with the gold
    ``title`` / ``author`` / ``publish_date`` of its ``meta.jsonl``; a folder that is missing or carries no such gold
    raises with its name."""
    out: list[MetaPage] = []
    for root in map(Path, roots):
        try:
            ds = load_dataset(root, limit)
        except DatasetError as e:
            raise MetadataDataError(f"{e} (the shared data sets live in ../shared/datasets; is the folder there?)"
                                    ) from None
        if not any("publish_date" in item.meta or "author" in item.meta for item in ds.pages):
            raise MetadataDataError(f"{root / 'meta.jsonl'}: no metadata gold (title, author, publish_date)")
        out.extend(MetaPage(ds.name, item.id, item.html_path, item.meta.get("url") or "about:blank",
                            item.page_type or "und",
                            {"title": item.meta.get("title"), "author": item.meta.get("author"),
                             "date": item.meta.get("publish_date")}) for item in ds.pages)
    return out


# ---- extractors -----------------------------------------------------------------------------------------------------
def centrum_answer(html: bytes, url: str, cache: SnapshotCache | None = None) -> tuple[Answer, bool]:
    """Centrum's metadata of a page and whether it came from a render: from the cached snapshot of the page when
    ``cache`` holds one (what the extension and ``centrum extract`` read: the rendered DOM, what it shows, the main
    content of the default algorithm), else from the source alone."""
    from .. import algorithms
    from ..core.metadata import extract_metadata
    from ..core.snapshot import parse_snapshot
    from ..output.outputs import Outputs, from_html

    entry = cache.find(html, WINDOW, {}) if cache is not None else None
    raw = (entry or {}).get("raw") or {}
    if entry is not None and str((raw.get("page") or {}).get("url", "file:")).startswith("file:"):
        snap = parse_snapshot(raw)
        if snap.source is not None:
            m = Outputs(snap, algorithms.run(algorithms.DEFAULT_ALGORITHM, snap), url=url).metadata()
            return {"title": m.title, "author": m.author, "date": m.date}, True
    m = extract_metadata(from_html(charset.decode(html), url))
    return {"title": m.title, "author": m.author, "date": m.date}, False


def _trafilatura(html: bytes, url: str) -> dict[str, str | None]:
    import trafilatura

    doc = trafilatura.extract_metadata(charset.decode(html), default_url=url)
    if doc is None:
        return {"title": None, "author": None, "date": None}
    return {"title": doc.title, "author": doc.author, "date": doc.date}


def _htmldate(html: bytes, url: str) -> dict[str, str | None]:
    from htmldate import find_date

    # original_date: the publication date, not the last update (htmldate's default reports the latter).
    return {"title": None, "author": None, "date": find_date(charset.decode(html), url=url, original_date=True)}


_READABILITY = """(html) => {
%s
  const doc = new DOMParser().parseFromString(html, "text/html");
  let a = null;
  try { a = new Readability(doc).parse(); } catch (e) { return {error: String(e)}; }
  return a ? {title: a.title || null, author: a.byline || null, date: a.publishedTime || null} : {};
}"""


def _readability_version() -> str:
    from .peers import READABILITY_VERSION

    return READABILITY_VERSION


def _package_version(package: str) -> Callable[[], str]:
    def version() -> str:
        from importlib.metadata import version

        return version(package)
    return version


class PeerCache:
    """Peer answers by page hash, one JSON-lines file per peer and version."""

    def __init__(self, name: str) -> None:
        self.path = cache_root() / "metadata-peers" / f"{name}-{METADATA_PEERS[name].version()}.jsonl"
        self.data: dict[str, dict[str, str | None]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    self.data[row["key"]] = row["answer"]
                except (ValueError, KeyError):
                    continue  # a line cut by a killed run: that page runs again

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.path) as tmp:
            Path(tmp).write_text("".join(json.dumps({"key": k, "answer": v}) + "\n" for k, v in self.data.items()),
                                 encoding="utf-8")


def _key(html: bytes, url: str) -> str:
    return hashlib.sha256(html + b"\0" + url.encode()).hexdigest()


def peer_answers(name: str, pages: Sequence[MetaPage]) -> list[dict[str, str | None]]:
    """Answers of peer ``name`` on ``pages`` (cached)."""
    cache = PeerCache(name)
    todo = [(i, p) for i, p in enumerate(pages) if _key(p.html(), p.url) not in cache.data]
    if todo:
        answers = METADATA_PEERS[name].run([p for _, p in todo])
        for (_, p), a in zip(todo, answers, strict=True):
            cache.data[_key(p.html(), p.url)] = a
        cache.save()
    return [cache.data[_key(p.html(), p.url)] for p in pages]


def _each(run: Callable[[bytes, str], dict[str, str | None]]) -> Callable[[Sequence[MetaPage]], list[Answer]]:
    def many(pages: Sequence[MetaPage]) -> list[Answer]:
        out: list[Answer] = []
        for p in pages:
            try:
                out.append(run(p.html(), p.url))
            except Exception:  # noqa: BLE001 - a peer failing on a page answers nothing there
                out.append({"title": None, "author": None, "date": None})
        return out
    return many


def _readability_js(pages: Sequence[MetaPage]) -> list[dict[str, str | None]]:
    from playwright.sync_api import sync_playwright

    from ..core.render import CHROMIUM_ARGS, NO_SANDBOX, find_chromium, sandbox_state
    from .peers import readability_js_source

    fn = _READABILITY % readability_js_source()
    out: list[dict[str, str | None]] = []
    with sync_playwright() as pw:
        sandboxed, _ = sandbox_state()
        args = CHROMIUM_ARGS if sandboxed else [*CHROMIUM_ARGS, NO_SANDBOX]
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=args,
                                     chromium_sandbox=sandboxed)
        page = browser.new_page(java_script_enabled=True)
        page.set_content("<!doctype html><title>metadata</title>")
        for p in pages:
            try:
                a = page.evaluate(fn, charset.decode(p.html()))
            except Exception as e:  # noqa: BLE001
                a = {"error": str(e)[:200]}
            out.append({k: _str(a.get(k)) for k in FIELDS})
        browser.close()
    return out


@dataclass(frozen=True)
class MetadataPeer:
    version: Callable[[], str]  # part of the cache's file name: a new release answers again
    run: Callable[[Sequence[MetaPage]], list[Answer]]


# The metadata peers (their metadata functions, not their text extraction of centrum.evaluation.peers).
METADATA_PEERS: dict[str, MetadataPeer] = {
    "trafilatura": MetadataPeer(_package_version("trafilatura"), _each(_trafilatura)),
    "htmldate": MetadataPeer(_package_version("htmldate"), _each(_htmldate)),
    "readability_js": MetadataPeer(_readability_version, _readability_js),
}
PEERS = tuple(METADATA_PEERS)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v.strip() else None


# ---- scoring --------------------------------------------------------------------------------------------------------
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _norm(s: str | None) -> str:
    # Typographic and straight quotes count as one: the gold was typed, so "FDA's" stands for the page's "FDA’s".
    return " ".join(unicodedata.normalize("NFKC", s or "").translate(_QUOTES).casefold().split())


_WORD = re.compile(r"\w+")


def author_f1(pred: str | None, gold: str | None) -> float:
    """Token F1 of two names (bag of lower-cased words)."""
    p, g = _WORD.findall(_norm(pred)), _WORD.findall(_norm(gold))
    if not p or not g:
        return 0.0
    common = sum(min(p.count(w), g.count(w)) for w in set(p))
    return 2 * common / (len(p) + len(g))


def _day(value: str | None) -> str | None:
    m = re.match(r"\d{4}-\d{2}-\d{2}", (value or "").strip())
    return m.group(0) if m else None


@dataclass
class Scores:
    """Per-page arrays of one extractor (float, one entry per page)."""

    title_ok: np.ndarray  # 1/0, nan where the gold has no title
    author_score: np.ndarray  # token F1
    author_pred: np.ndarray  # 1 where the extractor names someone
    author_gold: np.ndarray  # 1 where the gold names someone
    date_ok: np.ndarray  # 1/0, nan without gold date
    date_false: np.ndarray  # 1 where a date is given without gold date, nan with gold date
    answers: list[dict[str, str | None]] = field(default_factory=list)


def score(pages: Sequence[MetaPage], answers: Sequence[dict[str, str | None]]) -> Scores:
    n = len(pages)
    s = Scores(*(np.full(n, np.nan) for _ in range(6)), answers=list(answers))
    for i, (p, a) in enumerate(zip(pages, answers, strict=True)):
        if p.gold["title"]:
            s.title_ok[i] = float(_norm(a.get("title")) == _norm(p.gold["title"]))
        s.author_pred[i] = float(bool(_norm(a.get("author"))))
        s.author_gold[i] = float(bool(_norm(p.gold["author"])))
        s.author_score[i] = author_f1(a.get("author"), p.gold["author"])
        gold_day, day = _day(p.gold["date"]), _day(a.get("date"))
        if gold_day:
            s.date_ok[i] = float(day == gold_day)
        else:
            s.date_false[i] = float(day is not None)
    return s


def _metrics(s: Scores, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric over the pages of every row of ``idx`` (resamples x pages): vectorized for the bootstrap."""
    def mean(a: np.ndarray) -> np.ndarray:
        v = a[idx]
        ok = ~np.isnan(v)
        return np.divide(np.nansum(v, axis=1), ok.sum(axis=1), out=np.full(len(idx), np.nan), where=ok.sum(axis=1) > 0)

    score_sum = s.author_score[idx].sum(axis=1)
    npred, ngold = s.author_pred[idx].sum(axis=1), s.author_gold[idx].sum(axis=1)
    p = np.divide(score_sum, npred, out=np.zeros(len(idx)), where=npred > 0)
    r = np.divide(score_sum, ngold, out=np.zeros(len(idx)), where=ngold > 0)
    f1 = np.divide(2 * p * r, p + r, out=np.zeros(len(idx)), where=p + r > 0)
    return {"title": mean(s.title_ok), "author": f1, "author_p": p, "author_r": r, "date": mean(s.date_ok),
            "date_false": mean(s.date_false)}


def summary(scores: dict[str, Scores], rows: np.ndarray, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Metrics of every extractor over pages ``rows``, with Centrum's paired bootstrap difference to each peer
    (mean and 95 % interval of Centrum minus the peer, the same page resamples for both)."""
    one = rows[None, :]
    boot = rows[np.random.default_rng(seed).integers(0, len(rows), size=(BOOTSTRAP_SAMPLES, len(rows)))]
    base = _metrics(scores["centrum"], boot) if len(rows) else {}
    out: dict[str, dict[str, Any]] = {}
    for name, s in scores.items():
        point = {k: float(v[0]) for k, v in _metrics(s, one).items()} if len(rows) else {}
        if name != "centrum" and len(rows):
            other = _metrics(s, boot)
            for k in ("title", "author", "date"):
                d = base[k] - other[k]
                d = d[~np.isnan(d)]
                point[f"{k}_diff"] = (float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))) if d.size else None
        gold = {"title": int((~np.isnan(s.title_ok[rows])).sum()), "author": int(s.author_gold[rows].sum()),
                "date": int((~np.isnan(s.date_ok[rows])).sum()), "no_date": int((~np.isnan(s.date_false[rows])).sum())}
        out[name] = {**point, "gold": gold, "pages": len(rows)}
    return out


def _cell(v: float | None, pct: bool = True) -> str:
    if v is None or v != v:
        return "–"
    return f"{100 * v:.1f} %" if pct else f"{v:.3f}"


def table(groups: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Markdown table: one row per (group, extractor); the peers' rows carry Centrum's difference interval."""
    lines = ["| pages | extractor | title exact | author F1 (P / R) | date right | date where none |",
             "|---|---|---:|---:|---:|---:|"]
    for group, res in groups.items():
        g = res["centrum"]["gold"]
        label = f"{group} ({res['centrum']['pages']}; gold {g['title']}/{g['author']}/{g['date']}/{g['no_date']})"
        for name, m in res.items():
            def diff(k: str, m: dict[str, Any] = m) -> str:
                d = m.get(f"{k}_diff")
                if not d:
                    return ""
                if k == "author":
                    return f" [{d[0]:+.3f}, {d[1]:+.3f}]"
                return f" [{100 * d[0]:+.1f}, {100 * d[1]:+.1f}]"
            author = (f"{_cell(m.get('author'), False)} ({_cell(m.get('author_p'), False)} / "
                      f"{_cell(m.get('author_r'), False)})")
            if name == "htmldate":
                row = (f"| {label} | {name} | – | – | {_cell(m.get('date'))}{diff('date')} | "
                       f"{_cell(m.get('date_false'))} |")
            else:
                row = (f"| {label} | {name} | {_cell(m.get('title'))}{diff('title')} | {author}{diff('author')} | "
                       f"{_cell(m.get('date'))}{diff('date')} | {_cell(m.get('date_false'))} |")
            lines.append(row)
            label = ""
    return "\n".join(lines)


def evaluate(roots: Sequence[str | Path], peers: Sequence[str] | None = None, limit: int | None = None,
             progress: Callable[[str], None] | None = None,
             cache: SnapshotCache | None = None) -> tuple[str, dict[str, Any]]:
    """(Markdown table, results) of Centrum and ``peers`` on the data sets ``roots``: all pages, each data set,
    each page type. Centrum reads the snapshots ``cache`` holds (``centrum eval`` renders), the source elsewhere."""
    pages = load_pages(roots, limit)
    peers = list(METADATA_PEERS) if peers is None else peers
    answers: dict[str, list[dict[str, str | None]]] = {"centrum": []}
    rendered = 0
    for p in pages:
        try:
            answer, from_render = centrum_answer(p.html(), p.url, cache)
            rendered += from_render
            answers["centrum"].append(answer)
        except Exception as e:  # noqa: BLE001 - scored as no answer, and said
            if progress:
                progress(f"{p.id}: {type(e).__name__}: {e}")
            answers["centrum"].append({"title": None, "author": None, "date": None})
    if progress:
        progress(f"centrum read {rendered} of {len(pages)} pages from their cached render, the rest from the source")
    for name in peers:
        if progress:
            progress(f"running {name}")
        try:
            answers[name] = peer_answers(name, pages)
        except Exception as e:  # noqa: BLE001 - a peer that cannot run here (no package, no Chromium) is said, not fatal
            if progress:
                progress(f"{name} not run: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    scores = {name: score(pages, a) for name, a in answers.items()}
    idx = np.arange(len(pages))
    groups: dict[str, np.ndarray] = {"all": idx}
    for ds in dict.fromkeys(p.dataset for p in pages):
        groups[ds] = idx[[p.dataset == ds for p in pages]]
    for t in sorted({p.page_type for p in pages}):
        groups[t] = idx[[p.page_type == t for p in pages]]
    results = {g: summary(scores, rows) for g, rows in groups.items() if len(rows)}
    per_page = [{"dataset": p.dataset, "id": p.id, "page_type": p.page_type, "gold": p.gold,
                 **{name: answers[name][i] for name in answers}} for i, p in enumerate(pages)]
    return table(results), {"groups": results, "pages": per_page, "rendered": rendered}
