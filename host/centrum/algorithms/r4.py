"""R4 ranking (Alarte & Silva, "Page-Level Main Content Extraction from Heterogeneous Webpages", 2020).

Every *rated* DOM node (section 3.1) becomes a point in R^4 — word ratio, hyperlink ratio, children ratio,
position ratio — the four coordinates are standardized (z-scores), and the ``c`` points farthest from the
centroid form the c-SET (section 3.2-3.3). The c-SET is reduced (Algorithm 3: a node whose c-SET ancestor has
exactly the same text goes), the node with the best words/tags ratio is selected together with its c-SET
siblings (Algorithm 4), and link groups and link-only lists are removed from the selection (Algorithm 5).

Unlike the paper's O(n^2) add-on, every stage here is vectorized over the pre-order arrays of the snapshot:
subtree aggregates are prefix sums over ``[i, subtree_end[i])``; the word ratio, whose distance weight
``1 / (depth(owner(k)) - depth(n) + 1)`` is not a prefix sum, is computed per distinct text depth ``D`` as
``sum_D W_n(D) / (D - depth(n) + 1)`` with ``W_n(D)`` from one prefix sum over the texts of depth ``D``:
O((m + r) * H) for m text nodes, r rated nodes and H distinct text depths (H <= tree height, ~20-40 on real
pages), which is linear for a bounded height (timings in docs/algorithms/r4.md).

Deviations from the paper, all because we score the *rendered* page rather than its source:
- only rendered text counts (text nodes with at least one line rectangle) and only *shown* elements (an element
  that has, or has a descendant with, a layout box) are rated, so hidden menus and templates never win;
- words are counted with :mod:`centrum.core.textmetrics` (CJK/Thai one word per character), so the word ratio works
  on unspaced scripts;
- the post-processed selection is reported as the set of maximal kept subtrees (``nodes``) plus the exact kept
  text (``text``), because a removed link group inside the selected node cannot be expressed as one node.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.config import ranged
from ..core.result import Candidate, Result
from ..core.snapshot import IMAGE, Snapshot
from ..core.trace import Trace, debug_wanted, text_wanted
from ..core.tree import cover_count, covered, main_body, text_of_mask

# Debug lists are capped so that a 50k-element page still yields a small response.
_DEBUG_CAP = 1000
_CANDIDATE_CAP = 50


@dataclass(frozen=True)
class Config:
    """R4 parameters, paper defaults; the effect of each option on the dev sets is in docs/algorithms/r4.md."""

    # Section 3.3: the size of the c-SET, "c = 3" in the paper's experiments.
    c: int = ranged(3, 1, 10_000)
    # Section 3.1: tags that are never rated (the paper's list; "undefined" is its name for unknown nodes).
    excluded_tags: tuple[str, ...] = (
        "a", "nav", "undefined", "hr", "span", "em", "body", "script", "header",
        "h1", "h2", "h3", "h4", "h5", "br", "iframe",
    )
    # Section 3.5 (Algorithm 5): a link group is removed when its text ratio (words inside links / words
    # outside links) exceeds tr and it holds more than hr links.
    tr: float = ranged(1.5, 0.0, 1e6)
    hr: int = ranged(7, 0, 10_000_000)
    # Section 3.5 (Algorithm 5): remove lists whose items each hold a single link and no image.
    remove_link_lists: bool = True
    # Section 3.5: the post-process can be switched off to see the raw selection.
    postprocess: bool = True
    # Section 3.1: the body-children rule (page depth from BODY < number of BODY's rated children).
    body_children_rule: bool = True
    # Section 3.2 (positionRatio): depth counted in rated tags from BODY, as the body-children rule counts the
    # page depth; False counts plain DOM levels below BODY.
    rated_depth: bool = True
    # Rendered page (our deviation, see module docstring): ignore text without line boxes and elements with
    # nothing shown. False scores every node like the paper's source-level add-on.
    visible_only: bool = True


def _subtree_sum(snapshot: Snapshot, values: np.ndarray) -> np.ndarray:
    return snapshot.subtree_sum(values.astype(np.float64))


def _word_ratio(snapshot: Snapshot, nodes: np.ndarray, owner_words: np.ndarray) -> np.ndarray:
    """wordRatio(n) = sum over counted text leaves k under n of words(k) / distance(k, n), for ``nodes``.

    distance(k, n) = depth(owner(k)) - depth(n) + 1 (a text node is one level below its owner). Grouping the
    words by owner depth D turns it into sum_D W_n(D) / (D - depth(n) + 1), where W_n(D), the words owned at
    depth D inside n's subtree, is one prefix-sum lookup per depth: O(n * H) for H distinct text depths.
    """
    out = np.zeros(nodes.shape[0], dtype=np.float64)
    if nodes.size == 0 or not (owner_words > 0).any():
        return out
    depth = snapshot.depth
    end = snapshot.subtree_end
    dn = depth[nodes]
    a, b = nodes, end[nodes]
    c = np.zeros(owner_words.shape[0] + 1)
    for d in np.unique(depth[owner_words > 0]):
        np.cumsum(np.where(depth == d, owner_words, 0.0), out=c[1:])
        # Words owned at depth d lie below nodes of depth <= d only, so the denominator is >= 1 wherever the
        # difference is non-zero; the maximum only avoids dividing by zero for deeper nodes.
        out += (c[b] - c[a]) / np.maximum(d - dn + 1, 1)
    return out


def _zscore(x: np.ndarray) -> np.ndarray:
    """Standardize each column; a constant column carries no information and becomes 0."""
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    safe = np.where(std > 0, std, 1.0)
    return np.where(std > 0, (x - mean) / safe, 0.0)


def in_body_text(snapshot: Snapshot, body: int, rendered: np.ndarray) -> np.ndarray:
    owner = snapshot.text_owner
    return (owner >= body) & (owner < snapshot.subtree_end[body]) & rendered


def _tag_in(snapshot: Snapshot, names: tuple[str, ...]) -> np.ndarray:
    """Elements whose tag is one of ``names``, compared on the integer tag codes."""
    codes = [k for k, t in enumerate(snapshot.tag_names) if t in names]
    return np.isin(snapshot.tag_code, codes)


def _text(snapshot: Snapshot, mask: np.ndarray) -> str | None:
    # ``mask`` already says which text is rendered (all of it when scoring the DOM without layout). None when the
    # caller reads nodes only (the ensemble).
    return text_of_mask(snapshot, mask, hidden=True) if text_wanted() else None


def _r(x: float) -> float:
    return round(float(x), 4)


def visible_text_counts(snapshot: Snapshot) -> np.ndarray:
    """Per element, the number of rendered non-blank text nodes in its subtree."""
    if snapshot.m == 0:
        return np.zeros(snapshot.n)
    rendered = np.diff(snapshot.text_rect_offsets) > 0
    nonblank = ~snapshot.text_blank
    return snapshot.subtree_sum(snapshot.text_per_element((rendered & nonblank).astype(np.float64)))


def reduce_cset(
    snapshot: Snapshot, cset: list[int], text_counts: np.ndarray | None = None
) -> tuple[list[int], list[dict[str, int]]]:
    """Algorithm 3: drop a c-SET node whose ancestor in the c-SET has exactly the same text.

    A descendant's text nodes are a subset of its ancestor's, so the texts are equal exactly when both hold the
    same number of non-blank text nodes: an O(1) test instead of comparing two page-long strings.
    """
    counts = visible_text_counts(snapshot) if text_counts is None else text_counts
    dropped = []
    for d in cset:
        for a in cset:
            if a != d and snapshot.is_ancestor(a, d) and counts[a] == counts[d]:
                dropped.append({"node": d, "ancestor": a})
                break
    gone = {e["node"] for e in dropped}
    return [x for x in cset if x not in gone], dropped


def select(snapshot: Snapshot, reduced: list[int], words_tags: np.ndarray) -> tuple[list[int], list[int]]:
    """Algorithm 4: the node(s) with the best words/tags ratio (ties select all) plus their c-SET siblings.

    Returns ``(best, chosen)``; ``chosen`` keeps c-SET order and drops a node inside another chosen node.
    """
    if not reduced:
        return [], []
    scores = np.array([words_tags[x] for x in reduced], dtype=np.float64)
    top = scores.max()
    best = [x for x, s in zip(reduced, scores, strict=True) if np.isclose(s, top, rtol=1e-9, atol=0.0)]
    best_parents = {int(snapshot.parent[x]) for x in best}
    picked = [x for x in reduced if x in best or int(snapshot.parent[x]) in best_parents]
    chosen = [x for x in picked if not any(y != x and snapshot.is_ancestor(y, x) for y in picked)]
    return best, chosen


@dataclass
class _Page:
    """Per-element aggregates over the pre-order arrays (prefix sums over each subtree's range)."""

    shown: np.ndarray  # element or a descendant has a layout box (all True when not visible_only)
    rendered: np.ndarray  # per text node: has line rectangles (all True when not visible_only)
    nonblank: np.ndarray  # per text node: rendered and not blank
    words_el: np.ndarray  # words in the subtree
    link_words_el: np.ndarray  # words inside links in the subtree
    free_words: np.ndarray  # per element: words it owns outside links (the word ratio counts these)
    links_el: np.ndarray
    images_el: np.ndarray
    tags_el: np.ndarray  # elements in the subtree, itself included
    child_nodes: np.ndarray  # shown element children plus non-blank text children


def _aggregates(snapshot: Snapshot, cfg: Config) -> _Page:
    n, m = snapshot.n, snapshot.m
    shown = _subtree_sum(snapshot, snapshot.visible) > 0 if cfg.visible_only else np.ones(n, dtype=bool)
    rendered = np.diff(snapshot.text_rect_offsets) > 0 if cfg.visible_only else np.ones(m, dtype=bool)
    nonblank = ~snapshot.text_blank & rendered
    # Token counts are shared by every algorithm through the snapshot; only rendered, non-blank text counts here.
    words = np.where(nonblank, snapshot.text_words, 0).astype(np.float64) if m else np.zeros(0)
    is_link = snapshot.is_link & shown
    in_link_text = covered(snapshot, np.nonzero(is_link)[0])[snapshot.text_owner] if m else np.zeros(0, dtype=bool)
    per_el = snapshot.text_per_element
    text_children = np.bincount(snapshot.text_owner[nonblank], minlength=n)[:n] if m else np.zeros(n, np.int64)
    shown_children = np.bincount(snapshot.parent[1:][shown[1:]], minlength=n)[:n] if n > 1 else np.zeros(n, np.int64)
    return _Page(
        shown, rendered, nonblank,
        words_el=_subtree_sum(snapshot, per_el(words)) if m else np.zeros(n),
        link_words_el=_subtree_sum(snapshot, per_el(words * in_link_text)) if m else np.zeros(n),
        free_words=per_el(words * ~in_link_text) if m else np.zeros(n),
        links_el=_subtree_sum(snapshot, is_link),
        images_el=_subtree_sum(snapshot, ((snapshot.flags & IMAGE) != 0) & shown),
        tags_el=(snapshot.subtree_end - np.arange(n)).astype(np.float64),
        child_nodes=shown_children + text_children,
    )


def run(snapshot: Snapshot, config: Config | None = None) -> Result:
    cfg = config or Config()
    tr = Trace("r4", cap=_DEBUG_CAP)
    if snapshot.n == 0:
        return tr.result([], message="empty snapshot")
    # Region: the top document's BODY.
    body = main_body(snapshot)
    if body is None:
        return tr.result([], message="no <body> element (frameset or non-HTML document)")
    pg = tr.stage("aggregates", _aggregates, snapshot, cfg)
    # Rated nodes (section 3.1): non-leaf, not an excluded tag, inside BODY.
    in_body = np.zeros(snapshot.n, dtype=bool)
    in_body[body + 1: snapshot.subtree_end[body]] = True
    rated = np.nonzero(in_body & pg.shown & (pg.child_nodes > 0) & ~_tag_in(snapshot, cfg.excluded_tags))[0]
    if rated.size == 0:
        return _no_rated(tr, snapshot, cfg, pg, body)
    rdepth = cover_count(snapshot, rated)  # rated ancestors-or-self of every element
    page_depth, body_children = int(rdepth[rated].max()), int(np.count_nonzero(snapshot.parent[rated] == body))
    tr.note("page", {"body": body, "rated": int(rated.size), "page_depth_rated": page_depth,
                     "body_rated_children": body_children, "text_nodes": snapshot.m})
    # Ratios (section 3.2), then standardize, centroid, distance (section 3.3).
    raw, max_depth = tr.stage("ratios", _ratios, snapshot, cfg, pg, rated, rdepth, body, in_body)
    z = _zscore(raw)
    centroid = z.mean(axis=0)
    dist = np.sqrt(((z - centroid) ** 2).sum(axis=1))
    order = np.lexsort((rated, -dist))  # farthest first, document order on ties
    c = max(1, min(cfg.c, rated.size))
    cset = [int(rated[k]) for k in order[:c]]
    wt_ratio = pg.words_el / pg.tags_el
    if debug_wanted():  # the ratio table is the debugger's
        _show_ratios(tr, snapshot, rated, order, raw, z, dist, centroid, wt_ratio, max_depth)
    candidates = _candidates(snapshot, rated, order, raw, dist, wt_ratio, c)
    # Body-children rule (section 3.1), else reduce (Algorithm 3) and select (Algorithm 4).
    if cfg.body_children_rule and page_depth < body_children:
        chosen = [int(k) for k in snapshot.children(body) if pg.shown[k]]
        tr.note("body_rule", {"applied": True, "children": chosen})
        tr.note("cset", cset)
    else:
        chosen = tr.stage("select", _reduce_select, tr, snapshot, pg, cset, wt_ratio)
        for cand in candidates[:c]:
            cand.features["selected"] = float(cand.nodes[0] in chosen)
    # Post-process (section 3.5, Algorithm 5).
    chosen_arr = np.array(sorted(chosen), dtype=np.int64)
    nodes, text = tr.stage("postprocess", _postprocess, tr, snapshot, cfg, pg, chosen_arr)
    tr.note("result", {"chosen": [int(x) for x in chosen_arr], "nodes": nodes[:tr.cap],
                       "truncated": len(nodes) > tr.cap})
    candidates.insert(0, Candidate([int(x) for x in chosen_arr], float(sum(wt_ratio[x] for x in chosen_arr)),
                                   label="R4 selection", features={"nodes": float(len(chosen_arr))}))
    for cand in candidates[1:]:
        tr.overlay("candidate", cand.label, cand.score, nodes=cand.nodes)
    tr.overlay("answer", "R4 selection", nodes=nodes)
    return tr.result(nodes, candidates, message="" if nodes else "the selection held only removed link groups",
                     text=text)


def _no_rated(tr: Trace, snapshot: Snapshot, cfg: Config, pg: _Page, body: int) -> Result:
    if cfg.visible_only and not pg.shown[body]:
        # Nothing is shown (a page hidden until its scripts run, a consent wall): score the DOM as the paper's add-on
        # does rather than give up.
        result = run(snapshot, replace(cfg, visible_only=False))
        result.debug["fallback"] = "nothing shown in <body>: scored every node (visible_only=False)"
        return result
    if pg.words_el[body] > 0:
        # Text straight inside BODY with no element around it: BODY is the only possible answer.
        tr.note("fallback", "no rated node; text directly in <body>")
        tr.overlay("answer", "<body> (no rated node)", nodes=[body])
        return tr.result([body], [Candidate([body], float(pg.words_el[body]), label="<body> (no rated node)")],
                         message="no rated node inside <body>: the whole <body> is returned",
                         text=_text(snapshot, in_body_text(snapshot, body, pg.rendered)))
    return tr.result([], message="no rated node inside <body> (no text or only excluded tags)")


def _ratios(snapshot: Snapshot, cfg: Config, pg: _Page, rated: np.ndarray, rdepth: np.ndarray, body: int,
            in_body: np.ndarray) -> tuple[np.ndarray, float]:
    """(rated x 4 matrix of wordRatio, hyperlinkRatio, childrenRatio, positionRatio; the page depth)."""
    word_ratio = _word_ratio(snapshot, rated, pg.free_words)
    nl = pg.links_el[rated]
    hyperlink_ratio = np.where(nl > 0, 1.0 / np.maximum(nl, 1), 1.0)
    children_ratio = (pg.child_nodes[rated] > 2).astype(np.float64)
    if cfg.rated_depth:
        depth = rdepth[rated].astype(np.float64)
        max_depth = float(rdepth[rated].max())
    else:
        dom = snapshot.depth - snapshot.depth[body]
        depth = dom[rated].astype(np.float64)
        max_depth = float(dom[in_body & pg.shown].max())
    position_ratio = np.where(depth <= max_depth / 2, 1.0, max_depth / np.maximum(depth, 1) - 1.0)
    return np.column_stack([word_ratio, hyperlink_ratio, children_ratio, position_ratio]), max_depth


def _show_ratios(tr: Trace, snapshot: Snapshot, rated: np.ndarray, order: np.ndarray, raw: np.ndarray,
                 z: np.ndarray, dist: np.ndarray, centroid: np.ndarray, wt_ratio: np.ndarray, max_depth: float) -> None:
    rows = order[:tr.cap]
    raw_r, z_r = np.round(raw[rows], 4).tolist(), np.round(z[rows], 4).tolist()
    dist_r, wt_r = np.round(dist[rows], 4).tolist(), np.round(wt_ratio[rated[rows]], 4).tolist()
    tr.note("ratios", {
        "columns": ["wordRatio", "hyperlinkRatio", "childrenRatio", "positionRatio"],
        "rows": [{"node": int(rated[k]), "tag": str(snapshot.tags[rated[k]]), "raw": raw_r[j], "z": z_r[j],
                  "distance": dist_r[j], "words_tags": wt_r[j]} for j, k in enumerate(rows.tolist())],
        "truncated": bool(rated.size > tr.cap),
        "centroid": tr.rs(centroid), "mean": tr.rs(raw.mean(axis=0)), "std": tr.rs(raw.std(axis=0)),
        "max_depth": max_depth,
    })


def _candidates(snapshot: Snapshot, rated: np.ndarray, order: np.ndarray, raw: np.ndarray, dist: np.ndarray,
                wt_ratio: np.ndarray, c: int) -> list[Candidate]:
    tags = snapshot.tags
    return [
        Candidate([int(rated[k])], float(dist[k]),
                  label=(f"c-SET #{rank + 1}" if rank < c else f"rank {rank + 1}") + f" <{tags[rated[k]]}>",
                  features={"wordRatio": float(raw[k, 0]), "hyperlinkRatio": float(raw[k, 1]),
                            "childrenRatio": float(raw[k, 2]), "positionRatio": float(raw[k, 3]),
                            "distance": float(dist[k]), "words_tags": float(wt_ratio[rated[k]])})
        for rank, k in enumerate(order[:_CANDIDATE_CAP])
    ]


def _reduce_select(tr: Trace, snapshot: Snapshot, pg: _Page, cset: list[int], wt_ratio: np.ndarray) -> list[int]:
    counts = _subtree_sum(snapshot, snapshot.text_per_element(pg.nonblank.astype(np.float64))) if snapshot.m else (
        np.zeros(snapshot.n))
    reduced, dropped = reduce_cset(snapshot, cset, counts)
    best, chosen = select(snapshot, reduced, wt_ratio)
    tr.note("body_rule", {"applied": False})
    tr.note("cset", [{"node": x, "words_tags": _r(wt_ratio[x]), "words": _r(pg.words_el[x]),
                      "tags": int(pg.tags_el[x])} for x in cset])
    tr.note("reduce", {"dropped": dropped, "kept": reduced})
    tr.note("select", {"best": best, "siblings": [x for x in chosen if x not in best], "chosen": chosen})
    return chosen


def _removable(snapshot: Snapshot, cfg: Config, pg: _Page, eligible: np.ndarray) -> dict[int, str]:
    """Algorithm 5's link groups (and, as an option, lists of one-link items) among ``eligible``, with why."""
    out: dict[int, str] = {}
    if not cfg.postprocess:
        return out
    free_el = pg.words_el - pg.link_words_el
    with np.errstate(divide="ignore", invalid="ignore"):
        text_ratio = np.where(free_el > 0, pg.link_words_el / np.where(free_el > 0, free_el, 1.0),
                              np.where(pg.link_words_el > 0, np.inf, 0.0))
    group = eligible & pg.shown & (pg.links_el > cfg.hr) & (text_ratio > cfg.tr)
    for x in np.nonzero(group)[0]:
        out[int(x)] = f"link group: {int(pg.links_el[x])} links, text ratio {_r(text_ratio[x])}"
    if cfg.remove_link_lists:
        n, parent = snapshot.n, snapshot.parent
        li = np.nonzero(_tag_in(snapshot, ("li",)) & pg.shown & eligible)[0]
        good = (pg.links_el[li] == 1) & (pg.images_el[li] == 0) & (pg.words_el[li] - pg.link_words_el[li] == 0)
        total = np.bincount(parent[li], minlength=n)[:n] if li.size else np.zeros(n, np.int64)
        ok = np.bincount(parent[li[good]], minlength=n)[:n] if li.size else np.zeros(n, np.int64)
        lists = eligible & _tag_in(snapshot, ("ul", "ol")) & (total > 0) & (ok == total)
        for x in np.nonzero(lists)[0]:
            out.setdefault(int(x), f"link list: {int(total[x])} items of one link each")
    return out


def _postprocess(tr: Trace, snapshot: Snapshot, cfg: Config, pg: _Page,
                 chosen: np.ndarray) -> tuple[list[int], str | None]:
    """The selection minus its link groups: (maximal kept subtrees, the kept text)."""
    inside = covered(snapshot, chosen)
    # A selected node may itself be a link group (a menu picked as a c-SET sibling of the content) and goes; but
    # when every selected node would go, only their insides are cleaned, so there is still an answer.
    reasons = _removable(snapshot, cfg, pg, inside)
    if chosen.size and all(x in reasons for x in chosen.tolist()):
        strict = inside.copy()
        strict[chosen] = False
        reasons = _removable(snapshot, cfg, pg, strict)
    rem = np.array(sorted(reasons), dtype=np.int64)
    cover = cover_count(snapshot, rem)
    outer = [int(x) for x in rem if cover[x] == 1]  # the others go with them
    tr.note("postprocess", {"removed": [{"node": x, "tag": str(snapshot.tags[x]), "reason": reasons[x]}
                                        for x in outer[:tr.cap]], "truncated": len(outer) > tr.cap})
    for x in outer[:tr.cap]:
        tr.overlay("removed", reasons[x], nodes=[x])
    kept = inside & ~(cover > 0)
    nodes = [int(x) for x in chosen]
    if outer:
        # The kept content as maximal subtrees: a node is kept when it holds no removed node and its parent does (or
        # it is a chosen root).
        mark = np.zeros(snapshot.n, dtype=bool)
        mark[outer] = True
        holds = _subtree_sum(snapshot, mark) > 0
        par_holds = np.zeros(snapshot.n, dtype=bool)
        par_holds[1:] = holds[snapshot.parent[1:]]
        root = np.zeros(snapshot.n, dtype=bool)
        root[chosen] = True
        nodes = [int(x) for x in np.nonzero(kept & ~holds & (root | par_holds) & pg.shown)[0]]
    text_mask = kept[snapshot.text_owner] & pg.rendered if snapshot.m else np.zeros(0, dtype=bool)
    return nodes, _text(snapshot, text_mask)
