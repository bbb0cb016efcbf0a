"""Synthetic training records: pages of two data sets whose best candidate has one feature set."""

from __future__ import annotations

import numpy as np

from centrum.algorithms.ensemble import features as F
from centrum.training import learner as T


def synthetic_records() -> list[T.PageRecord]:
    """Synthetic pages of two data sets: the best candidate is the one with feature semantic_exact set."""
    names = F.feature_names()
    j = names.index("semantic_exact")
    recs = []
    rng = np.random.default_rng(0)
    for ds in ("a", "b"):
        for p in range(30):
            X = rng.random((6, len(names)))
            X[:, j] = 0
            best = p % 6
            X[best, j] = 1
            y = np.full(6, 0.2)
            y[best] = 0.9
            counts = [(0.2, 0.4, 0.4)] * 6
            counts[best] = (0.9, 0.05, 0.05)
            recs.append(T.PageRecord(ds, f"{ds}{p}", "text", X, y, counts, 100, (0.0, 0.0, 1.0)))
    return recs
