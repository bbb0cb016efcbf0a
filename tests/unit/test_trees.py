"""The numpy evaluator of LightGBM's text models (centrum.algorithms._trees) gives LightGBM's own predictions: the same
doubles for raw scores and probabilities, TreeSHAP's base value exactly and its contributions to rounding, on every
shipped model with real feature rows (the golden pages' candidates and blocks, the fixture pages' source blocks) and
rows drawn at the models' thresholds with NaN, zero and sub-kZeroThreshold values; and on LightGBM models with the
split kinds the shipped ones lack (missing type Zero and NaN, default right, trees of more than 64 leaves)."""

from __future__ import annotations

from importlib import resources

import lightgbm as lgb
import numpy as np
import pytest
from helpers.model_rows import SPLIT_KINDS, edge_rows, golden_rows, source_rows, split_kind_model

from centrum.algorithms import ensemble as E
from centrum.algorithms._trees import ModelFormatError, Trees
from centrum.algorithms.ensemble.model import Boosted, native_predictor
from centrum.commands.models import kind_of

WEIGHTS = resources.files("centrum") / "weights"
SHIPPED = sorted(p.name for p in WEIGHTS.iterdir() if p.name.endswith(".lgb.txt"))


def agree(text: str, X: np.ndarray, contrib_rows: int = 8) -> None:
    ours, booster = Trees.parse(text), lgb.Booster(model_str=text)
    assert np.array_equal(ours.raw(X), booster.predict(X, raw_score=True, num_threads=1))
    assert np.array_equal(ours.predict(X), booster.predict(X, num_threads=1))
    want = booster.predict(X[:contrib_rows], pred_contrib=True, num_threads=1)
    assert ours.expected_value() == want[0, -1]
    np.testing.assert_allclose(ours.contributions(X[:contrib_rows]), want[:, :-1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_models_predict_as_lightgbm_on_real_and_edge_rows(name: str) -> None:
    text = (WEIGHTS / name).read_text(encoding="utf-8")
    trees = Trees.parse(text)
    k = len(trees.feature_names)
    if name.startswith("source-"):
        real = source_rows(kind_of(WEIGHTS / name) == "source-context")
    else:
        cands, blocks = golden_rows()
        real = blocks if name.endswith("-blocks.lgb.txt") else cands
    assert real.shape[0] > 50 and real.shape[1] >= k
    agree(text, np.concatenate([real[:, :k], edge_rows(trees, 300)]))


def test_the_ensemble_scores_with_the_evaluator_as_with_lightgbm() -> None:
    """What a press computes (Boosted: scores, the debugger's base and contributions) equals LightGBM's."""
    model = E.load_model()
    assert isinstance(model, Boosted)
    booster = lgb.Booster(model_str=model.to_string())
    cands, _ = golden_rows()
    X = cands[:, : len(model.feature_names)]
    assert np.array_equal(model.predict(X), booster.predict(X, num_threads=1))
    contrib = booster.predict(X[:3], pred_contrib=True, num_threads=1)
    assert model.base == contrib[0, -1]
    np.testing.assert_allclose(model.contributions(X[:3]), contrib[:, :-1], rtol=1e-9, atol=1e-12)
    used = [int(j) for j in np.nonzero(booster.feature_importance("split"))[0]]
    assert model.used_features() == used


@pytest.mark.parametrize("params", SPLIT_KINDS)
def test_missing_types_and_wide_trees_as_lightgbm(params: dict) -> None:
    text, X = split_kind_model(params)
    trees = Trees.parse(text)
    kinds = set(trees.missing.tolist())
    assert kinds == ({1} if params.get("zero_as_missing") else {2})
    assert trees.default_left.any() and not trees.default_left.all()
    assert (trees._bitmasks() is None) == (params["num_leaves"] > 64)
    agree(text, np.concatenate([X, edge_rows(trees, 300, seed=2)]))


def test_a_model_of_one_leaf_trees_as_lightgbm() -> None:
    """Too few rows for any split (a tiny training set): every tree is its leaf."""
    X = np.random.default_rng(3).normal(size=(20, 3))
    booster = lgb.train({"objective": "cross_entropy", "min_data_in_leaf": 50, "verbosity": -1, "num_threads": 1},
                        lgb.Dataset(X, label=(X[:, 0] > 0).astype(float)), num_boost_round=5)
    text = booster.model_to_string()
    assert Trees.parse(text).feature.shape[0] == 0
    agree(text, X)


def test_a_file_that_is_not_a_model_is_refused_with_the_reason() -> None:
    for text, why in (("tree\nnot a model\n", "end of trees"), ("hello", "no 'tree' header"),
                      ("tree\nversion=v4\nend of trees\n", "KeyError")):
        with pytest.raises(ModelFormatError, match=why):
            Trees.parse(text)
    good = (WEIGHTS / "source-v4.lgb.txt").read_text(encoding="utf-8")
    with pytest.raises(ModelFormatError, match="leaf values"):
        Trees.parse(good.replace("leaf_value=", "leaf_value=0.5 ", 1))
    with pytest.raises(ModelFormatError, match="multiclass"):
        Trees.parse(good.replace("num_class=1", "num_class=3", 1))


def test_boosted_predicts_with_lightgbm_once_imported_and_gives_the_evaluators_doubles() -> None:
    """The host warms up with LightGBM's own predictor (native_predictor): the fast path and the numpy evaluator (the
    core install's path) give identical scores on the golden pages' candidates and blocks."""
    assert native_predictor()
    cands, blocks = golden_rows()
    for model, rows in ((E.load_model(), cands), (E.load_block_model(), blocks)):
        assert isinstance(model, Boosted) and model.native() is not None
        X = rows[:, : len(model.feature_names)]
        assert np.array_equal(model.predict(X), model.trees.predict(X))
