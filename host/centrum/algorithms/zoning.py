"""HTML zoning (Rae, Kim, Le, Thoma, "Main Content Detection in HTML Journal Articles", DocEng '18).

Three named stages, each traced in ``debug``:

1. **zones** (section 3.1): the rendered page is cut at line breaks into a *zone tree*. Only elements with
   significant (visible, rendered) text take part. An element is *broken down* into child zones when a child is
   broken down, a child is a significant ``<br>``/``<hr>`` (significant text on both sides), it has two
   significant block children, or a significant block and a significant inline child. Each broken-down child and
   each significant block child becomes its own zone, runs of inline children (text nodes included) form one
   zone, significant line breaks cut those runs. Leaf zones hold no line break.
2. **columns** (section 3.2): the child zones of each zone are scanned in order and joined into a *column* while
   both ``|avgLeft - left|`` and ``|avgRight - right|`` stay within ``tolerance * avgWidth`` (averages over the
   zones already in the column); columns of the zones of a column are its children. Bottom-up, a child column
   whose edges equal its parent's within the tolerance is removed and its children lifted (collapse).
3. **labelling** (section 3.3): a leaf zone is a paragraph when it holds ``min_sentences`` sentences that pass the
   sentence test (:mod:`._zoning_sentences`); paragraphs score their word count, sums go up the zone tree and are
   normalized by the root, a column scores the sum over its zones. Greedily from the root, follow the child
   column with the highest score; every column on that path whose score exceeds its best child's by
   ``delta_threshold`` or more is main content (the first one covers the others). If no zone scores, the root is
   the answer.

Everything is vectorized over the pre-order arrays: classification with bincounts and prefix sums, the zone
segmentation as one lexsort + cumsum over (parent, document position) of the child items, sentence and token
counts of all leaf zones in one marked string, zone sums as element subtree sums, the collapse as one comparison
per column plus pointer jumping. Only the column scan over the later members of multi-zone sibling groups is a
Python loop (its running averages are sequential). O(n log n) in elements.

Deviations from the paper / public code, because we work on a live rendered snapshot:
- "significant text" is *rendered* text: a non-blank text node with a line rectangle of non-zero area whose
  owner is not hidden. An element is significant when it holds such text, even when its own box is empty (a
  float container of zero height would otherwise lose its article). Its zone box then falls back to the union of
  its text rectangles.
- displays the public code does not know (grid, flow-root, contents, ...) count as block; ``inline-*`` and
  ``ruby`` as inline.
- the answer is given as the DOM roots covering the column's zones (``nodes``: elements, and the parent element
  of a bare text zone) plus the exact text of those zones (``text``).
- when the greedy path has no delta >= threshold, the public code labels nothing; ``no_delta`` chooses between
  that ("none", default) and the path column with the largest delta ("max").

On an unstyled page every column is full width, so the collapse folds the whole column tree into the root and
the answer is the body; on styled pages the defaults find <main>. The figures behind the defaults (per data set,
per option, and timings) are in docs/algorithms/zoning.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..core.config import ranged
from ..core.result import Candidate, Result
from ..core.snapshot import Snapshot
from ..core.trace import Trace, debug_wanted, text_wanted
from ..core.tree import cover_count, covered, main_body, text_of_mask
from ._zoning_sentences import VERB_UNAVAILABLE, count_verb_sentences, load_tagger, segment_stats

# Debug lists are capped so that a 50k-element page still yields a small response.
_DEBUG_ZONES = 3000
_DEBUG_COLUMNS = 1000
_CANDIDATES = 100

# Public code (DisplayBlockFilter / DisplayInlineFilter): table-cell is inline, so a table row is one zone.
INLINE_DISPLAYS = frozenset({"inline", "inline-block", "inline-flex", "inline-table", "inline-grid", "table-cell",
                             "run-in", "ruby", "ruby-base", "ruby-text", "ruby-base-container",
                             "ruby-text-container"})
LINEBREAK_TAGS = ("br", "hr")

# Item kinds in the zone segmentation.
_SEP, _BLOCK, _INLINE = 0, 1, 2


@dataclass(frozen=True)
class Config:
    # Section 3.2: zones join a column when both edges are within 10% of the column's average width.
    tolerance: float = ranged(0.1, 0.0, 1.0)
    # Section 3.2: collapse parent/child columns that are equal within the tolerance.
    collapse: bool = True
    # Section 3.3: a column is main content when its score fraction exceeds its best child's by 0.3.
    delta_threshold: float = ranged(0.3, 0.0, 1.0)
    # Section 3.3: a paragraph zone holds at least two sentences with a verb.
    min_sentences: int = ranged(2, 0, 10_000)
    # Section 3.3 uses an English verb test ("verb", needs textblob-aptagger); "script" is the language-
    # independent stand-in (Unicode terminators, a sentence "has a verb" when it has >= min_sentence_words tokens).
    sentence_test: Literal["script", "verb"] = "script"
    # Stand-in for "has a verb" in the script test (not in the paper); measured on dev pages:
    # docs/algorithms/zoning.md.
    min_sentence_words: int = ranged(4, 0, 10_000)
    # Public code: <br>/<hr> split zones only when significant text stands on both sides of them.
    linebreak_needs_text: bool = True
    # Public code labels nothing when no column on the greedy path reaches the threshold ("none");
    # "max" takes the path column with the largest delta instead (not in the paper).
    no_delta: Literal["none", "max"] = "none"
    # Not in the paper: when opacity/visibility hide every text of the page (anti-flicker snippets waiting for a
    # script), ignore those two rules rather than answer "no text".
    reveal_hidden_page: bool = True


@dataclass
class _Zones:
    root_element: int
    parent: np.ndarray  # (z,) parent zone, -1 for the root zone 0; parent[z] < z
    element: np.ndarray  # (z,) element of a non-leaf zone (the broken-down element), -1 for leaf zones
    leaf: np.ndarray  # (z,) bool
    item_off: np.ndarray  # (z+1,) CSR into items
    items: np.ndarray  # element id >= 0, text node t as -(t+1)
    box: np.ndarray  # (z, 4) x, y, w, h
    group: np.ndarray  # (z,) element whose children the zone was cut from (-1 for the root zone)


def run(snapshot: Snapshot, config: Config | None = None) -> Result:
    cfg = config or Config()
    snap = snapshot
    tr = Trace("zoning")
    if snap.n == 0:
        return tr.result([], message="empty snapshot")
    # Stage 0: classify elements and text (hidden, significant, inline).
    cls = tr.stage("classify", _classify, snap, cfg)
    root = main_body(snap) or 0
    note_hidden = ""
    if not cls["sig"][root] and cfg.reveal_hidden_page:
        # Anti-flicker snippets hide <html>/<body> (opacity 0, visibility hidden) until a script runs; when that
        # hides every text of the page, the hiding is transient, not a statement about content.
        cls = tr.stage("classify", _classify, snap, cfg, reveal=True)
        note_hidden = "the whole page was hidden by opacity/visibility (anti-flicker?); treated as shown"
    if not cls["sig"][root]:
        tr.note("stages", ["classify"])
        tr.note("root_element", root)
        return tr.result([], message="no visible text on the page")
    # Stages 1-2: the zone tree, and its leaves labelled paragraph or not.
    zones = tr.stage("zones", _build_zones, snap, cls, root)
    words, paragraph, text_zone, note = tr.stage("labels", _label_leaves, snap, cls, zones, cfg)
    score = np.where(paragraph, words, 0).astype(np.float64)
    agg = _aggregate(snap, zones, score)
    total = float(agg[0])
    # Stage 3: columns, and the greedy walk down them.
    cols = tr.stage("columns", _build_columns, zones, cfg)
    if cfg.collapse:
        _collapse(cols, cfg)
    frac = _column_fractions(cols, agg, total)
    path, deltas, chosen = tr.stage("greedy", _greedy, cols, frac, cfg, total)
    if debug_wanted():  # the trace costs as much as the search on a large page: only when someone reads it
        tr.debug.update(_debug(zones, cols, frac, path, deltas, chosen, words, paragraph, agg, total, cfg))
        for z in tr.debug["zones"]:
            tr.overlay("region", f"zone {z['id']} score {tr.r(z['score'])}", box=z["box"])
        for c in tr.debug["columns"]:
            tr.overlay("candidate", f"column {c['id']}", c["fraction"], box=c["box"])
    candidates = _candidates(snap, zones, cols, frac, path, deltas, chosen)
    message = "; ".join(x for x in (note, note_hidden) if x)
    if chosen < 0:
        return tr.result([], candidates, message=(message + "; " if message else "")
                         + f"no column on the greedy path has delta >= {cfg.delta_threshold}")
    if total == 0:
        message = (message + "; " if message else "") + "no paragraph zone: the whole page is the answer"
    nodes = _cover(snap, zones, cols, chosen)
    tr.overlay("answer", f"column {chosen}", float(frac[chosen]), nodes=nodes)
    text = _column_text(snap, zones, cols, chosen, text_zone) if text_wanted() else None
    return tr.result(nodes, candidates, message=message, text=text)


# ---- stage 0: element classification (vectorized) ----------------------------------------------------------


def _classify(snap: Snapshot, cfg: Config, reveal: bool = False) -> dict[str, np.ndarray]:
    n, m = snap.n, snap.m
    box = snap.box
    body = main_body(snap) or 0
    body_right = float(box[body, 0] + box[body, 2]) if box[body, 2] > 0 else float(snap.page.document[0])
    # Public code, PreZoningClassification: hidden = visibility hidden, display none, opacity 0, off-screen, or
    # inside a hidden element.
    hidden_root = (
        (snap.display == "none")
        | ((snap.visibility != "visible") & (not reveal))
        | ((snap.opacity <= 0) & (not reveal))
        | (box[:, 0] + box[:, 2] < 0)
        | (box[:, 1] + box[:, 3] < 0)
        | (box[:, 0] > body_right)
    )
    hidden = covered(snap, hidden_root)

    # Significant text nodes: non-blank, rendered with area, owner shown.
    if m:
        blank = snap.text_blank
        tb = snap.text_box
        sig_text = (~blank) & (snap.text_area > 0) & ~hidden[snap.text_owner] & (tb[:, 0] + tb[:, 2] >= 0) \
            & (tb[:, 1] + tb[:, 3] >= 0)
    else:
        sig_text = np.zeros(0, dtype=bool)
    sig = snap.subtree_sum(snap.text_per_element(sig_text.astype(np.float64))) > 0

    is_lb = snap.tag_in(LINEBREAK_TAGS)
    inline = np.isin(snap.display, list(INLINE_DISPLAYS)) | np.char.startswith(snap.display.astype(str), "inline")
    block = ~inline
    sig_block = block & sig & ~is_lb
    sig_inline = inline & sig & ~is_lb

    # Significant line breaks: a significant-text sibling (element or text node) on each side, skipping other
    # line breaks. One lexsort over (parent, document position) of all such siblings.
    sig_lb = _significant_linebreaks(snap, sig & ~is_lb, sig_text, is_lb & ~hidden, cfg.linebreak_needs_text)

    parent = snap.parent
    has_p = parent >= 0
    cnt_block = np.bincount(parent[has_p & sig_block], minlength=n)
    cnt_inline = np.bincount(parent[has_p & sig_inline], minlength=n) \
        + np.bincount(snap.text_owner[sig_text], minlength=n)
    cnt_lb = np.bincount(parent[has_p & sig_lb], minlength=n)
    local = (cnt_lb > 0) | (cnt_block > 1) | ((cnt_block > 0) & (cnt_inline > 0))
    # BreakDownFilter: a child that breaks down makes its parent break down, so an element breaks down exactly
    # when its subtree contains an element with a local reason.
    breakdown = snap.subtree_sum(local.astype(np.float64)) > 0
    return {"hidden": hidden, "sig_text": sig_text, "sig": sig, "block": block, "is_lb": is_lb,
            "sig_lb": sig_lb, "breakdown": breakdown & sig}


def _significant_linebreaks(snap: Snapshot, sig_el: np.ndarray, sig_text: np.ndarray, lb: np.ndarray,
                            needs_text: bool) -> np.ndarray:
    n = snap.n
    out = np.zeros(n, dtype=bool)
    lb_idx = np.flatnonzero(lb & (snap.parent >= 0))
    if lb_idx.size == 0:
        return out
    if not needs_text:
        out[lb_idx] = True
        return out
    el = np.flatnonzero(sig_el & (snap.parent >= 0))
    tx = np.flatnonzero(sig_text)
    par = np.concatenate([snap.parent[el], snap.text_owner[tx], snap.parent[lb_idx]])
    # Document position among siblings: element c -> 2c, text with seq s -> 2s-1 (before element s).
    key = np.concatenate([2 * el, 2 * snap.text_seq[tx] - 1, 2 * lb_idx])
    is_sig = np.concatenate([np.ones(el.size + tx.size, dtype=np.int64), np.zeros(lb_idx.size, dtype=np.int64)])
    order = np.lexsort((key, par))
    par, is_sig = par[order], is_sig[order]
    csum = np.cumsum(is_sig)
    first = np.ones(par.size, dtype=bool)
    first[1:] = par[1:] != par[:-1]
    gstart = np.maximum.accumulate(np.where(first, np.arange(par.size), 0))
    gend = np.r_[np.flatnonzero(first)[1:], par.size] - 1
    gend_of = gend[np.cumsum(first) - 1]
    before = csum - is_sig - (csum[gstart] - is_sig[gstart])
    after = csum[gend_of] - csum
    is_lb_entry = np.concatenate([np.zeros(el.size + tx.size, dtype=bool), np.ones(lb_idx.size, dtype=bool)])[order]
    ids = np.concatenate([el, tx, lb_idx])[order]
    good = is_lb_entry & (before > 0) & (after > 0)
    out[ids[good]] = True
    return out


# ---- stage 1: zone tree (vectorized segmentation) ----------------------------------------------------------


def _build_zones(snap: Snapshot, cls: dict[str, np.ndarray], root: int) -> _Zones:
    n = snap.n
    end = snap.subtree_end
    breakdown, sig, sig_text = cls["breakdown"], cls["sig"], cls["sig_text"]
    in_root = np.zeros(n, dtype=bool)
    in_root[root:end[root]] = True
    # Elements whose children are cut into zones: the root (if it breaks down) and every breakdown element below
    # it (breakdown propagates upwards, so all their ancestors up to the root break down too).
    grp = breakdown & in_root
    grp[root] = bool(breakdown[root])
    parent = snap.parent
    pgrp = np.zeros(n, dtype=bool)
    has_p = parent >= 0
    pgrp[has_p] = grp[parent[has_p]]
    pgrp[root] = False
    el_items = np.flatnonzero(pgrp & in_root & ((sig & ~cls["is_lb"]) | cls["sig_lb"]))
    tx_items = np.flatnonzero(sig_text & grp[snap.text_owner]) if snap.m else np.zeros(0, dtype=np.int64)

    el_kind = np.where(cls["sig_lb"][el_items], _SEP,
                       np.where(breakdown[el_items] | cls["block"][el_items], _BLOCK, _INLINE))
    par = np.concatenate([parent[el_items], snap.text_owner[tx_items]])
    key = np.concatenate([2 * el_items, 2 * snap.text_seq[tx_items] - 1])
    kind = np.concatenate([el_kind, np.full(tx_items.size, _INLINE)])
    item = np.concatenate([el_items, -(tx_items + 1)])
    order = np.lexsort((key, par))
    par, kind, item = par[order], kind[order], item[order]

    # ZoneList: every block item starts a zone; an inline item starts one unless it continues an inline run of
    # the same parent; a significant line break only ends the run.
    new_group = np.ones(par.size, dtype=bool)
    new_group[1:] = par[1:] != par[:-1]
    prev_kind = np.r_[_SEP, kind[:-1]]
    start = (kind == _BLOCK) | ((kind == _INLINE) & (new_group | (prev_kind != _INLINE)))
    keep = kind != _SEP
    zone_of_item = np.cumsum(start)[keep]  # zone ids from 1; zone 0 is the root zone
    par, kind, item, start = par[keep], kind[keep], item[keep], start[keep]

    nz = int(zone_of_item[-1]) + 1 if zone_of_item.size else 1
    zstart = np.flatnonzero(start)
    item_off = np.zeros(nz + 1, dtype=np.int64)
    item_off[1:-1] = zstart
    item_off[-1] = item.size
    items = item
    first_item = item[zstart]
    zone_group = np.r_[-1, par[zstart]]
    # A zone is non-leaf exactly when it is one broken-down element (it is always alone in its zone).
    nonleaf_el = np.where(first_item >= 0, first_item, 0)
    z_nonleaf = (first_item >= 0) & breakdown[nonleaf_el] & (kind[zstart] == _BLOCK)
    element = np.r_[root if grp[root] else -1, np.where(z_nonleaf, first_item, -1)]
    leaf = element < 0
    if not grp[root] or item.size == 0:
        # The root does not break down: it is a single leaf zone holding the root element.
        item_off = np.array([0, 1], dtype=np.int64)
        items = np.array([root], dtype=np.int64)
        return _Zones(root, np.array([-1]), np.array([-1]), np.array([True]), item_off, items,
                      _item_boxes(snap, cls, items, np.array([0]), 1), np.array([-1]))
    # Root zone: its item is the root element (for the cover and the box).
    items = np.r_[root, items]
    item_off = item_off + 1
    item_off[0] = 0
    zone_of_el = np.full(n, -1, dtype=np.int64)
    zone_of_el[root] = 0
    nl = np.flatnonzero(~leaf)
    zone_of_el[element[nl]] = nl
    zparent = np.r_[-1, zone_of_el[zone_group[1:]]]
    item_zone = np.repeat(np.arange(nz), np.diff(item_off))
    box = _item_boxes(snap, cls, items, item_zone, nz)
    return _Zones(root, zparent, element, leaf, item_off, items, box, zone_group)


def _text_union_boxes(snap: Snapshot, sig_text: np.ndarray) -> np.ndarray:
    """Per element, (x0, y0, x1, y1) of the union of significant text boxes in its subtree (inf when none)."""
    n = snap.n
    lo = np.full((n, 2), np.inf)
    hi = np.full((n, 2), -np.inf)
    t = np.flatnonzero(sig_text)
    if t.size:
        tb = snap.text_box[t]
        own = snap.text_owner[t]
        np.minimum.at(lo, own, tb[:, :2])
        np.maximum.at(hi, own, tb[:, :2] + tb[:, 2:])
    # Deepest level first, each level folds into its parents (as Snapshot.subtree_end does).
    depth = snap.depth
    order = np.argsort(-depth, kind="stable")
    bounds = np.flatnonzero(np.diff(depth[order])) + 1
    for chunk in np.split(order, bounds):
        p = snap.parent[chunk]
        ok = p >= 0
        np.minimum.at(lo, p[ok], lo[chunk[ok]])
        np.maximum.at(hi, p[ok], hi[chunk[ok]])
    return np.concatenate([lo, hi], axis=1)


def _item_boxes(snap: Snapshot, cls: dict[str, np.ndarray], items: np.ndarray, item_zone: np.ndarray,
                nz: int) -> np.ndarray:
    """Zone boxes: union of item boxes; an element with an empty box uses its text rectangles instead."""
    x0 = np.empty(items.size)
    y0 = np.empty(items.size)
    x1 = np.empty(items.size)
    y1 = np.empty(items.size)
    is_el = items >= 0
    el = items[is_el]
    b = snap.box[el]
    empty = (b[:, 2] <= 0) | (b[:, 3] <= 0)
    if empty.any():
        tu = _text_union_boxes(snap, cls["sig_text"])[el[empty]]
        b = b.copy()
        b[empty] = np.c_[tu[:, :2], tu[:, 2:] - tu[:, :2]]
    x0[is_el], y0[is_el], x1[is_el], y1[is_el] = b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    t = -items[~is_el] - 1
    tb = snap.text_box[t]
    x0[~is_el], y0[~is_el], x1[~is_el], y1[~is_el] = tb[:, 0], tb[:, 1], tb[:, 0] + tb[:, 2], tb[:, 1] + tb[:, 3]
    out = np.zeros((nz, 4))
    lo_x = np.full(nz, np.inf)
    lo_y = np.full(nz, np.inf)
    hi_x = np.full(nz, -np.inf)
    hi_y = np.full(nz, -np.inf)
    np.minimum.at(lo_x, item_zone, x0)
    np.minimum.at(lo_y, item_zone, y0)
    np.maximum.at(hi_x, item_zone, x1)
    np.maximum.at(hi_y, item_zone, y1)
    ok = np.isfinite(lo_x) & np.isfinite(hi_x)
    out[ok] = np.c_[lo_x[ok], lo_y[ok], hi_x[ok] - lo_x[ok], hi_y[ok] - lo_y[ok]]
    return out


# ---- stage 3a: leaf zone labelling -------------------------------------------------------------------------


def _leaf_text_ids(snap: Snapshot, cls: dict[str, np.ndarray], zones: _Zones) -> np.ndarray:
    """Leaf zone of every text node (-1 when it is in none): element items paint their subtree range."""
    m = snap.m
    out = np.full(m, -1, dtype=np.int64)
    if m == 0:
        return out
    item_zone = np.repeat(np.arange(zones.leaf.size), np.diff(zones.item_off))
    in_leaf = zones.leaf[item_zone]
    items, iz = zones.items[in_leaf], item_zone[in_leaf]
    el, ez = items[items >= 0], iz[items >= 0]
    # Leaf element items are disjoint subtrees: a difference array paints each range with its zone id + 1.
    zone_el = cover_count(snap, el, weights=ez + 1).astype(np.int64) - 1
    out = zone_el[snap.text_owner]
    tx = -items[items < 0] - 1
    out[tx] = iz[items < 0]
    out[~cls["sig_text"]] = -1
    # Only a snapshot whose parents contradict pre-order (the validator cannot see that) paints overlapping ranges;
    # its sums are no zone ids. Such texts belong to no leaf zone rather than crash the run.
    bad = (out >= zones.leaf.size) | (out < -1)
    bad[~bad] = ~zones.leaf[np.maximum(out[~bad], 0)] & (out[~bad] >= 0)
    out[bad] = -1
    return out


def _label_leaves(snap: Snapshot, cls: dict[str, np.ndarray], zones: _Zones,
                  cfg: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Word counts and paragraph flags of the leaf zones (section 3.3); also each text node's leaf zone."""
    nz = zones.leaf.size
    text_zone = _leaf_text_ids(snap, cls, zones)
    has = np.flatnonzero(text_zone >= 0)
    words = np.zeros(nz, dtype=np.int64)
    paragraph = np.zeros(nz, dtype=bool)
    if has.size == 0:
        return words, paragraph, text_zone, ""
    order = has[np.argsort(text_zone[has], kind="stable")]  # by zone, then document order
    zs = text_zone[order]
    ends = np.r_[zs[1:] != zs[:-1], True]
    seg_zone = zs[ends]
    texts = snap.texts
    pieces = list(map(texts.__getitem__, order.tolist()))
    seg_words, long_sent, any_sent, seg_text = segment_stats(pieces, ends, cfg.min_sentence_words)
    words[seg_zone] = seg_words
    note = ""
    if cfg.sentence_test == "verb":
        tagger = load_tagger()
        if tagger is None:
            note = VERB_UNAVAILABLE
            paragraph[seg_zone] = long_sent >= cfg.min_sentences
        else:
            # Only zones with enough sentences at all can pass: tag just those.
            for k in np.flatnonzero(any_sent >= cfg.min_sentences):
                paragraph[seg_zone[k]] = count_verb_sentences(seg_text[k], tagger) >= cfg.min_sentences
    else:
        paragraph[seg_zone] = long_sent >= cfg.min_sentences
    return words, paragraph, text_zone, note


def _aggregate(snap: Snapshot, zones: _Zones, score: np.ndarray) -> np.ndarray:
    """Zone scores summed up the zone tree, via the element tree: each leaf's score sits on its first item's
    element (or the parent element of a text item), and a non-leaf zone is its element's subtree sum."""
    nz = zones.leaf.size
    if nz == 1:
        return score.astype(np.float64)
    first = zones.items[zones.item_off[:-1]]
    anchor = np.where(first >= 0, first, zones.group)
    on_el = np.zeros(snap.n, dtype=np.float64)
    lz = np.flatnonzero(zones.leaf)
    np.add.at(on_el, anchor[lz], score[lz])
    sums = snap.subtree_sum(on_el)
    agg = score.astype(np.float64).copy()
    nl = np.flatnonzero(~zones.leaf)
    agg[nl] = sums[zones.element[nl]]
    return agg


# ---- stage 2: column tree ----------------------------------------------------------------------------------


@dataclass
class _Columns:
    """Columns are contiguous zone ranges ``[start[c], stop[c])`` (siblings of one parent zone)."""

    start: np.ndarray
    stop: np.ndarray
    parent: np.ndarray  # parent column before collapse (-1 for the root column 0)
    left: np.ndarray  # average left / right / width over the column's zones
    right: np.ndarray
    width: np.ndarray
    alive: np.ndarray  # False: removed by the collapse
    up: np.ndarray  # parent column after collapse
    order: np.ndarray  # document position of the column (its first zone's first item), for sibling order


def _build_columns(zones: _Zones, cfg: Config) -> _Columns:
    """ColumnTreeBuilder: the child zones of each zone, scanned in order, join the current column while both edges
    are within tolerance * avgWidth of its running averages. Child zones of one zone are contiguous ids, so a column
    is a zone range; the first zone of a group always starts a column (vectorized), only the later members of
    multi-zone groups need the sequential running-average scan."""
    nz = zones.leaf.size
    left = zones.box[:, 0]
    right = zones.box[:, 0] + zones.box[:, 2]
    zp = zones.parent
    first = np.ones(nz, dtype=bool)
    first[2:] = zp[2:] != zp[1:-1]
    start = first.copy()
    multi = np.flatnonzero(~first)
    if multi.size:
        lft, rgt, tol = left.tolist(), right.tolist(), cfg.tolerance
        sl = sr = sw = 0.0
        k = 0
        prev = -2
        starts: list[int] = []
        # The hottest Python loop of the algorithm: comparisons as chained bounds (the same test as abs(d) <= t,
        # NaN included), each zone's edges read once.
        for z in multi.tolist():
            if z != prev + 1:
                # z - 1 is its group's first zone (not scanned): the current column is that zone alone.
                sl, sr, k = lft[z - 1], rgt[z - 1], 1
                sw = sr - sl
            t = tol * sw / k
            lz, rz = lft[z], rgt[z]
            dl, dr = sl / k - lz, sr / k - rz
            if -t <= dl <= t and -t <= dr <= t:
                sl += lz
                sr += rz
                sw += rz - lz
                k += 1
            else:
                starts.append(z)
                sl, sr, k = lz, rz, 1
                sw = sr - sl
            prev = z
        start[starts] = True
    col_of = np.cumsum(start) - 1
    cstart = np.flatnonzero(start)
    cstop = np.r_[cstart[1:], nz]
    nc = cstart.size
    cparent = np.where(zp[cstart] >= 0, col_of[np.maximum(zp[cstart], 0)], -1)
    cnt = (cstop - cstart).astype(np.float64)
    cl = np.add.reduceat(left, cstart) / cnt
    cr = np.add.reduceat(right, cstart) / cnt
    cw = np.add.reduceat(right - left, cstart) / cnt
    first_item = zones.items[zones.item_off[cstart]]
    pos = np.where(first_item >= 0, 2 * first_item, 2 * np.maximum(zones.group[cstart], 0) + 1)
    return _Columns(cstart, cstop, cparent, cl, cr, cw, np.ones(nc, dtype=bool), cparent.copy(), pos)


def _collapse(cols: _Columns, cfg: Config) -> None:
    """CollapseBranches (reverse breadth-first): a child column whose average edges equal its parent's within
    tolerance * the parent's average width is removed and its children take its place. Each column is compared
    once, with its original parent, before any lifting reaches that parent's list, so the test is one vectorized
    comparison; the surviving parent is then the nearest surviving ancestor (pointer jumping)."""
    p = cols.parent
    has = p >= 0
    pp = np.maximum(p, 0)
    tol = cfg.tolerance * cols.width[pp]
    removed = has & (np.abs(cols.left[pp] - cols.left) <= tol) & (np.abs(cols.right[pp] - cols.right) <= tol)
    up = p.copy()
    while True:
        jump = (up >= 0) & removed[np.maximum(up, 0)]
        if not jump.any():
            break
        up = np.where(jump, p[np.maximum(up, 0)], up)
    cols.alive = ~removed
    cols.up = up


def _children(cols: _Columns) -> tuple[np.ndarray, np.ndarray]:
    """CSR children of the surviving columns in document order (lifted children stand where their parent stood)."""
    nc = cols.start.size
    alive = np.flatnonzero(cols.alive & (cols.up >= 0))
    par = cols.up[alive]
    order = np.lexsort((cols.order[alive], par))
    kids = alive[order]
    off = np.zeros(nc + 1, dtype=np.int64)
    np.cumsum(np.bincount(par, minlength=nc), out=off[1:])
    return off, kids


def _column_fractions(cols: _Columns, agg: np.ndarray, total: float) -> np.ndarray:
    if total <= 0:
        return np.zeros(cols.start.size)
    return np.add.reduceat(agg, cols.start) / total


# ---- stage 3b: greedy delta search -------------------------------------------------------------------------


def _greedy(cols: _Columns, frac: np.ndarray, cfg: Config, total: float) -> tuple[list[int], list[float], int]:
    """ArticleContentScoreFractionWalker: from the root, follow the child with the highest fraction (the first in
    document order among equals); delta = own fraction - best child's (0 for a leaf column)."""
    off, kids = _children(cols)
    path = [0]
    deltas: list[float] = []
    while True:
        c = path[-1]
        ks = kids[off[c]:off[c + 1]]
        if ks.size == 0:
            deltas.append(float(frac[c]))
            break
        best = int(ks[int(np.argmax(frac[ks]))])
        deltas.append(float(frac[c] - frac[best]))
        path.append(best)
    if total <= 0:
        return path, deltas, 0  # ArticleContentLabeler: nothing scores -> the root column is the answer
    for c, d in zip(path, deltas, strict=True):
        if d >= cfg.delta_threshold:
            return path, deltas, c
    if cfg.no_delta == "max":
        return path, deltas, path[int(np.argmax(deltas))]
    return path, deltas, -1


# ---- output ------------------------------------------------------------------------------------------------


def _cover(snap: Snapshot, zones: _Zones, cols: _Columns, c: int) -> list[int]:
    """DOM roots covering the column's zones: their element items (a non-leaf zone's item is its element), the
    parent element for a text item; roots nested in an earlier root go (one sweep over pre-order ids)."""
    it = zones.items[zones.item_off[cols.start[c]]:zones.item_off[cols.stop[c]]]
    v = np.unique(np.where(it >= 0, it, snap.text_owner[np.maximum(-it - 1, 0)]))
    if v.size == 0:
        return []
    end = snap.subtree_end[v]
    reach = np.maximum.accumulate(end)
    keep = np.r_[True, v[1:] >= reach[:-1]]
    return [int(x) for x in v[keep]]


def _column_text(snap: Snapshot, zones: _Zones, cols: _Columns, c: int, text_zone: np.ndarray) -> str:
    """Exact text of the column: the text nodes of every leaf zone under its zones."""
    if snap.m == 0:
        return ""
    z = np.arange(cols.start[c], cols.stop[c])
    inside = covered(snap, zones.element[z])
    direct = np.zeros(zones.leaf.size + 1, dtype=bool)
    direct[z[zones.leaf[z]]] = True
    sel = (text_zone >= 0) & (inside[snap.text_owner] | direct[text_zone])
    # Significant text only (text_zone >= 0): it is rendered already; the joiner breaks lines between blocks.
    return text_of_mask(snap, sel, hidden=True)


def _box(b: np.ndarray) -> list[float]:
    return [round(float(v), 1) for v in b]


def _column_box(zones: _Zones, cols: _Columns, c: int) -> list[float]:
    b = zones.box[cols.start[c]:cols.stop[c]]
    top = float(b[:, 1].min())
    bottom = float((b[:, 1] + b[:, 3]).max())
    return [round(float(cols.left[c]), 1), round(top, 1), round(float(cols.right[c] - cols.left[c]), 1),
            round(bottom - top, 1)]


def _debug(zones: _Zones, cols: _Columns, frac: np.ndarray, path: list[int], deltas: list[float], chosen: int,
           words: np.ndarray, paragraph: np.ndarray, agg: np.ndarray, total: float, cfg: Config) -> dict[str, Any]:
    nz = zones.leaf.size
    first = zones.items[zones.item_off[:-1]]
    # The element to highlight for a zone: its own element, else its first element item, else its parent element.
    anchor = np.where(~zones.leaf, zones.element, np.where(first >= 0, first, zones.group))
    zlist = [
        {"id": z, "parent": int(zones.parent[z]), "box": _box(zones.box[z]), "leaf": bool(zones.leaf[z]),
         "element": int(anchor[z]), "words": int(words[z]), "paragraph": bool(paragraph[z]),
         "score": float(agg[z])}
        for z in range(min(nz, _DEBUG_ZONES))
    ]
    off, kids = _children(cols)
    alive = np.flatnonzero(cols.alive)
    clist = [
        {"id": int(c), "parent": int(cols.up[c]), "children": [int(k) for k in kids[off[c]:off[c + 1]]],
         "box": _column_box(zones, cols, int(c)), "zones": int(cols.stop[c] - cols.start[c]),
         "first_zone": int(cols.start[c]), "fraction": round(float(frac[c]), 6)}
        for c in alive[:_DEBUG_COLUMNS]
    ]
    return {
        "stages": ["classify", "zones", "columns", "collapse" if cfg.collapse else "no-collapse", "label", "search"],
        "root_element": zones.root_element,
        "zones": zlist,
        "zones_total": nz,
        "zones_trimmed": nz > _DEBUG_ZONES,
        "leaf_zones": int(zones.leaf.sum()),
        "paragraph_zones": int(paragraph.sum()),
        "total_score": total,
        "columns": clist,
        "columns_total": int(alive.size),
        "columns_trimmed": int(alive.size) > _DEBUG_COLUMNS,
        "columns_before_collapse": int(cols.start.size),
        "path": [{"column": c, "fraction": round(float(frac[c]), 6), "delta": round(d, 6),
                  "main": d >= cfg.delta_threshold} for c, d in zip(path, deltas, strict=True)],
        "chosen": chosen,
        "sentence_test": cfg.sentence_test,
    }


def _candidates(snap: Snapshot, zones: _Zones, cols: _Columns, frac: np.ndarray, path: list[int],
                deltas: list[float], chosen: int) -> list[Candidate]:
    on_path = dict(zip(path, deltas, strict=True))
    alive = np.flatnonzero(cols.alive & (frac > 0))
    # The path first, then the best-scoring other columns.
    rest = [int(c) for c in alive[np.argsort(-frac[alive], kind="stable")] if int(c) not in on_path]
    out = []
    for c in [*path, *rest][:_CANDIDATES]:
        label = f"column {c}" + (" (main)" if c == chosen else "") + (" on path" if c in on_path else "")
        feats = {"fraction": float(frac[c]), "zones": float(cols.stop[c] - cols.start[c])}
        if c in on_path:
            feats["delta"] = on_path[c]
        out.append(Candidate(_cover(snap, zones, cols, c), float(frac[c]), label, feats))
    return out
