"""Evaluation metrics, each reproducing the published definition it is named after.

* **Token shingle P/R/F1** — scrapinghub's article-extraction-benchmark ``evaluate.py`` (read at
  github.com/scrapinghub/article-extraction-benchmark): 4-token shingles of gold and prediction as multisets;
  ``tp = sum(min)``, ``fp``/``fn`` the surpluses; the triple is normalised to sum 1 per page (so long pages do not
  weigh more); per page ``precision = 1 if fp == fn == 0, 0 if tp == fp == 0, else tp/(tp+fp)`` (recall alike);
  over a data set precision is the mean over pages with ``tp + fp > 0`` and recall the mean over pages with
  ``tp + fn > 0``, and ``F1 = 2PR/(P+R)`` of those means. A text shorter than 4 tokens is one shingle.
* **LCS P/R/F1/F0.5** (GCE and DANA papers): ``P = |LCS| / |prediction|``, ``R = |LCS| / |gold|`` over tokens,
  ``F_beta = (1+b²)PR / (b²P + R)``. Computed exactly with the bit-parallel algorithm of Hyyrö (2004) / Crochemore
  et al. (2001): one big-integer pass per token of the shorter sequence, ``O(n·m/64)`` word operations, so two
  20,000-token texts take milliseconds. Each side is capped at :data:`MAX_LCS_TOKENS` tokens (longer texts are
  truncated and the page is flagged ``lcs_capped``).
* **Text blocks** (:func:`block_matching`): token-weighted precision/recall of whole lines found contiguously in
  the other side, for text gold.
* **DOM nodes** (:func:`node_prf`): for pages whose meta carries ``node_paths`` (``centrum labels export``), the gold
  elements are found again in the render by path and compared, as element sets covered by the selected subtrees,
  with an algorithm's nodes (peers answer with text only). The shared sets carry no node-level gold.
* **Snippets** — trafilatura's ``tests/eval_common.py``: each whitespace-normalised ``with`` snippet found as a
  substring of the whitespace-normalised extraction is a TP (missing: FN), each ``without`` snippet found is an FP
  (absent: TN); over a data set the counts are summed (micro) before P, R, accuracy and F1.

Conventions for degenerate pages (used by every metric so tables stay comparable): an empty or failed extraction
scores 0 on every per-page value and is counted, never dropped; empty gold with empty prediction scores 1; empty
gold with a non-empty prediction scores 0 (as ``evaluate.py``'s ``precision_score``/``recall_score`` do).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.tree import covered

NGRAM_N = 4  # evaluate.py string_shingle_matching(ngram_n=4)
MAX_LCS_TOKENS = 200_000  # per side; at the cap one LCS costs ~ 200k * 200k / 64 word ops (~ seconds)


# ---- scrapinghub article-extraction-benchmark ------------------------------------------------------------------
def shingles(tokens: Sequence[str], n: int = NGRAM_N) -> Counter[tuple[str, ...]]:
    """Multiset of ``n``-token shingles; fewer than ``n`` tokens make a single (shorter) shingle, none make none."""
    out: Counter[tuple[str, ...]] = Counter()
    for i in range(max(1, len(tokens) - n + 1)):
        shingle = tuple(tokens[i : i + n])
        if shingle:
            out[shingle] += 1
    return out


def shingle_matching(gold: Sequence[str], pred: Sequence[str], n: int = NGRAM_N) -> tuple[float, float, float]:
    """``(tp, fp, fn)`` over shingles, normalised to sum 1 (all 0 when both texts are empty)."""
    g, p = shingles(gold, n), shingles(pred, n)
    tp = float(sum((g & p).values()))  # Counter & = multiset minimum
    fp = float(sum((p - g).values()))  # Counter - keeps positive surpluses only
    fn = float(sum((g - p).values()))
    s = tp + fp + fn
    return (tp / s, fp / s, fn / s) if s > 0 else (0.0, 0.0, 0.0)


def aeb_precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fp == 0:
        return 0.0
    return tp / (tp + fp)


def aeb_recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fn == 0:
        return 0.0
    return tp / (tp + fn)


def aeb_aggregate(triples: Iterable[tuple[float, float, float]]) -> dict[str, float]:
    """Data-set precision/recall/F1 exactly as ``evaluate.py`` ``metrics_from_tp_fp_fns`` (NaN when undefined)."""
    triples = list(triples)
    ps = [aeb_precision(*t) for t in triples if t[0] + t[1] > 0]
    rs = [aeb_recall(*t) for t in triples if t[0] + t[2] > 0]
    # evaluate.py would fail on an empty mean; here an extractor that answered nothing anywhere gets P = 0 (R
    # alike for pages that all lack gold) so that failures score 0 instead of vanishing. NaN only without pages.
    p = float(np.mean(ps)) if ps else (0.0 if triples else float("nan"))
    r = float(np.mean(rs)) if rs else (0.0 if triples else float("nan"))
    f1 = 2 * p * r / (p + r) if p + r > 0 else (0.0 if triples else float("nan"))
    return {"precision": p, "recall": r, "f1": f1}


# ---- LCS ---------------------------------------------------------------------------------------------------------
def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token sequences (exact, bit-parallel)."""
    if len(a) > len(b):
        a, b = b, a  # one Python iteration per token of the shorter side; bits over the longer
    m = len(b)
    if not a or m == 0:
        return 0
    # Token ids for b, then one bit mask per token that also occurs in a (others can never match).
    vocab: dict[Hashable, int] = {}
    b_ids = np.fromiter((vocab.setdefault(t, len(vocab)) for t in b), dtype=np.int64, count=m)
    wanted = {vocab[t] for t in set(a) if t in vocab}
    if not wanted:
        return 0
    order = np.argsort(b_ids, kind="stable")
    sorted_ids = b_ids[order]
    masks: dict[Hashable, int] = {}
    inv = {i: t for t, i in vocab.items() if i in wanted}
    bits = np.zeros(m, dtype=np.uint8)
    for tid, t in inv.items():
        lo, hi = np.searchsorted(sorted_ids, [tid, tid + 1])
        pos = order[lo:hi]
        bits[pos] = 1
        masks[t] = int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")
        bits[pos] = 0
    full = (1 << m) - 1
    v = full
    for t in a:
        mask = masks.get(t)
        if mask is None:
            continue
        u = v & mask
        v = ((v + u) | (v - u)) & full  # Hyyrö 2004: zero bits of v count the LCS
    return m - v.bit_count()


def f_beta(p: float, r: float, beta: float) -> float:
    b2 = beta * beta
    d = b2 * p + r
    return (1 + b2) * p * r / d if d > 0 else 0.0


# ---- text blocks -------------------------------------------------------------------------------------------------
_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd, so invertible modulo 2**64
_HASH_BASE_INV = np.uint64(pow(0x9E3779B97F4A7C15, -1, 2**64))


def _prefix_hashes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``S`` with ``S[i] = sum_{j<i} ids[j] * inv^j`` and ``pw[i] = base^i`` (all modulo 2**64, numpy wraps), so that
    ``(S[i+L] - S[i]) * pw[i]`` hashes the window ``ids[i:i+L]`` independently of its position."""
    n = ids.shape[0]
    with np.errstate(over="ignore"):
        inv = np.cumprod(np.full(n, _HASH_BASE_INV, dtype=np.uint64)) * _HASH_BASE  # inv^j, j = 0..n-1
        pw = np.cumprod(np.full(n + 1, _HASH_BASE, dtype=np.uint64)) * _HASH_BASE_INV  # base^i, i = 0..n
        s = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum(ids.astype(np.uint64) * inv, out=s[1:])
    return s, pw


def _blocks_found(blocks: list[list[str]], other: list[str], vocab: dict[str, int]) -> np.ndarray:
    """For each block: does its token sequence occur contiguously in ``other``? Rolling hashes, one vectorized
    pass over ``other`` per distinct block length (O(distinct lengths x len(other)), no per-block substring scan)."""
    found = np.zeros(len(blocks), dtype=bool)
    if not blocks or not other:
        return found
    o = np.fromiter((vocab.setdefault(t, len(vocab) + 1) for t in other), dtype=np.int64, count=len(other))
    flat = [t for b in blocks for t in b]
    f = np.fromiter((vocab.setdefault(t, len(vocab) + 1) for t in flat), dtype=np.int64, count=len(flat))
    lens = np.fromiter((len(b) for b in blocks), dtype=np.int64, count=len(blocks))
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    sf, pf = _prefix_hashes(f)
    so, po = _prefix_hashes(o)
    with np.errstate(over="ignore"):
        block_hash = (sf[starts + lens] - sf[starts]) * pf[starts]
        for length in np.unique(lens):
            if length == 0 or length > o.shape[0]:
                continue
            sel = lens == length
            windows = (so[length:] - so[:-length]) * po[: o.shape[0] - length + 1]
            # Look the (many) windows up among the (few) block hashes: a binary search each, no sort of windows.
            bh = np.sort(block_hash[sel])
            pos = np.minimum(np.searchsorted(bh, windows), bh.shape[0] - 1)
            found[sel] = np.isin(block_hash[sel], windows[bh[pos] == windows])
    return found


def block_matching(gold: str, pred: str, tokenize: Callable[[str], list[str]]) -> tuple[float, float]:
    """Token-weighted text-block precision and recall: a block (non-empty line) of one side counts as matched when
    its whole token sequence occurs contiguously in the other side's tokens; P = matched predicted tokens / all
    predicted tokens, R = matched gold tokens / all gold tokens. Catches extractors that keep every word of the
    article but splice in foreign blocks, or drop whole paragraphs, independently of block segmentation."""
    g = [t for t in (tokenize(line) for line in gold.splitlines()) if t]
    p = [t for t in (tokenize(line) for line in pred.splitlines()) if t]
    vocab: dict[str, int] = {}

    def side(src: list[list[str]], other: list[list[str]]) -> float:
        total = sum(len(b) for b in src)
        if total == 0:
            return 0.0
        found = _blocks_found(src, [t for b in other for t in b], vocab)
        return float(sum(len(b) for b, ok in zip(src, found, strict=True) if ok)) / total

    return side(p, g), side(g, p)


# ---- DOM nodes ---------------------------------------------------------------------------------------------------
def node_prf(subtree_end: np.ndarray, gold_nodes: Sequence[int], pred_nodes: Sequence[int]) -> tuple[float, float,
                                                                                                      float]:
    """DOM-node precision/recall/F1 of the element sets covered by two selections in the same snapshot (the
    convention of ``centrum labels agreement``); an empty prediction scores 0, both empty score 1."""
    g, p = covered(subtree_end, gold_nodes), covered(subtree_end, pred_nodes)
    ng, np_, inter = int(g.sum()), int(p.sum()), int((g & p).sum())
    if ng == 0 and np_ == 0:
        return 1.0, 1.0, 1.0
    prec = inter / np_ if np_ else 0.0
    rec = inter / ng if ng else 0.0
    return prec, rec, f_beta(prec, rec, 1.0)


# ---- trafilatura snippets -------------------------------------------------------------------------------------------
_WS = re.compile(r"\s+")


def norm_ws(text: str) -> str:
    return _WS.sub(" ", text).strip()


def snippet_counts(with_: Sequence[str], without: Sequence[str], pred: str | None) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)`` of one page, as trafilatura ``eval_common.count_item``."""
    if pred:
        text = norm_ws(pred)
        tp = sum(1 for s in with_ if norm_ws(s) in text)
        fp = sum(1 for s in without if norm_ws(s) in text)
    else:
        tp = fp = 0
    return tp, fp, len(with_) - tp, len(without) - fp


def snippet_scores(tp: float, fp: float, fn: float, tn: float) -> dict[str, float]:
    """Precision, recall, accuracy, F1 of (summed) snippet counts; 0 where a denominator is empty."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    total = tp + fp + fn + tn
    acc = (tp + tn) / total if total else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 0.0
    return {"precision": p, "recall": r, "accuracy": acc, "f1": f1}


# ---- per-page scoring ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gold:
    """Gold of one page: full text, or trafilatura-style snippets (``with`` must appear, ``without`` must not)."""

    text: str | None = None
    with_: tuple[str, ...] = ()
    without: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return "text" if self.text is not None else "snippets"


def score_page(gold: Gold, pred: str | None, tokenize: Callable[[str], list[str]]) -> dict[str, Any]:
    """Per-page scores. ``p``/``r``/``f1`` are the page's own metric (token shingles or snippets); a ``None`` or
    empty prediction scores 0 (see module docstring)."""
    pred = pred or ""
    if gold.kind == "snippets":
        tp, fp, fn, tn = snippet_counts(gold.with_, gold.without, pred)
        s = snippet_scores(tp, fp, fn, tn)
        return {"kind": "snippets", "p": s["precision"], "r": s["recall"], "f1": s["f1"], "acc": s["accuracy"],
                "sn_tp": tp, "sn_fp": fp, "sn_fn": fn, "sn_tn": tn, "pred_tokens": len(tokenize(pred))}
    assert gold.text is not None
    g, p = tokenize(gold.text), tokenize(pred)
    tp, fp, fn = shingle_matching(g, p)
    prec, rec = aeb_precision(tp, fp, fn), aeb_recall(tp, fp, fn)
    if not g and not p:
        prec = rec = 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    capped = len(g) > MAX_LCS_TOKENS or len(p) > MAX_LCS_TOKENS
    gc, pc = g[:MAX_LCS_TOKENS], p[:MAX_LCS_TOKENS]
    if not gc and not pc:
        lp = lr = 1.0
    else:
        lcs = lcs_length(gc, pc)
        lp = lcs / len(pc) if pc else 0.0
        lr = lcs / len(gc) if gc else 0.0
    if not g and not p:
        bp = br = 1.0
    else:
        bp, br = block_matching(gold.text, pred, tokenize)
    return {"kind": "text", "p": prec, "r": rec, "f1": f1, "aeb_tp": tp, "aeb_fp": fp, "aeb_fn": fn,
            "block_p": bp, "block_r": br, "block_f1": f_beta(bp, br, 1.0),
            "lcs_p": lp, "lcs_r": lr, "lcs_f1": f_beta(lp, lr, 1.0), "lcs_f05": f_beta(lp, lr, 0.5),
            "lcs_capped": capped, "gold_tokens": len(g), "pred_tokens": len(p)}


BOOTSTRAP_SAMPLES = 1000  # as evaluate.py's --n-bootstrap default


def _bootstrap_f1_ci(rows: Sequence[Mapping[str, Any]], samples: int = BOOTSTRAP_SAMPLES, seed: int = 0) -> float:
    """``1.96 x std`` of the data-set F1 over page resamples, as evaluate.py reports its "±" (vectorized)."""
    n = len(rows)
    if n < 2:
        return 0.0
    idx = np.random.default_rng(seed).integers(0, n, size=(samples, n))
    if rows[0]["kind"] == "snippets":
        c = np.array([[r["sn_tp"], r["sn_fp"], r["sn_fn"]] for r in rows], dtype=float)[idx].sum(axis=1)
        d = 2 * c[:, 0] + c[:, 1] + c[:, 2]
        f1 = np.divide(2 * c[:, 0], d, out=np.zeros(samples), where=d > 0)
    else:
        t = np.array([[r["aeb_tp"], r["aeb_fp"], r["aeb_fn"]] for r in rows], dtype=float)
        pv = np.array([aeb_precision(*x) for x in t])[idx]
        rv = np.array([aeb_recall(*x) for x in t])[idx]
        pm, rm = (t[:, 0] + t[:, 1] > 0)[idx], (t[:, 0] + t[:, 2] > 0)[idx]
        p = np.divide((pv * pm).sum(axis=1), pm.sum(axis=1), out=np.zeros(samples), where=pm.sum(axis=1) > 0)
        r = np.divide((rv * rm).sum(axis=1), rm.sum(axis=1), out=np.zeros(samples), where=rm.sum(axis=1) > 0)
        f1 = np.divide(2 * p * r, p + r, out=np.zeros(samples), where=p + r > 0)
    return float(1.96 * np.std(f1, ddof=1))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], samples: int = BOOTSTRAP_SAMPLES,
                     seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``a - b`` over paired pages and its 95 % percentile interval over page resamples: a difference
    whose interval holds 0 is not significant at that level."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return float("nan"), float("nan"), float("nan")
    means = d[np.random.default_rng(seed).integers(0, d.size, size=(samples, d.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi)


def aggregate(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Data-set scores of one extractor from its per-page rows (all of one gold kind).

    ``f1``/``precision``/``recall`` are the published aggregate of the kind (scrapinghub macro for text,
    trafilatura micro for snippets); ``f1_ci`` its bootstrap "±" (1.96 std over 1000 page resamples, as
    evaluate.py); ``mean_f1`` is the plain mean of per-page F1 (failures count 0).
    """
    if not rows:
        return {}
    out: dict[str, float] = {"pages": float(len(rows)), "mean_f1": float(np.mean([r["f1"] for r in rows])),
                             "f1_ci": _bootstrap_f1_ci(rows)}
    if rows[0]["kind"] == "snippets":
        sums = [float(sum(r[k] for r in rows)) for k in ("sn_tp", "sn_fp", "sn_fn", "sn_tn")]
        out.update(snippet_scores(*sums))
        return out
    out.update(aeb_aggregate([(r["aeb_tp"], r["aeb_fp"], r["aeb_fn"]) for r in rows]))
    for k in ("lcs_p", "lcs_r", "lcs_f1", "lcs_f05", "block_p", "block_r", "block_f1"):
        out[k] = float(np.mean([r[k] for r in rows]))
    nodes = [r["node_f1"] for r in rows if r.get("node_f1") is not None]
    if nodes:  # only pages with node-level gold (annotator labels) and extractors that answer with nodes
        out["node_f1"] = float(np.mean(nodes))
        out["node_pages"] = float(len(nodes))
    return out
