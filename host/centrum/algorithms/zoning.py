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

Everything up to the column scan is vectorized over the pre-order arrays: classification with bincounts and
prefix sums, the zone segmentation as one lexsort + cumsum over (parent, document position) of the child items.
The column scan and collapse are one pass over zones / columns each (the running averages make them
sequential), so the whole algorithm is O(n log n) in elements.

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

Measured (token F1 vs gold, see README "Zoning"): figures in the README section and the closing note of
issue #5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..result import Candidate, Result
from ..snapshot import Snapshot
from ..textmetrics import count_words_many
from ._zoning_sentences import sentence_counter

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
    tolerance: float = 0.1
    # Section 3.2: collapse parent/child columns that are equal within the tolerance.
    collapse: bool = True
    # Section 3.3: a column is main content when its score fraction exceeds its best child's by 0.3.
    delta_threshold: float = 0.3
    # Section 3.3: a paragraph zone holds at least two sentences with a verb.
    min_sentences: int = 2
    # Section 3.3 uses an English verb test ("verb", needs textblob-aptagger); "script" is the language-
    # independent stand-in (Unicode terminators, a sentence "has a verb" when it has >= min_sentence_words tokens).
    sentence_test: Literal["script", "verb"] = "script"
    # Stand-in for "has a verb" in the script test (not in the paper); measured on dev pages, see README.
    min_sentence_words: int = 4
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
    if snap.n == 0:
        return Result("zoning", [], message="empty snapshot")
    cls = _classify(snap, cfg)
    root = _root_element(snap)
    note_hidden = ""
    if not cls["sig"][root] and cfg.reveal_hidden_page:
        # Anti-flicker snippets hide <html>/<body> (opacity 0, visibility hidden) until a script runs; when that
        # hides every text of the page, the hiding is transient, not a statement about content.
        cls = _classify(snap, cfg, reveal=True)
        note_hidden = "the whole page was hidden by opacity/visibility (anti-flicker?); treated as shown"
    if not cls["sig"][root]:
        return Result("zoning", [], message="no visible text on the page",
                      debug={"stages": ["classify"], "root_element": root})
    zones = _build_zones(snap, cls, root)
    count, note = sentence_counter(cfg.sentence_test, cfg.min_sentence_words)
    words, paragraph, texts = _label_leaves(snap, cls, zones, count, cfg)
    score = np.where(paragraph, words, 0).astype(np.float64)
    agg = _aggregate(snap, zones, score)
    total = float(agg[0])
    columns = _build_columns(zones, cfg)
    if cfg.collapse:
        _collapse(columns, cfg)
    frac = _column_fractions(columns, agg, total)
    path, deltas, chosen = _greedy(columns, frac, cfg, total)
    debug = _debug(snap, zones, columns, frac, path, deltas, chosen, words, paragraph, agg, total, cfg)
    candidates = _candidates(snap, zones, columns, frac, path, deltas, chosen)
    message = "; ".join(x for x in (note, note_hidden) if x)
    if chosen < 0:
        return Result("zoning", [], candidates, debug,
                      message=(message + "; " if message else "")
                      + f"no column on the greedy path has delta >= {cfg.delta_threshold}")
    if total == 0:
        message = (message + "; " if message else "") + "no paragraph zone: the whole page is the answer"
    nodes = _cover(snap, zones, columns["zones"][chosen])
    text = _column_text(snap, cls, zones, columns["zones"][chosen], texts)
    return Result("zoning", nodes, candidates, debug, message=message, text=text)


# ---- stage 0: element classification (vectorized) ----------------------------------------------------------


def _root_element(snap: Snapshot) -> int:
    # The document's <body> is a child of <html>; a "body" elsewhere (inside an SVG, a template copy) is not.
    body = np.flatnonzero(snap.tags == "body")
    top = body[snap.parent[body] == 0] if body.size else body
    return int(top[0]) if top.size else int(body[0]) if body.size else 0


def _classify(snap: Snapshot, cfg: Config, reveal: bool = False) -> dict[str, np.ndarray]:
    n, m = snap.n, snap.m
    box = snap.box
    body = _root_element(snap)
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
    mark = np.zeros(n + 1, dtype=np.int64)
    np.add.at(mark, np.flatnonzero(hidden_root), 1)
    np.add.at(mark, snap.subtree_end[hidden_root], -1)
    hidden = np.cumsum(mark)[:n] > 0

    # Significant text nodes: non-blank, rendered with area, owner shown.
    if m:
        blank = np.fromiter((not t.strip() for t in snap.texts), dtype=bool, count=m)
        tb = snap.text_box
        sig_text = (~blank) & (snap.text_area > 0) & ~hidden[snap.text_owner] & (tb[:, 0] + tb[:, 2] >= 0) \
            & (tb[:, 1] + tb[:, 3] >= 0)
    else:
        sig_text = np.zeros(0, dtype=bool)
    sig = snap.subtree_sum(snap.text_per_element(sig_text.astype(np.float64))) > 0

    is_lb = np.isin(snap.tags, LINEBREAK_TAGS)
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
    n, m = snap.n, snap.m
    out = np.full(m, -1, dtype=np.int64)
    if m == 0:
        return out
    item_zone = np.repeat(np.arange(zones.leaf.size), np.diff(zones.item_off))
    in_leaf = zones.leaf[item_zone]
    items, iz = zones.items[in_leaf], item_zone[in_leaf]
    el, ez = items[items >= 0], iz[items >= 0]
    # Leaf element items are disjoint subtrees: a difference array paints each range with its zone id + 1.
    paint = np.zeros(n + 1, dtype=np.int64)
    np.add.at(paint, el, ez + 1)
    np.add.at(paint, snap.subtree_end[el], -(ez + 1))
    zone_el = np.cumsum(paint)[:n] - 1
    out = zone_el[snap.text_owner]
    tx = -items[items < 0] - 1
    out[tx] = iz[items < 0]
    out[~cls["sig_text"]] = -1
    return out


def _label_leaves(snap: Snapshot, cls: dict[str, np.ndarray], zones: _Zones, count: Any,
                  cfg: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nz = zones.leaf.size
    text_zone = _leaf_text_ids(snap, cls, zones)
    has = np.flatnonzero(text_zone >= 0)
    words = np.zeros(nz, dtype=np.int64)
    paragraph = np.zeros(nz, dtype=bool)
    if has.size == 0:
        return words, paragraph, text_zone
    w = count_words_many([snap.texts[t] for t in has])
    words = np.bincount(text_zone[has], weights=w, minlength=nz).astype(np.int64)
    # Sentence tests per leaf zone on its joined text (text nodes in document order within the zone).
    order = has[np.argsort(text_zone[has], kind="stable")]
    zs = text_zone[order]
    cuts = np.flatnonzero(np.diff(zs)) + 1
    texts = snap.texts
    for chunk in np.split(order, cuts):
        z = int(text_zone[chunk[0]])
        if words[z] == 0:
            continue
        joined = " ".join(" ".join(texts[t].split()) for t in chunk)
        paragraph[z] = count(joined) >= cfg.min_sentences
    return words, paragraph, text_zone


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


def _build_columns(zones: _Zones, cfg: Config) -> dict[str, Any]:
    """ColumnTreeBuilder: the child zones of each zone of a column, scanned in order, join the current child
    column while both edges are within tolerance of its running averages. Zone ids are parent-before-child and
    siblings are contiguous, so one pass over zones suffices."""
    nz = zones.leaf.size
    left = zones.box[:, 0].tolist()
    right = (zones.box[:, 0] + zones.box[:, 2]).tolist()
    zparent = zones.parent.tolist()
    tol = cfg.tolerance
    col_of = [0] * nz
    c_parent = [-1]
    c_zones: list[list[int]] = [[0]]
    c_sum = [[left[0], right[0], right[0] - left[0]]]
    cur = -1
    for z in range(1, nz):
        p = zparent[z]
        if z == 1 or zparent[z - 1] != p:
            cur = -1  # grouping restarts for each parent zone
        if cur >= 0:
            s = c_sum[cur]
            k = len(c_zones[cur])
            t = tol * s[2] / k
            if abs(s[0] / k - left[z]) <= t and abs(s[1] / k - right[z]) <= t:
                c_zones[cur].append(z)
                s[0] += left[z]
                s[1] += right[z]
                s[2] += right[z] - left[z]
                col_of[z] = cur
                continue
        cur = len(c_zones)
        c_parent.append(col_of[p])
        c_zones.append([z])
        c_sum.append([left[z], right[z], right[z] - left[z]])
        col_of[z] = cur
    nc = len(c_zones)
    children: list[list[int]] = [[] for _ in range(nc)]
    for c in range(1, nc):
        children[c_parent[c]].append(c)
    avg = [(s[0] / len(zs), s[1] / len(zs), s[2] / len(zs)) for s, zs in zip(c_sum, c_zones, strict=True)]
    return {"parent": c_parent, "zones": c_zones, "children": children, "avg": avg,
            "alive": [True] * nc, "col_of_zone": col_of}


def _collapse(columns: dict[str, Any], cfg: Config) -> None:
    """CollapseBranches, visited in reverse breadth-first order: a child column whose average edges equal its
    parent's within tolerance * parent's average width is removed and its children take its place."""
    parent, children, avg, alive = columns["parent"], columns["children"], columns["avg"], columns["alive"]
    nc = len(parent)
    depth = [0] * nc
    for c in range(1, nc):  # parent < child
        depth[c] = depth[parent[c]] + 1
    bfs = sorted(range(nc), key=lambda c: (depth[c], c))
    for p in reversed(bfs):
        pl, pr, pw = avg[p]
        t = cfg.tolerance * pw
        new: list[int] = []
        for c in children[p]:
            cl, cr, _ = avg[c]
            if abs(pl - cl) <= t and abs(pr - cr) <= t:
                alive[c] = False
                for g in children[c]:
                    parent[g] = p
                new.extend(children[c])
            else:
                new.append(c)
        children[p] = new


def _column_fractions(columns: dict[str, Any], agg: np.ndarray, total: float) -> list[float]:
    if total <= 0:
        return [0.0] * len(columns["zones"])
    return [float(agg[zs].sum()) / total for zs in columns["zones"]]


# ---- stage 3b: greedy delta search -------------------------------------------------------------------------


def _greedy(columns: dict[str, Any], frac: list[float], cfg: Config,
            total: float) -> tuple[list[int], list[float], int]:
    children = columns["children"]
    path = [0]
    deltas: list[float] = []
    while True:
        c = path[-1]
        kids = children[c]
        best = max(kids, key=lambda k: (frac[k], -k)) if kids else -1
        deltas.append(frac[c] - (frac[best] if best >= 0 else 0.0))
        if best < 0:
            break
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


def _cover(snap: Snapshot, zones: _Zones, zlist: list[int]) -> list[int]:
    """DOM roots covering the zones: elements of the zones, the parent element for a text item; nested ones go."""
    nodes: set[int] = set()
    for z in zlist:
        if not zones.leaf[z]:
            nodes.add(int(zones.element[z]))
            continue
        for it in zones.items[zones.item_off[z]:zones.item_off[z + 1]]:
            nodes.add(int(it) if it >= 0 else int(snap.text_owner[-it - 1]))
    out: list[int] = []
    end = snap.subtree_end
    limit = -1
    for v in sorted(nodes):
        if v < limit:
            continue  # inside the previous kept root
        out.append(v)
        limit = int(end[v])
    return out


def _column_text(snap: Snapshot, cls: dict[str, np.ndarray], zones: _Zones, zlist: list[int],
                 text_zone: np.ndarray) -> str:
    """Exact text of the column's zones: text nodes of every leaf zone under them, zones joined by newlines."""
    if snap.m == 0:
        return ""
    # Leaf zones under the column's zones: a leaf is under zone z when its parent chain reaches z; with
    # parent < child ids and subtree ranges on elements, test via the element tree.
    mask = np.zeros(snap.n + 1, dtype=np.int64)
    direct: set[int] = set()
    for z in zlist:
        if zones.leaf[z]:
            direct.add(z)
        else:
            e = int(zones.element[z])
            mask[e] += 1
            mask[int(snap.subtree_end[e])] -= 1
    inside = np.cumsum(mask)[: snap.n] > 0
    sel = (text_zone >= 0) & (inside[snap.text_owner] | np.isin(text_zone, list(direct)))
    idx = np.flatnonzero(sel)
    parts: list[str] = []
    last = -2
    for t in idx:
        z = int(text_zone[t])
        s = " ".join(snap.texts[t].split())
        if parts:
            parts.append("\n" if z != last else " ")
        parts.append(s)
        last = z
    return "".join(parts).strip()


def _box(b: np.ndarray) -> list[float]:
    return [round(float(v), 1) for v in b]


def _column_box(zones: _Zones, zlist: list[int], avg: tuple[float, float, float]) -> list[float]:
    b = zones.box[zlist]
    top = float(b[:, 1].min())
    bottom = float((b[:, 1] + b[:, 3]).max())
    return [round(avg[0], 1), round(top, 1), round(avg[1] - avg[0], 1), round(bottom - top, 1)]


def _debug(snap: Snapshot, zones: _Zones, columns: dict[str, Any], frac: list[float], path: list[int],
           deltas: list[float], chosen: int, words: np.ndarray, paragraph: np.ndarray, agg: np.ndarray,
           total: float, cfg: Config) -> dict[str, Any]:
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
    alive = [c for c, a in enumerate(columns["alive"]) if a]
    clist = [
        {"id": c, "parent": columns["parent"][c], "children": list(columns["children"][c]),
         "box": _column_box(zones, columns["zones"][c], columns["avg"][c]), "zones": len(columns["zones"][c]),
         "fraction": round(frac[c], 6)}
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
        "columns_total": len(alive),
        "columns_trimmed": len(alive) > _DEBUG_COLUMNS,
        "columns_before_collapse": len(columns["alive"]),
        "path": [{"column": c, "fraction": round(frac[c], 6), "delta": round(d, 6),
                  "main": d >= cfg.delta_threshold} for c, d in zip(path, deltas, strict=True)],
        "chosen": chosen,
        "sentence_test": cfg.sentence_test,
    }


def _candidates(snap: Snapshot, zones: _Zones, columns: dict[str, Any], frac: list[float], path: list[int],
                deltas: list[float], chosen: int) -> list[Candidate]:
    on_path = dict(zip(path, deltas, strict=True))
    alive = [c for c, a in enumerate(columns["alive"]) if a]
    # The path first, then the best-scoring other columns.
    rest = sorted((c for c in alive if c not in on_path and frac[c] > 0), key=lambda c: -frac[c])
    out = []
    for c in [*path, *rest][:_CANDIDATES]:
        label = f"column {c}" + (" (main)" if c == chosen else "") + (" on path" if c in on_path else "")
        feats = {"fraction": frac[c], "zones": float(len(columns["zones"][c]))}
        if c in on_path:
            feats["delta"] = on_path[c]
        out.append(Candidate(_cover(snap, zones, columns["zones"][c]), frac[c], label, feats))
    return out
