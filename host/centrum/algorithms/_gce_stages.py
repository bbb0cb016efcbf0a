"""Vectorized stages of GCE (Jung et al.): fixed-element removal, link density (eq. 1), the grid and its cell
exclusion (section 3.1), centroids and nearest low-link-density text (section 3.2), text-area density (eq. 2).

Everything here is O(n + m + k) or O(n log n) numpy over the pre-order snapshot; the expansion (Algorithm 1)
walks one ancestor path per centroid and lives in ``gce.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.snapshot import FIXED, Snapshot
from ..core.tree import cover_count


@dataclass
class Alive:
    """Elements and text nodes left after removing ``position: fixed`` subtrees (section 3: done first)."""

    element: np.ndarray  # bool (n,) not inside a fixed element
    visible: np.ndarray  # bool (n,) alive and rendered
    text: np.ndarray  # bool (m,) alive, owner visible, has a rendered area
    removed_roots: np.ndarray  # int ids of the fixed elements removed (outermost only)


def alive_mask(snapshot: Snapshot, remove_fixed: bool) -> Alive:
    fixed = (snapshot.flags & FIXED) != 0 if remove_fixed else np.zeros(snapshot.n, dtype=bool)
    cover = cover_count(snapshot, fixed)
    element = cover == 0
    visible = element & snapshot.visible
    text = visible[snapshot.text_owner] & (snapshot.text_area > 0) if snapshot.m else np.zeros(0, dtype=bool)
    roots = np.flatnonzero(fixed & (cover == 1))
    return Alive(element, visible, text, roots)


@dataclass
class LinkDensity:
    containers: np.ndarray  # int ids of the (outermost) link containers
    container_area: np.ndarray  # float (len(containers),)
    density: np.ndarray  # float (n,) D_l; NaN where eq. 1 is undefined (no link descendant, no area)
    dense: np.ndarray  # bool (n,) D_l > beta
    dense_areas: np.ndarray  # int ids of the maximal link-dense elements (no link-dense ancestor)
    high_text: np.ndarray  # bool (m,) text under a link-dense element


def link_density(snapshot: Snapshot, alive: Alive, word_text: np.ndarray, beta: float) -> LinkDensity:
    """Eq. 1: D_l(e) = A_l(e) / A(e) over visible elements with at least one link descendant.

    Link containers: start at every ``<a href>``, climb to the parent while the current node is that parent's only
    child and the parent has no text of its own (the single-child rule of section 3.1, applied recursively), never
    onto ``<body>``/``<html>``. The climb is pointer doubling, O(n log depth).

    Approximation (docs/algorithms/gce.md): A_l(e), the *union* area of the containers inside e, is the *sum*
    of their areas after dropping containers nested in another container; sibling containers whose boxes overlap
    are counted twice. An element that itself lies inside a container is all link (D_l = 1). Images inside a link
    count by area: a container's area is max(own box area, total area of its visible images).
    """
    n = snapshot.n
    parent = snapshot.parent
    area = np.where(alive.visible, snapshot.area, 0.0)
    link = snapshot.is_link & alive.element
    own_text = np.bincount(snapshot.text_owner[word_text], minlength=n)[:n] if snapshot.m else np.zeros(n, np.int64)
    stop = snapshot.tag_in(("body", "html"))
    par = np.where(parent >= 0, parent, 0)
    solo = (parent >= 0) & (snapshot.n_children[par] == 1) & (own_text[par] == 0) & ~stop[par]
    up = np.where(solo, par, np.arange(n))
    while True:  # pointer doubling to the top of each single-child chain
        nxt = up[up]
        if np.array_equal(nxt, up):
            break
        up = nxt
    tops = np.unique(up[link])
    if tops.size:
        ends = snapshot.subtree_end[tops]
        prev_end = np.concatenate([[-1], np.maximum.accumulate(ends)[:-1]])
        tops = tops[tops >= prev_end]  # drop containers nested in an earlier (enclosing) container
    image_area = snapshot.subtree_sum(np.where(snapshot.is_image, area, 0.0))
    c_area = np.maximum(area[tops], image_area[tops]) if tops.size else np.zeros(0)
    per_el = np.zeros(n)
    per_el[tops] = c_area
    a_l = snapshot.subtree_sum(per_el)
    in_container = cover_count(snapshot, tops) > 0
    link_below = snapshot.subtree_sum(link.astype(np.float64)) - link
    defined = alive.visible & (area > 0) & (link_below > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = np.where(in_container, 1.0, a_l / np.where(area > 0, area, 1.0))
    density = np.where(defined, d, np.nan)
    dense = defined & (d > beta)
    cover = cover_count(snapshot, dense)
    dense_areas = np.flatnonzero(dense & (cover == 1))
    high_text = cover[snapshot.text_owner] > 0 if snapshot.m else np.zeros(0, dtype=bool)
    return LinkDensity(tops, c_area, density, dense, dense_areas, high_text)


@dataclass
class Grid:
    rows: int
    cols: int
    cell_w: float
    cell_h: float
    centers: np.ndarray  # (rows*cols, 2)
    boxes: np.ndarray  # (rows*cols, 4)
    edge: np.ndarray  # bool
    link_coverage: np.ndarray  # fraction of the cell covered by link-dense areas
    link_dense: np.ndarray  # bool
    kept: np.ndarray  # bool


def grid(
    snapshot: Snapshot, dense_boxes: np.ndarray, rows: int, cols: int, alpha: float, edge_top: int,
    edge_bottom: int, edge_cols: int, coverage_limit: float,
) -> Grid:
    """Section 3.1: cells of w0/cols x h0/rows over the top of the document, N_row = ceil(min(α·h0, h1) / h_c)."""
    w0, h0 = snapshot.page.viewport
    h1 = snapshot.page.document[1]
    cell_w, cell_h = w0 / cols, h0 / rows
    n_rows = max(1, math.ceil(min(alpha * h0, max(h1, 1.0)) / cell_h - 1e-9))
    r, c = np.divmod(np.arange(n_rows * cols), cols)
    boxes = np.stack([c * cell_w, r * cell_h, np.full(r.shape, cell_w), np.full(r.shape, cell_h)], axis=1)
    centers = boxes[:, :2] + boxes[:, 2:] / 2
    edge = (r < edge_top) | (r >= n_rows - edge_bottom) | (c < edge_cols) | (c >= cols - edge_cols)
    coverage = _coverage(boxes, dense_boxes) / (cell_w * cell_h)
    link_dense = coverage > coverage_limit
    return Grid(n_rows, cols, cell_w, cell_h, centers, boxes, edge, coverage, link_dense, ~edge & ~link_dense)


def _coverage(cells: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Sum over boxes of the intersection area with each cell, chunked to bound memory (cells x boxes)."""
    out = np.zeros(cells.shape[0])
    if boxes.shape[0] == 0:
        return out
    cx0, cy0 = cells[:, 0:1], cells[:, 1:2]
    cx1, cy1 = cx0 + cells[:, 2:3], cy0 + cells[:, 3:4]
    step = max(1, 4_000_000 // max(1, cells.shape[0]))
    for s in range(0, boxes.shape[0], step):
        b = boxes[s : s + step]
        w = np.minimum(cx1, b[:, 0] + b[:, 2]) - np.maximum(cx0, b[:, 0])
        h = np.minimum(cy1, b[:, 1] + b[:, 3]) - np.maximum(cy0, b[:, 1])
        out += (np.clip(w, 0, None) * np.clip(h, 0, None)).sum(axis=1)
    return out


def nearest_text(snapshot: Snapshot, candidates: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each point, the candidate text node nearest to it (distance from the point to the closest of the text's
    line rectangles; 0 inside). Vectorized over all rectangles, reduced per text node with ``minimum.reduceat``.
    Returns (text ids, distances); -1 / inf when there is no candidate."""
    p = points.shape[0]
    none = np.full(p, -1, dtype=np.int64), np.full(p, np.inf)
    cand = np.flatnonzero(candidates)
    if cand.size == 0:
        return none
    off = snapshot.text_rect_offsets
    counts = (off[1:] - off[:-1])[cand]
    cand, counts = cand[counts > 0], counts[counts > 0]
    if cand.size == 0:
        return none
    starts = off[cand]
    # Rect indices of the candidates, contiguous per text node: start + 0..count-1.
    local = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    rid = np.repeat(starts, counts) + local
    r = snapshot.text_rects[rid]
    x0, y0, x1, y1 = r[:, 0:1], r[:, 1:2], (r[:, 0] + r[:, 2])[:, None], (r[:, 1] + r[:, 3])[:, None]
    px, py = points[:, 0][None, :], points[:, 1][None, :]
    dx = np.maximum(np.maximum(x0 - px, px - x1), 0.0)
    dy = np.maximum(np.maximum(y0 - py, py - y1), 0.0)
    dist = np.hypot(dx, dy)  # (rects, points)
    seg = np.concatenate([[0], np.cumsum(counts)[:-1]])
    per_text = np.minimum.reduceat(dist, seg, axis=0)  # (texts, points)
    best = np.argmin(per_text, axis=0)  # first in document order on ties
    return cand[best], per_text[best, np.arange(p)]


def text_area_density(snapshot: Snapshot, alive: Alive, low_text: np.ndarray) -> np.ndarray:
    """Eq. 2: D_t(e) = sum of the areas of the low-link-density text nodes inside e, over A(e) (0 without area)."""
    if snapshot.m == 0:
        return np.zeros(snapshot.n)
    per_text = np.where(low_text & alive.text, snapshot.text_area, 0.0)
    total = snapshot.subtree_sum(snapshot.text_per_element(per_text))
    area = snapshot.area
    with np.errstate(over="ignore", invalid="ignore"):  # hostile boxes near the float limit
        return np.where(area > 0, total / np.where(area > 0, area, 1.0), 0.0)
