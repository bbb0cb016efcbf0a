"""Real and edge feature rows for the tree-model tests (the numpy evaluator, the compiled models): the golden pages'
candidates and blocks as a press computes them, the fixture pages' source blocks, and rows at a model's thresholds."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from centrum.algorithms import ensemble as E
from centrum.algorithms import source
from centrum.algorithms import source_features as S
from centrum.algorithms._trees import K_ZERO, Trees
from centrum.core import charset

from . import goldens

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"


@functools.cache
def golden_rows() -> tuple[np.ndarray, np.ndarray]:
    """(candidate rows, block rows) of every golden page: the ensemble's features as a press computes them."""
    cands, blocks = [], []
    cfg = E.Config()
    block_model = E.load_block_model()
    for slug in goldens.slugs():
        snap = goldens.load_snapshot(slug)
        results, _ = E.run_base(snap)
        pm = E.prepare(snap, results, cfg)
        cands.append(pm.X)
        for nodes in pm.candidates[:5]:
            pb, _ = E.block_scores(snap, nodes, pm, cfg, block_model)
            blocks.append(pb.X)
    return np.concatenate(cands), np.concatenate(blocks)


@functools.cache
def source_rows(context: bool = False) -> np.ndarray:
    """The fixture pages' block rows; with ``context`` the context stage's (the first stage's scores around them)."""
    rows = []
    for page in sorted(FIXTURES.glob("*.html")):
        try:
            tree = S.parse(charset.decode(page.read_bytes()), source.Config().max_chars)
        except S.SourceError:
            continue
        X = S.block_features(tree)[0]
        rows.append(S.context_features(tree, X, source.load_model().predict(X)) if context else X)
    return np.concatenate(rows)


def edge_rows(trees: Trees, n: int, seed: int = 0) -> np.ndarray:
    """Rows at, just below and just above the model's thresholds, with NaN, 0 and +-1e-36 (read as 0) mixed in."""
    rng = np.random.default_rng(seed)
    X = rng.choice(trees.threshold[np.isfinite(trees.threshold)], size=(n, len(trees.feature_names)))
    X = X + rng.choice([-1e-9, 0.0, 1e-9], size=X.shape) * np.maximum(np.abs(X), 1.0)
    for value, share in ((np.nan, 0.05), (0.0, 0.05), (1e-36, 0.02), (-1e-36, 0.02), (K_ZERO, 0.02)):
        X[rng.random(X.shape) < share] = value
    return X


# LightGBM settings that make the split kinds the shipped models lack, each with why.
SPLIT_KINDS = [
    {"objective": "regression", "num_leaves": 100, "zero_as_missing": False},  # > 64 leaves: the level walk
    {"objective": "regression", "num_leaves": 31, "zero_as_missing": True},  # missing type Zero
    {"objective": "binary", "num_leaves": 15, "sigmoid": 0.7},  # missing type NaN, default sides both ways
]


def split_kind_model(params: dict) -> tuple[str, np.ndarray]:
    """(LightGBM's text of a small model trained with ``params`` on rows with NaN and zeros, 500 of those rows)."""
    import lightgbm as lgb

    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 6))
    X[rng.random(X.shape) < 0.15] = np.nan
    X[rng.random(X.shape) < 0.1] = 0.0
    signal = np.nan_to_num(X[:, 0], nan=2.0) + np.where(np.isnan(X[:, 1]), -1.5, X[:, 1] ** 2) + (X[:, 2] == 0)
    y = (signal > 0.8).astype(float) if params["objective"] == "binary" else signal
    booster = lgb.train({**params, "min_data_in_leaf": 5, "verbosity": -1, "seed": 0, "num_threads": 1},
                        lgb.Dataset(X, label=y), num_boost_round=25)
    return booster.model_to_string(), X[:500]
