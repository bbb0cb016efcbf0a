"""Semantic-markup baseline (Rae et al., DocEng '18, section 4): the first ``<main>`` or ``<article>`` found by
breadth-first search is the main content. Honest markup makes it exact; without such markup it has no answer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.result import Candidate, Overlay, Result
from ..core.snapshot import Snapshot


@dataclass(frozen=True)
class Config:
    # Rae et al. section 4 use <main> and <article>; the tags are a parameter for experiments.
    tags: tuple[str, ...] = ("main", "article")
    # A hidden <article> (e.g. a template or a collapsed teaser) is not what a reader sees.
    visible_only: bool = True


def run(snapshot: Snapshot, config: Config | None = None) -> Result:
    cfg = config or Config()
    tags = snapshot.tags
    mask = snapshot.tag_in(cfg.tags)
    if cfg.visible_only:
        mask &= snapshot.visible
    idx = np.nonzero(mask)[0]
    if idx.size == 0:
        return Result("semantic", [], message=f"no visible {' / '.join(f'<{t}>' for t in cfg.tags)} element")
    # Breadth-first order = by depth, then document order.
    order = np.lexsort((idx, snapshot.depth[idx]))
    idx = idx[order]
    chars = snapshot.subtree_sum(snapshot.text_per_element(snapshot.text_len.astype(float)))
    candidates = [
        Candidate([int(i)], float(chars[i]), label=f"<{tags[i]}> #{rank + 1} in BFS order",
                  features={"depth": float(snapshot.depth[i]), "chars": float(chars[i])})
        for rank, i in enumerate(idx[:50])
    ]
    chosen = int(idx[0])
    overlays = [Overlay("candidate", c.label, c.score, nodes=c.nodes) for c in candidates[1:]]
    overlays.append(Overlay("answer", candidates[0].label, nodes=[chosen]))
    return Result("semantic", [chosen], candidates, overlays=overlays,
                  debug={"bfs_order": [int(i) for i in idx[:50]], "chosen": chosen})
