"""Training data, fitting and leave-one-data-set-out validation of the ensemble (used by ``centrum train``).

Per page (in worker processes): parse the cached rendered snapshot, run the base algorithms, build the candidates
and their feature matrix, and label every candidate with the page metric of its rule-trimmed text (token-shingle
F1 as scrapinghub's AEB, or trafilatura's with/without snippet F1 for snippet gold); the blocks of the best
candidate and of every algorithm's answer get their features and gold-share labels for the block filter. The
per-candidate metric counts are kept too, so a data set's published aggregate (AEB macro P/R, snippet micro) of
any choice of candidates is computed without re-reading pages; the final (block-filtered) output of a chosen
candidate is re-computed from the snapshot by :func:`score_outputs`. The base algorithms and the peers are scored on the
same pages in the same pass, so the LODO table compares like with like. Page records are cached on disk under
``$CENTRUM_CACHE/ensemble/`` as Parquet tables (:mod:`.training.records`) keyed by the snapshot and the sources of
the feature code.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import functools
import hashlib
import json
import multiprocessing as mp
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..algorithms import ensemble as E
from ..algorithms.ensemble import blocks as B
from ..algorithms.ensemble import features as F
from ..algorithms.ensemble import model as M
from ..core.extras import need
from ..core.textmetrics import tokens
from ..evaluation import peers as peer_mod
from ..evaluation.cache import SnapshotCache
from ..gold.datasets import PageItem
from ..gold.metrics import (
    NGRAM_N,
    Gold,
    aeb_aggregate,
    aeb_precision,
    aeb_recall,
    norm_ws,
    shingle_matching,
    shingles,
    snippet_counts,
    snippet_scores,
)
from .records import PageRecord, load_record, load_scores, store_record, store_scores

WINDOW = (1920, 1080)
PEERS = tuple(peer_mod.PEERS)


def light_score(gold: Gold, text: str | None) -> tuple[float, tuple[float, ...]]:
    """(page F1, metric counts): AEB shingle (tp, fp, fn) for text gold, snippet (tp, fp, fn, tn) otherwise."""
    text = text or ""
    if gold.kind == "snippets":
        c = snippet_counts(gold.with_, gold.without, text)
        return snippet_scores(*c)["f1"], tuple(float(x) for x in c)
    assert gold.text is not None
    g, p = tokens(gold.text), tokens(text)
    if not g and not p:
        return 1.0, (1.0, 0.0, 0.0)
    tp, fp, fn = shingle_matching(g, p)
    pr, rc = aeb_precision(tp, fp, fn), aeb_recall(tp, fp, fn)
    return (2 * pr * rc / (pr + rc) if pr + rc > 0 else 0.0), (tp, fp, fn)


def aggregate_f1(kind: str, counts: Sequence[tuple[float, ...]]) -> float:
    """A data set's published F1 from per-page counts (AEB macro for text, snippet micro)."""
    if not counts:
        return float("nan")
    if kind == "snippets":
        s = np.asarray(counts, dtype=np.float64).sum(axis=0)
        return snippet_scores(*s)["f1"]
    return aeb_aggregate([tuple(c) for c in counts])["f1"]  # type: ignore[misc]


def block_labels(gold: Gold, texts: Sequence[str]) -> np.ndarray:
    """Per block, its share in the gold: of its 4-token shingles found in the gold text (of its tokens when it has
    fewer than 4), or for snippet gold 0 when it holds a "without" snippet, 1 when it holds a "with" one, else NaN."""
    out = np.full(len(texts), np.nan)
    if gold.kind == "snippets":
        with_ = [s for s in (norm_ws(x) for x in gold.with_) if s]
        without = [s for s in (norm_ws(x) for x in gold.without) if s]
        for i, t in enumerate(texts):
            nt = norm_ws(t)
            if any(s in nt for s in without):
                out[i] = 0.0
            elif any(s in nt for s in with_):
                out[i] = 1.0
        return out
    assert gold.text is not None
    g = tokens(gold.text)
    g_sh, g_tok = set(shingles(g)), set(g)
    for i, t in enumerate(texts):
        tk = tokens(t)
        if len(tk) >= NGRAM_N:
            sh = shingles(tk)
            out[i] = sum(c for x, c in sh.items() if x in g_sh) / sum(sh.values())
        elif tk:
            out[i] = sum(1 for x in tk if x in g_tok) / len(tk)
    return out


# Node-level supervision (`centrum train --block-labels aligned`): a page token is gold when an order-keeping
# alignment of the page's tokens to the gold's matches it, so that a word the gold holds elsewhere ("Reply", "Posts",
# "Page 1") does not make a user card, a reply button or a pagination line gold, while every post of a thread and a
# quoted post (the gold holds its text twice, in page order) is.
ALIGN_OCCURRENCES = 16  # gold positions tried per page shingle (a shingle repeated more often is boilerplate)
ALIGN_RUN = 3  # consecutive shingles matching consecutive gold ones: gold wherever the gold has them (reordered gold)


def aligned_tokens(page: Sequence[str], gold: Sequence[str], n: int = NGRAM_N) -> np.ndarray:
    """Per page token: aligned to the gold. The matches of page ``n``-token shingles with gold ones (at most
    ALIGN_OCCURRENCES gold positions each) are reduced to their longest chain increasing on both sides (patience
    sorting, O(P log P)); a run of ALIGN_RUN consecutive matches is kept off the chain too, as gold whose blocks are
    in another order than the page's. Texts shorter than ``n`` tokens on either side align token by token."""
    if min(len(page), len(gold)) < n:
        n = 1
    where: dict[tuple[str, ...], list[int]] = {}
    for j in range(len(gold) - n + 1):
        where.setdefault(tuple(gold[j:j + n]), []).append(j)
    pairs = [(i, j) for i in range(len(page) - n + 1)
             for j in reversed(where.get(tuple(page[i:i + n]), ())[:ALIGN_OCCURRENCES])]
    out = np.zeros(len(page), dtype=bool)
    if not pairs:
        return out
    matched = set(pairs)
    tails: list[int] = []  # smallest gold end of an increasing chain of each length
    tail_at: list[int] = []  # index into pairs of that chain's last pair
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):  # per page position its gold positions descending: one pair per chain step
        at = bisect.bisect_left(tails, j)
        back[k] = tail_at[at - 1] if at else -1
        if at == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[at], tail_at[at] = j, k
    keep = np.zeros(len(page), dtype=bool)  # shingle starts kept
    k = tail_at[-1]
    while k >= 0:
        keep[pairs[k][0]] = True
        k = back[k]
    for i, j in pairs:
        if all((i - d, j - d) in matched for d in range(1, ALIGN_RUN)):
            keep[i - ALIGN_RUN + 1:i + 1] = True
    for d in range(n):  # a kept shingle aligns its n tokens
        out[d:] |= keep[: len(page) - d]
    return out


def aligned_labels(gold: Gold, texts: Sequence[str]) -> np.ndarray:
    """Per block: the share of its tokens aligned to the gold (:func:`aligned_tokens` over the blocks' tokens in
    page order); snippet gold as :func:`block_labels`; NaN for a block without tokens."""
    if gold.kind == "snippets":
        return block_labels(gold, texts)
    assert gold.text is not None
    per = [tokens(t) for t in texts]
    sizes = np.fromiter((len(t) for t in per), dtype=np.int64, count=len(per))
    out = np.full(len(texts), np.nan)
    if not sizes.sum():
        return out
    ok = aligned_tokens([x for t in per for x in t], tokens(gold.text)).astype(np.float64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    has = sizes > 0
    out[has] = np.add.reduceat(ok, starts[has]) / sizes[has]
    return out


@functools.cache
def _code_version() -> str:
    """A hash of every module whose code can change a page record (features, labels, the base algorithms and what they
    share), so that a cached record is never served after such a change."""
    import importlib

    h = hashlib.sha256()
    for name in ("algorithms.ensemble.features", "algorithms.ensemble.shapes", "algorithms.ensemble",
                 "algorithms.ensemble.blocks", "algorithms.ensemble.model", "algorithms.gce", "algorithms._gce_stages",
                 "algorithms.zoning",
                 "algorithms._zoning_sentences", "algorithms.r4", "algorithms.dana", "algorithms.semantic",
                 "core.metadata", "core.snapshot", "core.tree", "core.textmetrics", "gold.metrics"):
        h.update(Path(importlib.import_module(f"centrum.{name}").__file__ or "").read_bytes())
    # This module is not hashed (its fitting code changes no record): bump when its labels change (light_score,
    # block_labels, aligned_tokens).
    h.update(b"light_score v2 blocks, aligned v1")
    return h.hexdigest()[:16]


def find_snapshot(item: PageItem, html: bytes, cache: SnapshotCache, snapshots: Path | None) -> dict[str, Any] | None:
    """The rendered snapshot entry of a page: ``snapshots/<dataset>/<id>.json`` (raw snapshot) when given, else the
    ``centrum eval`` cache (with the Readability.js extra as eval stores it by default, or without)."""
    if snapshots is not None:
        p = snapshots / item.dataset / f"{item.id}.json"
        if p.exists():
            return {"raw": json.loads(p.read_text(encoding="utf-8")), "extra": None}
        return None
    for extras in _extras_options():
        entry = cache.find(html, WINDOW, extras)
        if entry is not None:
            return entry
    return None


def _extras_options() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    try:
        out.append(peer_mod.readability_js_extra())
    except Exception:  # noqa: BLE001 - Readability.js not installed: only extra-less entries can match
        pass
    out.append({})
    return out


@dataclass(frozen=True)
class ExtractOptions:
    cache_dir: str | None = None
    snapshots: str | None = None
    peers: tuple[str, ...] = PEERS
    use_record_cache: bool = True
    # Block filter training data: blocks of the best candidate only ("candidate" scope: also of every base answer),
    # over the candidate ("candidate") or the whole page ("page"), as ensemble.Config.scope.
    block_scope: str = "page"
    # The base algorithms whose answers and runners-up are candidates and feature columns (`centrum train
    # --without`): a model trained without some runs without them (ensemble.proposers_of), faster, on other inputs.
    proposers: tuple[str, ...] = F.BASE_ALGORITHMS
    # Block filter labels: "aligned" (its share of tokens in an order-keeping alignment to the gold: node-level
    # supervision, :func:`aligned_labels`, what ensemble-v14 learned from) or "shingles" (a block's share of 4-token
    # shingles found anywhere in the gold, ensemble-v13 and before).
    block_labels: str = "aligned"


def _records_root() -> Path:
    return peer_mod.cache_root() / "ensemble"


def extract_page(item: PageItem, opts: ExtractOptions) -> PageRecord | str:
    """The page's training record, or a string saying why there is none (no cached snapshot, bad snapshot)."""
    from ..core.snapshot import parse_snapshot

    html = item.html()
    cache = SnapshotCache(Path(opts.cache_dir) if opts.cache_dir else None)
    entry = find_snapshot(item, html, cache, Path(opts.snapshots) if opts.snapshots else None)
    if entry is None:
        return "no rendered snapshot (run `centrum eval` on the data set first)"
    if not str(entry["raw"].get("page", {}).get("url", "file:")).startswith("file:"):
        return "page navigated away"
    # The snapshot itself is in the key: a page rendered again (another renderer version) is a new record.
    shot = hashlib.sha256(json.dumps(entry["raw"], ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
    key = hashlib.sha256(json.dumps([_code_version(), item.dataset, item.id, hashlib.sha256(html).hexdigest(), shot,
                                     opts.block_scope, list(opts.proposers)]
                                    + ([opts.block_labels] if opts.block_labels != "shingles" else [])
                                    ).encode()).hexdigest()
    names, block_names = F.feature_names(), B.feature_names()
    rec = load_record(_records_root(), key, names, block_names) if opts.use_record_cache else None
    if rec is None:
        try:
            snap = parse_snapshot(entry["raw"])
        except Exception as e:  # noqa: BLE001
            return f"snapshot rejected: {e}"
        rec = _page_record(item, snap, opts)
        if opts.use_record_cache:
            store_record(_records_root(), key, rec, names, block_names)
    rec.extractors.update(_peer_scores(item, html, entry, opts))
    return rec


def _page_record(item: PageItem, snap: Any, opts: ExtractOptions) -> PageRecord:
    """Candidates with their labels, block filter rows and the base algorithms' scores of one parsed page."""
    block_scope, proposers = opts.block_scope, opts.proposers
    label = aligned_labels if opts.block_labels == "aligned" else block_labels
    # Candidates are labelled by their rule-trimmed text (the block filter is trained and applied separately; its
    # effect on the chosen candidate is measured by `score_outputs`).
    cfg = E.Config(filter="rules")
    results, _ = E.run_base(snap)  # all of them: the report scores every base algorithm
    pm = E.prepare(snap, E.only(results, proposers), cfg)
    ys, counts = [], []
    for c in pm.candidates:
        f1, cnt = light_score(item.gold, E.output(snap, c, pm, cfg).text)
        ys.append(f1)
        counts.append(cnt)
    rec = PageRecord(item.dataset, item.id, item.gold.kind, pm.X, np.asarray(ys, dtype=np.float64), counts, snap.n,
                     light_score(item.gold, "")[1])
    if pm.candidates:
        keyset = {c: j for j, c in enumerate(pm.candidates)}
        block_cands = {int(np.argmax(rec.y))}
        if block_scope == "candidate":
            block_cands |= {keyset[a] for a in pm.proposals.answers.values() if a in keyset}
        for j in sorted(block_cands):
            nodes = pm.candidates[j]
            pb = B.page_blocks(snap, nodes, pm.arrays, pm.proposals, E.trim_mask(snap, nodes, pm.arrays, cfg),
                               with_texts=True, scope=block_scope)
            rec.blocks.append((j, pb.X, label(item.gold, pb.texts)))
    for name in F.BASE_ALGORITHMS:
        # The report scores each algorithm as a user runs it: with its defaults, where the ensemble's differ.
        r = results[name] if name not in E.BASE_PARAMS else E.run_base(snap, (name,), {})[0][name]
        text = r.text_for(snap)
        rec.extractors[name] = light_score(item.gold, text)
    return rec


def _peer_scores(item: PageItem, html: bytes, entry: dict[str, Any], opts: ExtractOptions
                 ) -> dict[str, tuple[float, tuple[float, ...]]]:
    """The peers' scores on the page, cached apart from the page record: they do not change with Centrum's code, and
    computing them costs more than the record itself."""
    gold_id = hashlib.sha256((item.gold.text or json.dumps([item.gold.with_, item.gold.without])).encode()).hexdigest()
    key = hashlib.sha256(json.dumps(["peers v1", hashlib.sha256(html).hexdigest(), gold_id, item.language,
                                     bool(entry.get("extra")), sorted(opts.peers)]).encode()).hexdigest()
    path = _records_root() / "peers" / f"{key}.parquet"
    got = load_scores(path) if opts.use_record_cache else None
    if got is not None:
        return got
    out: dict[str, tuple[float, tuple[float, ...]]] = {}
    snap: Any = None
    if any(peer_mod.PEERS[p].source != "html" for p in opts.peers):  # peers that read the rendered page
        from ..core.snapshot import parse_snapshot

        snap = parse_snapshot(entry["raw"])
    for name in opts.peers:
        ans = peer_mod.run_peer(name, html, item.language, snap, entry)
        if not ans.ran:
            continue  # not available here, or rendered without its in-page extra: not scored rather than scored 0
        out[name] = light_score(item.gold, ans.text)
    if opts.use_record_cache:
        store_scores(path, out)
    return out


def _work(args: tuple[PageItem, ExtractOptions]) -> PageRecord | str:
    from ..gold.sites import page_site

    try:
        rec = extract_page(*args)
    except Exception as e:  # noqa: BLE001 - one bad page is reported, not fatal
        return f"error: {type(e).__name__}: {e}"
    if isinstance(rec, PageRecord):
        item = args[0]
        rec.language, rec.page_type, rec.site = item.language, item.page_type, page_site(item)
    return rec


def _end_with_parent(parent: int) -> None:
    """Pool initializer: a worker dies with the driver. The pool hands its workers every queued page at once, so a
    driver killed without unwinding (SIGTERM, SIGKILL) would otherwise leave them computing those pages for minutes;
    ^C is the driver's to handle (it terminates the pool)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the driver died before the line above took effect
        os._exit(1)


def worker_pool(jobs: int) -> Any:
    """The spawn pool of a training run (no inherited threads or state), its workers tied to this process."""
    return mp.get_context("spawn").Pool(jobs, initializer=_end_with_parent, initargs=(os.getpid(),))


def extract_all(items: Sequence[PageItem], opts: ExtractOptions, jobs: int = 1) -> Iterator[PageRecord | str]:
    """Records in the order of ``items`` (deterministic whatever ``jobs``)."""
    tasks = [(it, opts) for it in items]
    if jobs <= 1:
        yield from map(_work, tasks)
        return
    with worker_pool(jobs) as pool:
        yield from pool.imap(_work, tasks, chunksize=2)


# ---- fitting -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FitOptions:
    rounds: int = 600  # stumps: more rounds kept helping up to here in leave-one-data-set-out validation
    learning_rate: float = 0.1
    bins: int = 32
    subsample: float = 0.8
    min_leaf: int = 20
    seed: int = 0
    # Listwise ranking temperature (0: least squares on F1): a sharp softmax over a page's candidates cares about
    # the best ones, which is what choosing one needs.
    tau: float = 0.05
    # Every data set weighs as much as any other in the candidate scorer (each page 1 / its set's pages), so that
    # the two large sets' conventions (cleaneval keeps nearly the whole page) do not decide for the others.
    balance_datasets: bool = True
    block_rounds: int = 300
    block_min_leaf: int = 50  # blocks are many and noisy: larger leaves than the candidate scorer's
    # "lightgbm": LightGBM trees (lambdarank for candidates, cross-entropy on the gold share for blocks);
    # "stumps": the numpy stumps above.
    learner: str = "lightgbm"
    lgb_rounds: int = 300
    lgb_learning_rate: float = 0.05
    lgb_leaves: int = 15
    lgb_min_leaf: int = 20
    # The candidate scorer is the mean of this many rankers, seeds seed, seed + 1, ... (one model file): in site CV one
    # seed against another moved a data set's F1 by up to 0.009 (dragnet), a bag of five by 0.003.
    ranker_bag: int = 5
    # Candidate F1 in [0, 1] becomes an integer relevance grade 0..grades for lambdarank; the gain doubles every
    # 0.1 of F1, so that the ranking cares most about the best candidates (as the listwise stumps' tau did).
    grades: int = 30
    # The proposers the records were made with (ExtractOptions.proposers): the others' columns are named as not run.
    proposers: tuple[str, ...] = F.BASE_ALGORITHMS
    # Fixed thread count: with deterministic=True the same data and seed give the same model bytes.
    threads: int = 2
    # The features the models read (features.FEATURE_SETS): records hold the latest set's columns, a model
    # of an older set is fitted on their leading ones (the shipped ensemble-v14 reads the latest, v14).
    feature_set: str = F.LATEST_FEATURE_SET


def _lgb_params(opts: FitOptions, min_leaf: int) -> dict[str, Any]:
    return {"learning_rate": opts.lgb_learning_rate, "num_leaves": opts.lgb_leaves, "min_data_in_leaf": min_leaf,
            "feature_fraction": 0.8, "bagging_fraction": opts.subsample, "bagging_freq": 1, "max_bin": 63,
            "seed": opts.seed, "deterministic": True, "force_row_wise": True, "num_threads": opts.threads,
            "verbosity": -1}


def fit_lgb_ranker(recs: Sequence[PageRecord], opts: FitOptions) -> M.Boosted:
    """LightGBM lambdarank over each page's candidates (one query per page), pages weighted as in :func:`fit`; the
    mean of ``ranker_bag`` such rankers of consecutive seeds, as one booster (:func:`M.average_boosters`)."""
    lgb = need("lightgbm", "train", "centrum train")

    names = E.trained_names(F.feature_names(opts.feature_set), opts.proposers)
    X = np.concatenate([r.X[:, : len(names)] for r in recs])
    y = np.concatenate([r.y for r in recs])
    grades = np.rint(np.clip(y, 0.0, 1.0) * opts.grades).astype(np.int32)
    page_w = np.ones(len(recs))
    if opts.balance_datasets:
        per_set = Counter(r.dataset for r in recs)
        page_w = np.array([len(recs) / len(per_set) / per_set[r.dataset] for r in recs])
    sizes = [r.X.shape[0] for r in recs]
    weights = np.repeat(page_w, sizes)  # one weight per row, equal within a query
    gain = (2.0 ** (np.arange(opts.grades + 1) / (opts.grades / 10)) - 1.0).tolist()
    params = {**_lgb_params(opts, opts.lgb_min_leaf), "objective": "lambdarank", "label_gain": gain,
              "lambdarank_truncation_level": 30}
    members = []
    for k in range(max(opts.ranker_bag, 1)):
        member = {**params, "seed": opts.seed + k}
        data = lgb.Dataset(X, label=grades, group=sizes, weight=weights, feature_name=names, params=member)
        members.append(lgb.train(member, data, num_boost_round=opts.lgb_rounds))
    booster = M.average_boosters(members) if len(members) > 1 else members[0]
    return M.Boosted(booster, names, {"objective": "lambdarank", "pages": len(recs), "candidates": int(X.shape[0]),
                                      "balance_datasets": opts.balance_datasets, "bag": len(members),
                                      "datasets": sorted({r.dataset for r in recs})})


def fit_lgb_blocks(X: np.ndarray, y: np.ndarray, w: np.ndarray, opts: FitOptions) -> M.Boosted:
    """LightGBM cross-entropy on each block's gold share (a probability, so block_threshold keeps its meaning)."""
    lgb = need("lightgbm", "train", "centrum train")

    names = E.trained_names(B.feature_names(opts.feature_set), opts.proposers)
    params = {**_lgb_params(opts, opts.block_min_leaf), "objective": "cross_entropy"}
    data = lgb.Dataset(X, label=np.clip(y, 0.0, 1.0), weight=w, feature_name=names, params=params)
    booster = lgb.train(params, data, num_boost_round=opts.lgb_rounds)
    return M.Boosted(booster, names, {"objective": "cross_entropy", "blocks": int(X.shape[0])})


def fit(records: Sequence[PageRecord], opts: FitOptions) -> M.Model:
    """Fit the candidate scorer on every candidate of ``records`` (listwise per page, or least squares)."""
    recs = [r for r in records if r.X.shape[0]]
    names = E.trained_names(F.feature_names(opts.feature_set), opts.proposers)
    if not recs:
        return M.Stumps(names)
    if opts.learner == "lightgbm":
        return fit_lgb_ranker(recs, opts)
    X = np.concatenate([r.X[:, : len(names)] for r in recs])
    if opts.tau > 0:
        y = np.concatenate([r.y for r in recs])
        groups = np.concatenate([np.full(r.X.shape[0], i) for i, r in enumerate(recs)])
        weights = None
        if opts.balance_datasets:
            per_set = Counter(r.dataset for r in recs)
            page_w = np.array([len(recs) / len(per_set) / per_set[r.dataset] for r in recs])
            weights = page_w[groups]
        model = M.fit(X, y, names, rounds=opts.rounds, learning_rate=opts.learning_rate, bins=opts.bins,
                      subsample=opts.subsample, min_leaf=opts.min_leaf, seed=opts.seed, groups=groups, tau=opts.tau,
                      weights=weights)
    else:
        # Target: the candidate's F1 relative to the page's best, so that hard pages do not dominate the fit.
        y = np.concatenate([r.y - r.y.max() for r in recs])
        w = np.concatenate([np.full(r.X.shape[0], 1.0 / r.X.shape[0]) for r in recs])
        model = M.fit(X, y, names, rounds=opts.rounds, learning_rate=opts.learning_rate, bins=opts.bins,
                      subsample=opts.subsample, min_leaf=opts.min_leaf, seed=opts.seed, weights=w * len(recs))
    model.meta.update({"pages": len(recs), "candidates": int(X.shape[0]), "balance_datasets": opts.balance_datasets,
                       "datasets": sorted({r.dataset for r in recs})})
    return model


def fit_blocks(records: Sequence[PageRecord], opts: FitOptions) -> M.Model:
    """Fit the block filter: least squares on each block's gold share, a block weighing by its words and every
    candidate's blocks together as much as any other's (long pages do not dominate)."""
    names = E.trained_names(B.feature_names(opts.feature_set), opts.proposers)
    Xs, ys, ws = [], [], []
    words = names.index("log_words")
    for r in records:
        for _, X, y in r.blocks:
            ok = ~np.isnan(y)
            if not ok.any():
                continue
            w = np.expm1(X[ok, words]) + 1.0
            Xs.append(X[ok][:, : len(names)])
            ys.append(y[ok])
            ws.append(w / w.sum())
    if not Xs:
        return M.Stumps(names)
    X, y, w = np.concatenate(Xs), np.concatenate(ys), np.concatenate(ws)
    if opts.learner == "lightgbm":
        boosted = fit_lgb_blocks(X, y, w * len(Xs) / w.sum(), opts)
        boosted.meta.update({"pages": len({(r.dataset, r.id) for r in records if r.blocks}),
                             "datasets": sorted({r.dataset for r in records})})
        return boosted
    model = M.fit(X, y, names, rounds=opts.block_rounds, learning_rate=opts.learning_rate, bins=opts.bins,
                  subsample=opts.subsample, min_leaf=opts.block_min_leaf, seed=opts.seed,
                  weights=w * len(Xs) / w.sum())
    model.meta.update({"pages": len({(r.dataset, r.id) for r in records if r.blocks}), "blocks": int(X.shape[0]),
                       "datasets": sorted({r.dataset for r in records})})
    return model


# ---- outputs of chosen candidates (second pass over the snapshots) --------------------------------------------
# A request: (candidate index, block model, block threshold), so that one pass over a page scores a sweep of
# thresholds (the blocks are scored once per candidate and model).
OutputRequest = tuple[int, M.Model, float]


def _score_work(args: tuple[PageItem, ExtractOptions, list[OutputRequest], E.Config]
                ) -> list[tuple[float, ...]] | str:
    from ..core.snapshot import parse_snapshot

    item, opts, requests, cfg = args
    try:
        html = item.html()
        cache = SnapshotCache(Path(opts.cache_dir) if opts.cache_dir else None)
        entry = find_snapshot(item, html, cache, Path(opts.snapshots) if opts.snapshots else None)
        if entry is None:
            return "no rendered snapshot"
        snap = parse_snapshot(entry["raw"])
        results, _ = E.run_base(snap, opts.proposers)
        pm = E.prepare(snap, results, cfg)
        out = []
        scored: dict[tuple[int, int], Any] = {}
        for j, block_model, threshold in requests:
            if j < 0 or j >= len(pm.candidates):
                out.append(light_score(item.gold, "")[1])
                continue
            nodes = pm.candidates[j]
            if cfg.filter == "model" and block_model is not None and (j, id(block_model)) not in scored:
                scored[j, id(block_model)] = E.block_scores(snap, nodes, pm, cfg, block_model)
            at = replace(cfg, block_threshold=threshold)
            text = E.output(snap, nodes, pm, at, block_model, scored.get((j, id(block_model)))).text
            out.append(light_score(item.gold, text)[1])
        return out
    except Exception as e:  # noqa: BLE001 - one bad page is reported, not fatal
        return f"error: {type(e).__name__}: {e}"


def score_outputs(items: Sequence[PageItem], requests: dict[str, list[OutputRequest]], opts: ExtractOptions,
                  jobs: int = 1, config: E.Config | None = None) -> dict[str, list[tuple[float, ...]]]:
    """Metric counts of the ensemble's final output (block filter applied) for chosen candidates:
    ``requests["<dataset>/<id>"]`` = [(candidate index, block model, block threshold), ...] -> counts in the same
    order (the base algorithms run once per page for all of its requests)."""
    cfg = config or E.Config()
    tasks = [(it, opts, requests[f"{it.dataset}/{it.id}"], cfg) for it in items
             if f"{it.dataset}/{it.id}" in requests]
    out: dict[str, list[tuple[float, ...]]] = {}
    with worker_pool(jobs) if jobs > 1 else contextlib.nullcontext() as pool:
        results = pool.imap(_score_work, tasks, chunksize=2) if pool is not None else map(_score_work, tasks)
        for (it, _, _, _), res in zip(tasks, results, strict=True):
            if not isinstance(res, str):
                out[f"{it.dataset}/{it.id}"] = res
    return out


def choose(model: M.Model, rec: PageRecord) -> int:
    """Index of the candidate the model picks (-1: none)."""
    if rec.X.shape[0] == 0:
        return -1
    return int(np.argmax(model.predict(rec.X[:, : len(model.feature_names)])))


def table(records: Sequence[PageRecord], chooser: dict[str, Callable[[PageRecord], int]],
          extractors: Sequence[str], outputs: dict[str, dict[str, tuple[float, ...]]] | None = None
          ) -> dict[str, dict[str, float]]:
    """{dataset: {extractor: F1}} with the published aggregate of each data set's gold kind.

    ``chooser``: columns scored by the (rule-trimmed) counts of a chosen candidate; ``outputs``: columns given as
    per-page counts (``{column: {"<dataset>/<id>": counts}}``, a page missing there scores as an empty answer)."""
    out: dict[str, dict[str, float]] = {}
    by_ds: dict[str, list[PageRecord]] = {}
    for r in records:
        by_ds.setdefault(r.dataset, []).append(r)
    for ds, recs in sorted(by_ds.items()):
        kind = recs[0].kind
        row: dict[str, float] = {"pages": float(len(recs))}
        for name, pick in chooser.items():
            counts = []
            for r in recs:
                j = pick(r)
                if j < 0:
                    counts.append(r.empty)
                else:
                    counts.append(r.counts[j])
            row[name] = aggregate_f1(kind, counts)
        for name, per_page in (outputs or {}).items():
            row[name] = aggregate_f1(kind, [per_page.get(f"{r.dataset}/{r.id}", r.empty) for r in recs])
        for name in extractors:
            cs = [r.extractors[name][1] for r in recs if name in r.extractors]
            # A peer that ran on only some of the set's pages (renders with and without its in-page extra) would be
            # compared on other pages than the ensemble: it gets no column, as group_table's comparison does.
            if cs and len(cs) == len(recs):
                row[name] = aggregate_f1(kind, cs)
        out[ds] = row
    return out


def group_table(records: Sequence[PageRecord], group: Callable[[PageRecord], str | None],
                chooser: dict[str, Callable[[PageRecord], int]], extractors: Sequence[str],
                outputs: dict[str, dict[str, tuple[float, ...]]] | None = None,
                compare: tuple[str, Sequence[str]] | None = None) -> dict[str, dict[str, float]]:
    """{group: {column: mean per-page F1}} for rows that mix data sets (language, page type), where one data set's
    aggregate does not apply; columns as in :func:`table`. Pages whose group is None are in no row.

    ``compare=(column, peers)`` adds ``delta``, ``delta_lo``, ``delta_hi``: the column minus the row's best peer
    (by mean) on the same pages, with its paired-bootstrap 95 % interval."""
    from ..gold.metrics import paired_bootstrap

    rows: dict[str, dict[str, list[float]]] = {}
    for r in records:
        g = group(r)
        if not g:
            continue
        row = rows.setdefault(g, {})
        row.setdefault("pages", []).append(1.0)
        for name, pick in chooser.items():
            j = pick(r)
            row.setdefault(name, []).append(aggregate_f1(r.kind, [r.empty if j < 0 else r.counts[j]]))
        for name, per_page in (outputs or {}).items():
            row.setdefault(name, []).append(aggregate_f1(r.kind, [per_page.get(page_key(r), r.empty)]))
        for name in extractors:
            if name in r.extractors:
                row.setdefault(name, []).append(r.extractors[name][0])
    # A peer that ran on only some of a row's pages (renders with and without its in-page extra) gets no column, as
    # in :func:`table`: its mean is over other pages than the row's and must not show as the row's best peer.
    for row in rows.values():
        for name in extractors:
            if len(row.get(name, [])) != len(row["pages"]):
                row.pop(name, None)
    out = {g: {k: (float(len(v)) if k == "pages" else float(np.mean(v))) for k, v in row.items()}
           for g, row in sorted(rows.items())}
    if compare is not None:
        column, peers = compare
        for g, row in rows.items():
            full = [p for p in peers if p in row]
            if column in row and full:
                best = max(full, key=lambda p: (float(np.mean(row[p])), p))
                delta, lo, hi = paired_bootstrap(row[column], row[best])
                out[g].update({"delta": delta, "delta_lo": lo, "delta_hi": hi})
    return out


def held_out(records: Sequence[PageRecord], opts: FitOptions, fold: Callable[[PageRecord], str]
             ) -> tuple[dict[str, int], dict[str, M.Model], dict[str, M.Model]]:
    """Cross-validation by ``fold`` (a page's fold name): ({"<dataset>/<id>": chosen candidate}, {fold: candidate
    scorer}, {fold: block filter}), each fold's models trained on the other folds only."""
    picks: dict[str, int] = {}
    models: dict[str, M.Model] = {}
    block_models: dict[str, M.Model] = {}
    names = [fold(r) for r in records]
    for f in sorted(set(names)):
        rest = [r for r, n in zip(records, names, strict=True) if n != f]
        models[f] = fit(rest, opts)
        block_models[f] = fit_blocks(rest, opts)
        for r, n in zip(records, names, strict=True):
            if n == f:
                picks[page_key(r)] = choose(models[f], r)
    return picks, models, block_models


def page_key(r: PageRecord) -> str:
    return f"{r.dataset}/{r.id}"


def lodo(records: Sequence[PageRecord], opts: FitOptions, together: Mapping[str, str] | None = None
         ) -> tuple[dict[str, int], dict[str, M.Model], dict[str, M.Model]]:
    """Leave-one-data-set-out: :func:`held_out` with the data set as the fold; ``together`` maps a data set to the
    fold it is held out in with others (the folders of one benchmark, which share sites: wcxb and wcxb-dev2)."""
    group = together or {}
    return held_out(records, opts, lambda r: group.get(r.dataset, r.dataset))


def benchmark_folds(datasets: Mapping[str, str | None]) -> dict[str, str]:
    """{data set: LODO fold} from each data set's source benchmark (meta.jsonl ``source_dataset``): folders of one
    benchmark are one fold named by their names joined with "+", every other data set its own fold."""
    by_source: dict[str, list[str]] = {}
    for name, source in datasets.items():
        by_source.setdefault(source or f"set:{name}", []).append(name)
    return {name: "+".join(sorted(names)) for names in by_source.values() for name in names}


def site_cv(records: Sequence[PageRecord], opts: FitOptions, k: int = 5
            ) -> tuple[dict[str, int], dict[str, M.Model], dict[str, M.Model], dict[str, str]]:
    """k-fold cross-validation grouped by site (no registered domain in two folds, ``evaluation.sites``); also
    returns each page's fold name."""
    from ..gold.sites import site_folds

    folds = site_folds([r.site or f"page:{page_key(r)}" for r in records], k)
    fold_of = {page_key(r): f"fold{f}" for r, f in zip(records, folds, strict=True)}
    picks, models, block_models = held_out(records, opts, lambda r: fold_of[page_key(r)])
    return picks, models, block_models, fold_of
