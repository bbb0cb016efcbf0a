"""GCE: grid-centering-expanding (Jung, Han, Kim, Kim, Cha, "Don't read, just look: main content extraction from
web pages using visual features", arXiv:2110.14164), on the live snapshot.

Stages (each one's trace is in ``Result.debug`` under the same name, geometry in document coordinates):

1. ``removed``: elements with ``position: fixed`` and their subtrees are dropped (cookie banners, sticky bars).
2. ``links``: link containers and link density D_l (eq. 1); text under an element with D_l > β is
   high-link-density, the rest low-link-density.
3. ``grid``: cells of w0/cols x h0/rows over the first α·h0 of the document; edge cells and cells covered by
   link-dense areas are excluded (section 3.1).
4. ``centers``: C1 = centroid of the kept cells, C2 adds the window centre C_w, C3 adds C_w and the document centre
   C_d; E_n = the low-link-density text nearest to C_n (section 3.2).
5. ``rounds``: Algorithm 1 ascends from E_n towards ``<body>``; three rules each set a root once: the first
   ``<article>`` (tag), the first element whose attributes contain "article"/"content" (attr), the first width jump
   (diff). Among a round's roots the one with the highest text-area density D_t (eq. 2) that is not ``<body>`` and at
   least h0/2 tall is M_n,best, otherwise the densest non-body root is M_n,nobest (section 3.3).
6. ``winner``: the first of M3_best, M2_best, M1_best, M3_nobest, M2_nobest, M1_nobest; when every root is
   ``<body>``, the paper still returns a region: the best region each expansion held before it stopped at
   ``<body>`` (of the path's nodes below ``<body>``, the densest by D_t among those at least h0/2 tall, else the
   densest), M3's, then M2's, then M1's (``at_body="none"``: no result, as Centrum's GCE answered before).

Presets (``--param preset=paper|framework``): ``paper`` follows the paper's text (7 x 8 grid, α = 2, β = 0.5,
Δw = 170 %), ``framework`` the authors' public assessment framework (dreamwayjgs/main-content-extraction-assessment-
framework: 4 x 6 grid, coefficient 2, link ratio 0.5, width increase 1.3, dead zone = first row and outer columns,
expansion stops only on block elements, size jump ``cW > 2·gridW and (pW - cW > gridW or pW/cW > 1.3)``).
Fields given explicitly next to ``preset`` override the preset's values (``--param preset=framework rows=5``).

The default preset is ``framework``: on the dev pages it scored higher than ``paper``, and within each preset its own
width-jump mode scored higher (docs/algorithms/gce.md has the figures).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..core.config import ranged
from ..core.result import Candidate, Result
from ..core.snapshot import Snapshot
from ..core.trace import Trace, debug_wanted
from ..core.tree import main_body
from . import _gce_stages as st

# Block elements on which the framework lets an expansion stop (its ARTICLE_BLOCK_ELEMENTS list).
FRAMEWORK_BLOCK_TAGS = ("article", "blockquote", "details", "dialog", "div", "fieldset", "figure", "form", "main",
                        "section", "table", "body")

RULES = ("tag", "attr", "diff")
DEBUG_CAP = 300  # longest list kept in the debug trace (cells, link-dense areas); ``*_truncated`` says when cut


@dataclass(frozen=True)
class Config:
    """GCE parameters. Fields marked "preset" are None by default: they take the value of the chosen ``preset``
    (``Config.named(name)`` lists them all); a value given explicitly always wins over the preset."""

    # Named parameter set: "paper" (the paper's text) or "framework" (the authors' public code); "framework"
    # scored higher on the dev sets (docs/algorithms/gce.md), so it is the default.
    preset: Literal["paper", "framework"] = "framework"
    # preset. §3.1 grid: rows x cols cells per browser window (paper 7 x 8 at 1920 x 1080; framework 4 x 6).
    # Ranges (config.ranged, checked before any work): the grid has up to rows·α x cols cells, each compared with
    # every link-dense box, so rows, cols <= 32 and α <= 10 keep it at most ~10k cells.
    rows: int | None = ranged(None, 1, 32)
    cols: int | None = ranged(None, 1, 32)
    # preset. §3.1/§4.2 α: the grid covers min(α·h0, h1) of the document height. §4.2 prints α and β swapped;
    # Definition 2 requires α >= 1, so α = 2 (framework "gridCoef" 2).
    alpha: float | None = ranged(None, 1.0, 10.0)
    # preset. §3.1 eq. 1 β: an element with link density D_l > β is link-dense (0.5; framework "linkRatio" 0.5).
    beta: float | None = ranged(None, 0.0, 1.0)
    # §3.1 "cells overlapping link-dense areas" are excluded: a cell is excluded when the fraction of its area
    # covered by link-dense areas exceeds this (0 = any overlap, the literal reading; overlapping areas count twice,
    # so a value above 1 can still exclude a cell).
    cell_link_coverage: float = ranged(0.0, 0.0, 1000.0)
    # preset. §3.1 edge cells: rows excluded at the top, at the bottom, columns on each side (paper 1/1/1;
    # framework dead zone: first row and the outer columns, 1/0/1).
    edge_top: int | None = ranged(None, 0, 32)
    edge_bottom: int | None = ranged(None, 0, 32)
    edge_cols: int | None = ranged(None, 0, 32)
    # preset. §3.3 Δw: a width jump is parent width / child width > Δw (paper 170 % -> 1.7; framework 1.3).
    width_increase: float | None = ranged(None, 1.0, 100.0)
    # preset. §3.3: the text says the expansion *stops* at the jump (the child, "stop"); Algorithm 1 assigns the
    # wider *parent* ("parent"). Paper preset: Algorithm 1; framework: stop.
    width_jump_mode: Literal["stop", "parent"] | None = None
    # preset. Jump test: "ratio" = pW/cW > Δw (paper §3.3); "framework" = cW > 2·cell_w and (pW - cW > cell_w or
    # pW/cW > Δw).
    jump_rule: Literal["ratio", "framework"] | None = None
    # preset. Framework only (paper False): an expansion may stop only on ``block_tags``.
    block_only: bool | None = None
    block_tags: tuple[str, ...] = FRAMEWORK_BLOCK_TAGS
    # §3.3 M_attr: attribute values containing one of these (case-insensitive) mark the content root.
    attr_keywords: tuple[str, ...] = ("article", "content")
    # Attributes whose values are not names of the element's role (URLs, alt text, language) are not inspected.
    attr_ignore: tuple[str, ...] = ("href", "src", "alt", "lang", "dir", "hidden")
    # §3.3 eq. 2: a root shorter than this fraction of the window height h0 is "no best".
    min_height_ratio: float = ranged(0.5, 0.0, 100.0)
    # §3: elements with position: fixed (and their subtrees) are removed before everything else.
    remove_fixed: bool = True
    # When every root of every round is <body>: "region" returns the best region below <body> on the expansion
    # paths (the paper always returns a region); "none" returns no result (what the ensemble's models were trained
    # on: it reads such a page as one GCE does not answer).
    at_body: Literal["region", "none"] = "region"

    @classmethod
    def named(cls, name: str) -> Config:
        """The full config of preset ``name`` (every preset field filled in)."""
        if name not in PRESETS:
            raise ValueError(f"unknown GCE preset {name!r} (known: {', '.join(PRESETS)})")
        return dataclasses.replace(cls(), preset=name, **PRESETS[name])  # type: ignore[arg-type]


PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"rows": 7, "cols": 8, "alpha": 2.0, "beta": 0.5, "edge_top": 1, "edge_bottom": 1, "edge_cols": 1,
              "width_increase": 1.7, "width_jump_mode": "parent", "jump_rule": "ratio", "block_only": False},
    "framework": {"rows": 4, "cols": 6, "alpha": 2.0, "beta": 0.5, "edge_top": 1, "edge_bottom": 0, "edge_cols": 1,
                  "width_increase": 1.3, "width_jump_mode": "stop", "jump_rule": "framework", "block_only": True},
}


@dataclass(frozen=True)
class Settings:
    """A resolved config: the preset's values with the explicit fields applied (what ``run`` uses)."""

    preset: str
    rows: int
    cols: int
    alpha: float
    beta: float
    cell_link_coverage: float
    edge_top: int
    edge_bottom: int
    edge_cols: int
    width_increase: float
    width_jump_mode: str
    jump_rule: str
    block_only: bool
    block_tags: tuple[str, ...]
    attr_keywords: tuple[str, ...]
    attr_ignore: tuple[str, ...]
    min_height_ratio: float
    remove_fixed: bool
    at_body: str


def resolve(cfg: Config) -> Settings:
    """The preset's values, then every explicitly set (non-None) field of ``cfg`` on top."""
    # Field by field: dataclasses.asdict deep-copies every value, a measurable share of a small page's run.
    preset = Config.named(cfg.preset)
    values = {f.name: getattr(preset, f.name) for f in dataclasses.fields(Config)}
    values.update({f.name: v for f in dataclasses.fields(cfg) if (v := getattr(cfg, f.name)) is not None})
    return Settings(**values)


def _pt(p: np.ndarray | tuple[float, float]) -> list[float]:
    return [round(float(p[0]), 1), round(float(p[1]), 1)]


def _box(snapshot: Snapshot, i: int) -> list[float]:
    return [round(float(v), 1) for v in snapshot.box[i]]


def run(snapshot: Snapshot, config: Config | None = None) -> Result:
    cfg = resolve(config or Config())
    tr = Trace("gce", cap=DEBUG_CAP)
    tr.note("config", dataclasses.asdict(cfg))
    if snapshot.n == 0:
        return tr.result([], message="empty snapshot: no elements")
    body = main_body(snapshot) or 0  # without a <body> the root stands in
    w0, h0 = snapshot.page.viewport
    w1, h1 = snapshot.page.document
    c_w, c_d = np.array([w0 / 2, h0 / 2]), np.array([w1 / 2, h1 / 2])
    tr.note("C_w", _pt(c_w))
    tr.note("C_d", _pt(c_d))
    tr.note("body", body)

    # 1. position: fixed subtrees removed first.
    alive = tr.stage("removed", st.alive_mask, snapshot, cfg.remove_fixed, show=lambda a: _show_alive(tr, a))
    # 2. Link density (eq. 1) and low/high-link-density text.
    word = alive.text & (snapshot.text_len > 0) if snapshot.m else np.zeros(0, dtype=bool)
    links = tr.stage("links", st.link_density, snapshot, alive, word, cfg.beta,
                     show=lambda ld: _show_links(tr, snapshot, ld, word))
    low_text = word & ~links.high_text
    # 3. Grid and cell exclusion (section 3.1).
    g = tr.stage("grid", st.grid, snapshot, snapshot.box[links.dense_areas], cfg.rows, cfg.cols, cfg.alpha,
                 cfg.edge_top, cfg.edge_bottom, cfg.edge_cols, cfg.cell_link_coverage, show=lambda g: _show_grid(tr, g))
    # 4. Centroids and the nearest low-link-density text (section 3.2).
    notes: list[str] = []
    seeds = tr.stage("centering", _centre, tr, snapshot, g, c_w, c_d, word, low_text, notes)
    if seeds is None:
        tr.note("notes", notes)
        return tr.result([], message="no visible text on the page: nothing to centre on")
    # 5. Expanding (Algorithm 1) and the per-round choice (eq. 2).
    d_t = st.text_area_density(snapshot, alive, low_text)
    rounds, candidates = tr.stage("rounds", _rounds, tr, snapshot, seeds, body, cfg, g.cell_w, d_t, h0)
    tr.note("rounds", rounds)
    # 6. Final order: M3_best, M2_best, M1_best, M3_nobest, M2_nobest, M1_nobest.
    winner = _winner(rounds, cfg)
    if winner is None and cfg.at_body == "region":
        winner = _below_body(rounds)
        if winner is not None:
            candidates.append(Candidate([winner["node"]], float(d_t[winner["node"]]), f"M{winner['round']} below "
                                        "<body>", {"D_t": float(d_t[winner["node"]]), "round": float(winner["round"])}))
    tr.note("winner", winner)
    if notes or winner is None:
        tr.note("notes", notes)
    if debug_wanted():
        _overlays(tr, snapshot, alive, links, g, candidates, winner)
    if winner is None:
        return tr.result([], candidates, message="every expansion reached <body> (no <article>, content attribute "
                                                 "or width jump below it): GCE finds no main content on this page")
    if winner["kind"] == "below":
        return tr.result([winner["node"]], candidates, message="every expansion reached <body>: the answer is the "
                                                               "best region below it (" + winner["why"] + ")")
    return tr.result([winner["node"]], candidates)


def _show_alive(tr: Trace, alive: st.Alive) -> dict[str, Any]:
    return {"fixed_roots": tr.ids(alive.removed_roots), "elements": int((~alive.element).sum()),
            "fixed_roots_truncated": bool(alive.removed_roots.size > tr.cap)}


def _show_links(tr: Trace, snapshot: Snapshot, links: st.LinkDensity, word: np.ndarray) -> dict[str, Any]:
    return {
        "containers": int(links.containers.size),
        "container_nodes": tr.ids(links.containers),
        "link_dense_elements": int(links.dense.sum()),
        "link_dense_areas": [{"node": int(i), "box": _box(snapshot, int(i)), "D_l": tr.r(links.density[i])}
                             for i in links.dense_areas[:tr.cap]],
        "link_dense_areas_truncated": bool(links.dense_areas.size > tr.cap),
        "low_link_text_nodes": int((word & ~links.high_text).sum()),
        "high_link_text_nodes": int((word & links.high_text).sum()),
    }


def _show_grid(tr: Trace, g: st.Grid) -> dict[str, Any]:
    cells = []
    for k in range(min(g.kept.size, tr.cap)):
        reason = "edge" if g.edge[k] else ("link-dense" if g.link_dense[k] else "")
        cells.append({"row": k // g.cols, "col": k % g.cols, "box": [round(float(v), 1) for v in g.boxes[k]],
                      "kept": bool(g.kept[k]), "reason": reason, "link_coverage": tr.r(g.link_coverage[k])})
    return {"rows": g.rows, "cols": g.cols, "cell": [round(g.cell_w, 2), round(g.cell_h, 2)],
            "kept": int(g.kept.sum()), "cells": cells, "cells_truncated": bool(g.kept.size > tr.cap)}


def _centre(tr: Trace, snapshot: Snapshot, g: st.Grid, c_w: np.ndarray, c_d: np.ndarray, word: np.ndarray,
            low_text: np.ndarray, notes: list[str]) -> list[int] | None:
    """C1..C3 and the seeds E1..E3 (the owners of the nearest text); None when the page has no text at all."""
    v_a = g.centers[g.kept]
    k = v_a.shape[0]
    s = v_a.sum(axis=0)
    if k == 0:
        notes.append("no grid cell kept: C1 falls back to the window centre C_w")
    c1 = c_w if k == 0 else s / k
    centers = np.stack([c1, (s + c_w) / (k + 1), (s + c_w + c_d) / (k + 2)])
    pool = low_text
    if not low_text.any():
        if not word.any():
            return None
        notes.append("no low-link-density text: the nearest text of any link density is used")
        pool = word
    tids, dists = st.nearest_text(snapshot, pool, centers)
    seeds = [int(snapshot.text_owner[tid]) for tid in tids]
    for n, (tid, dist, seed) in enumerate(zip(tids, dists, seeds, strict=True)):
        tr.note(f"C{n + 1}", _pt(centers[n]))
        tr.note(f"E{n + 1}", {"node": seed, "text_node": int(tid), "distance": round(float(dist), 1),
                              "box": [round(float(v), 1) for v in snapshot.text_box[tid]],
                              "text": snapshot.texts[tid][:80]})
        tr.overlay("point", f"C{n + 1}", box=[centers[n][0] - 6, centers[n][1] - 6, 12, 12])
    return seeds


def _rounds(tr: Trace, snapshot: Snapshot, seeds: list[int], body: int, cfg: Settings, cell_w: float,
            d_t: np.ndarray, h0: float) -> tuple[list[dict[str, Any]], list[Candidate]]:
    """One expansion per seed (Algorithm 1), its three roots scored by D_t (eq. 2): M_n,best and M_n,nobest."""
    rounds: list[dict[str, Any]] = []
    candidates: list[Candidate] = []
    for n, seed in enumerate(seeds):
        roots, path = _expand(snapshot, seed, body, cfg, cell_w)
        info: dict[str, Any] = {"round": n + 1, "seed": seed, "roots": {},
                                "path": [{"node": i, "tag": str(snapshot.tags[i]),
                                          "width": round(float(snapshot.box[i, 2]), 1)} for i in path[:tr.cap]]}
        for rule, node in roots.items():
            height = float(snapshot.box[node, 3])
            is_body = node == body
            info["roots"][rule] = {"node": node, "D_t": round(float(d_t[node]), 5), "height": round(height, 1),
                                   "width": round(float(snapshot.box[node, 2]), 1), "body": is_body,
                                   "eligible": not is_body and height >= cfg.min_height_ratio * h0,
                                   "tag": str(snapshot.tags[node])}
        elig = [r for r in RULES if info["roots"][r]["eligible"]]
        short = [r for r in RULES if not info["roots"][r]["body"] and not info["roots"][r]["eligible"]]
        # max() keeps the first of equal densities, so ties go to tag, then attr, then diff.
        info["best"] = max(elig, key=lambda r: d_t[roots[r]]) if elig else None
        info["nobest"] = max(short, key=lambda r: d_t[roots[r]]) if short and not elig else None
        info["below"] = _best_on_path(snapshot, path, body, d_t, cfg.min_height_ratio * h0)
        rounds.append(info)
        for rule in RULES:
            r = info["roots"][rule]
            label = f"M{n + 1} {rule}" + (" best" if info["best"] == rule else
                                          " no-best" if info["nobest"] == rule else " <body>" if r["body"] else "")
            candidates.append(Candidate([roots[rule]], float(d_t[roots[rule]]), label,
                                        {"D_t": float(d_t[roots[rule]]), "round": float(n + 1), "height": r["height"],
                                         "width": r["width"], "eligible": float(r["eligible"]),
                                         "body": float(r["body"])}))
    return rounds, candidates


def _winner(rounds: list[dict[str, Any]], cfg: Settings) -> dict[str, Any] | None:
    for n, kind in [(n, "best") for n in (2, 1, 0)] + [(n, "nobest") for n in (2, 1, 0)]:
        rule = rounds[n][kind]
        if rule is None:
            continue
        why = (f"M{n + 1}_{kind.replace('nobest', 'no-best')}: the {rule} rule's root has the highest D_t "
               f"({rounds[n]['roots'][rule]['D_t']}) of round {n + 1}")
        if kind == "nobest":
            why += f"; no root of any round is both below <body> and at least {cfg.min_height_ratio:g}·h0 tall"
        return {"node": rounds[n]["roots"][rule]["node"], "round": n + 1, "rule": rule, "kind": kind, "why": why}
    return None


def _best_on_path(snapshot: Snapshot, path: list[int], body: int, d_t: np.ndarray, min_height: float
                  ) -> dict[str, Any] | None:
    """The region an expansion held before it stopped at ``<body>``: of the path's nodes below ``<body>`` the one
    with the highest D_t among those at least ``min_height`` tall (eq. 2's "best"), else the highest of all; the
    node nearer the seed wins a tie. None when the seed is ``<body>`` itself."""
    below = np.asarray([i for i in path if i != body], dtype=np.int64)
    if below.size == 0:
        return None
    tall = below[snapshot.box[below, 3] >= min_height]
    pool = tall if tall.size else below
    node = int(pool[int(np.argmax(d_t[pool]))])
    return {"node": node, "D_t": round(float(d_t[node]), 5), "tall": bool(tall.size),
            "tag": str(snapshot.tags[node])}


def _below_body(rounds: list[dict[str, Any]]) -> dict[str, Any] | None:
    """When every root is ``<body>``: the first round's best region below it in the order M3, M2, M1, tall ones
    (at least h0/2) before short ones."""
    order = [(n, tall) for tall in (True, False) for n in (2, 1, 0)]
    for n, tall in order:
        below = rounds[n]["below"]
        if below is not None and below["tall"] == tall:
            why = (f"M{n + 1}: the densest {'region at least h0/2 tall' if tall else 'region'} on its path below "
                   f"<body>, D_t {below['D_t']}")
            return {"node": below["node"], "round": n + 1, "rule": "path", "kind": "below", "why": why}
    return None


def _overlays(tr: Trace, snapshot: Snapshot, alive: st.Alive, links: st.LinkDensity, g: st.Grid,
              candidates: list[Candidate], winner: dict[str, Any] | None) -> None:
    for k in range(min(g.kept.size, tr.cap)):
        reason = "edge" if g.edge[k] else ("link-dense" if g.link_dense[k] else "")
        tr.overlay("region" if g.kept[k] else "removed", f"cell {k // g.cols},{k % g.cols}"
                   + ("" if g.kept[k] else f" excluded: {reason}"), box=g.boxes[k])
    for i in links.dense_areas[:tr.cap]:
        tr.overlay("removed", f"link-dense D_l={tr.r(links.density[i])}", nodes=[int(i)])
    for i in alive.removed_roots[:tr.cap]:
        tr.overlay("removed", "position: fixed", nodes=[int(i)])
    for key in ("C_w", "C_d"):
        x, y = tr.debug[key]
        tr.overlay("point", key, box=[x - 6, y - 6, 12, 12])
    for n in range(1, 4):
        seed = tr.debug.get(f"E{n}")
        if seed is not None:
            tr.overlay("point", f"E{n} (distance {seed['distance']})", nodes=[seed["node"]])
    for c in candidates:
        tr.overlay("candidate", c.label, c.score, nodes=c.nodes)
    if winner is not None:
        tr.overlay("answer", f"M{winner['round']} {winner['rule']} {winner['kind']}", nodes=[winner["node"]])


def _expand(snapshot: Snapshot, seed: int, body: int, cfg: Settings, cell_w: float) -> tuple[dict[str, int], list[int]]:
    """Algorithm 1: ascend from ``seed`` to ``body``; each rule is set once, by the first node that satisfies it;
    a rule that never fires leaves ``body``. Returns the roots and the path walked (seed first)."""
    path = []
    i = seed
    while i >= 0:
        path.append(i)
        if i == body:
            break
        i = int(snapshot.parent[i])
    if path[-1] != body:  # seed outside <body> (e.g. a frameset page): the path ends at the root
        path.append(body)
    tags = snapshot.tags
    width = snapshot.box[:, 2]
    out: dict[str, int] = {}
    keywords = tuple(k.lower() for k in cfg.attr_keywords)
    attr_tables = [v for name, v in snapshot.attrs.items() if name not in cfg.attr_ignore]
    last_width = 0.0  # width of the nearest non-zero-width node below (display: contents wrappers have none)
    for step, node in enumerate(path):
        if node == body:
            break
        stoppable = not cfg.block_only or str(tags[node]) in cfg.block_tags
        if stoppable and "tag" not in out and tags[node] == "article":
            out["tag"] = node
        if stoppable and "attr" not in out and any(
                k in t.get(node, "").lower() for t in attr_tables for k in keywords):
            out["attr"] = node
        cw = float(width[node]) or last_width
        last_width = cw
        par = path[step + 1]
        if stoppable and "diff" not in out and cw > 0:
            pw = float(width[par])
            if cfg.jump_rule == "ratio":
                jump = pw / cw > cfg.width_increase
            else:
                jump = cw > 2 * cell_w and (pw - cw > cell_w or pw / cw > cfg.width_increase)
            if jump:
                out["diff"] = par if cfg.width_jump_mode == "parent" else node
    return {r: out.get(r, body) for r in RULES}, path
