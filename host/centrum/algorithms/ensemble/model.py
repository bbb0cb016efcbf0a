"""Gradient-boosted stumps with numpy: the ensemble's small, inspectable scorer.

The model predicts a candidate's token F1 (squared loss), or ranks a page's candidates (listwise softmax loss).
Each round fits one stump ``x[f] <= t ? left : right`` to
the residuals, choosing among quantile thresholds with histogram sums (one ``bincount`` per feature, so a round
costs O(rows x features)). Because every stump reads one feature, a prediction is the base value plus a sum of
per-feature contributions, which is what the debugger shows. Rows are subsampled per round with a seeded
generator, so training is deterministic for a given seed and data.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...core.extras import need
from .. import _compiled
from .._trees import Trees

FORMAT = "centrum-ensemble-stumps"


@dataclass
class Stumps:
    feature_names: list[str]
    base: float = 0.0
    feature: list[int] = field(default_factory=list)
    threshold: list[float] = field(default_factory=list)
    left: list[float] = field(default_factory=list)  # value when x <= threshold (learning rate applied)
    right: list[float] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.base + self.contributions(X).sum(axis=1)

    def used_features(self) -> list[int]:
        return sorted(set(self.feature))

    def contributions(self, X: np.ndarray) -> np.ndarray:
        """(rows, features): summed stump outputs of each feature. Per used feature the stumps are sorted by
        threshold with prefix sums of their left and right values, so a row's contribution is one binary search:
        the stumps with ``t < x`` give ``right``, the others ``left`` (O(rows x features x log stumps))."""
        out = np.zeros((X.shape[0], len(self.feature_names)))
        for j, t, left_after, right_before in self._tables():
            k = np.searchsorted(t, X[:, j], side="left")  # stumps with threshold < x
            out[:, j] = right_before[k] + left_after[k]
        return out

    def _tables(self) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        """Per used feature: (feature, sorted thresholds, sum of left values from position k on, sum of right
        values before k), cached until stumps are added."""
        key = len(self.feature)
        cached = self.__dict__.get("_tables_cache")
        if cached is not None and cached[0] == key:
            return cached[1]
        f = np.asarray(self.feature, dtype=np.int64)
        t_all, l_all, r_all = (np.asarray(v, dtype=np.float64) for v in (self.threshold, self.left, self.right))
        tables = []
        for j in np.unique(f).tolist():
            sel = np.nonzero(f == j)[0]
            order = sel[np.argsort(t_all[sel], kind="stable")]
            t, lv, rv = t_all[order], l_all[order], r_all[order]
            right_before = np.concatenate([[0.0], np.cumsum(rv)])
            left_after = np.concatenate([np.cumsum(lv[::-1])[::-1], [0.0]])
            tables.append((j, t, left_after, right_before))
        self.__dict__["_tables_cache"] = (key, tables)
        return tables

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": 1, "feature_names": self.feature_names, "base": self.base,
                "stumps": [[self.feature_names[f], t, a, b] for f, t, a, b in
                           zip(self.feature, self.threshold, self.left, self.right, strict=True)],
                "meta": self.meta}

    @classmethod
    def from_json(cls, obj: dict[str, Any], feature_names: list[str] | None = None) -> Stumps:
        if obj.get("format") != FORMAT:
            raise ValueError(f"not an ensemble weights file (format {obj.get('format')!r})")
        names = list(obj["feature_names"])
        if feature_names is not None and names != feature_names:
            missing = sorted(set(names) ^ set(feature_names))
            raise ValueError(f"weights were trained on other features (differ: {', '.join(missing[:8])})")
        index = {n: i for i, n in enumerate(names)}
        s = obj["stumps"]
        return cls(names, float(obj["base"]), [index[x[0]] for x in s], [float(x[1]) for x in s],
                   [float(x[2]) for x in s], [float(x[3]) for x in s], dict(obj.get("meta", {})))

    def save(self, path: Path) -> None:
        # repr-exact floats and sorted keys: the same training writes the same bytes.
        path.write_text(json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path, feature_names: list[str] | None = None) -> Stumps:
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")), feature_names)


def _thresholds(x: np.ndarray, bins: int) -> np.ndarray:
    """Candidate split points: distinct quantiles of the column (midpoints are not needed for <=)."""
    qs = np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1])
    return np.unique(qs)


def _group_softmax(v: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Softmax of ``v`` within each group (rows of one page)."""
    top = np.full(n_groups, -np.inf)
    np.maximum.at(top, groups, v)
    e = np.exp(v - top[groups])
    return e / np.bincount(groups, weights=e, minlength=n_groups)[groups]


def fit(X: np.ndarray, y: np.ndarray, feature_names: list[str], rounds: int = 300, learning_rate: float = 0.1,
        bins: int = 32, subsample: float = 0.8, min_leaf: int = 20, seed: int = 0,
        weights: np.ndarray | None = None, groups: np.ndarray | None = None, tau: float = 0.0) -> Stumps:
    """Boosting of stumps; ``weights`` per row (e.g. 1 / candidates of its page).

    Without ``groups``: least squares on ``y``. With ``groups`` (page index per row) and ``tau`` > 0: listwise
    ranking (ListNet): the page's softmax over predictions is pulled towards softmax(y / tau), with Newton leaf
    values (sum of gradients / sum of p(1 - p)). Only the order within a page matters then, which is what choosing
    one candidate per page needs: a regression spends its stumps on the level of F1 across pages.
    """
    n, d = X.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    rng = np.random.default_rng(seed)
    listwise = groups is not None and tau > 0
    base = 0.0 if listwise or n == 0 else float(np.average(y, weights=w))
    model = Stumps(list(feature_names), base, meta={"rounds": rounds, "learning_rate": learning_rate, "bins": bins,
                                                    "subsample": subsample, "min_leaf": min_leaf, "seed": seed,
                                                    "objective": "listwise" if listwise else "l2",
                                                    **({"tau": tau} if listwise else {})})
    if n == 0:
        return model
    if listwise:
        assert groups is not None
        g_idx = np.asarray(groups, dtype=np.int64)
        n_groups = int(g_idx.max()) + 1
        target = _group_softmax(np.asarray(y, dtype=np.float64) / tau, g_idx, n_groups)
    # Bin every column once: codes[i, j] = number of thresholds of j below x[i, j].
    ths = [_thresholds(X[:, j], bins) for j in range(d)]
    codes = np.zeros((n, d), dtype=np.int64)
    for j in range(d):
        codes[:, j] = np.searchsorted(ths[j], X[:, j], side="left")
    pred = np.full(n, base)
    for _ in range(rounds):
        sel = rng.random(n) < subsample
        if listwise:
            p = _group_softmax(pred, g_idx, n_groups)
            hess = np.maximum(p * (1 - p), 1e-6)
            # Newton step through the least-squares machinery: weight w*h, target g/h.
            r = ((target - p) / hess)[sel]
            ww = (w * hess)[sel]
        else:
            r = (y - pred)[sel]
            ww = w[sel]
        best = (0.0, -1, 0, 0.0, 0.0)  # gain, feature, bin, left, right
        tw, twr = ww.sum(), (ww * r).sum()
        for j in range(d):
            nb = ths[j].shape[0] + 1
            if nb < 2:
                continue
            c = codes[sel, j]
            sw = np.bincount(c, weights=ww, minlength=nb)
            swr = np.bincount(c, weights=ww * r, minlength=nb)
            cnt = np.bincount(c, minlength=nb)
            lw, lwr, lc = np.cumsum(sw)[:-1], np.cumsum(swr)[:-1], np.cumsum(cnt)[:-1]
            rw, rwr, rc = tw - lw, twr - lwr, c.shape[0] - lc
            ok = (lc >= min_leaf) & (rc >= min_leaf) & (lw > 0) & (rw > 0)
            if not ok.any():
                continue
            gain = np.where(ok, lwr ** 2 / np.where(ok, lw, 1) + rwr ** 2 / np.where(ok, rw, 1) - twr ** 2 / tw,
                            -1.0)
            k = int(np.argmax(gain))
            if gain[k] > best[0]:
                best = (float(gain[k]), j, k, float(lwr[k] / lw[k]), float(rwr[k] / rw[k]))
        gain, j, k, lv, rv = best
        if j < 0 or gain <= 1e-9 * tw:
            break  # residuals are (numerically) explained: further stumps would only fit noise
        t = float(ths[j][k])
        # codes <= k  <=>  x <= ths[k] (searchsorted left: code = #thresholds strictly below x).
        model.feature.append(j)
        model.threshold.append(t)
        model.left.append(learning_rate * lv)
        model.right.append(learning_rate * rv)
        pred += np.where(codes[:, j] <= k, learning_rate * lv, learning_rate * rv)
    return model


# ---- LightGBM ------------------------------------------------------------------------------------------------------
# Model files are LightGBM's own text format (``Booster.model_to_string``), named ``<name>.lgb.txt``.
LGB_SUFFIX = ".lgb.txt"


class Boosted:
    """A LightGBM model behind the interface the ensemble reads (``predict``, ``contributions``, ``base``), evaluated
    by :mod:`._trees` from LightGBM's text format, so that running it needs numpy only (the LightGBM package is the
    ``train`` extra): predictions are LightGBM's own doubles, contributions its TreeSHAP values (``pred_contrib``,
    to rounding), so that ``base`` plus a candidate's contributions is its score, as with the stumps. ``booster``
    is the LightGBM booster for training code, made from the text when asked for."""

    def __init__(self, booster: Any, feature_names: list[str], meta: dict[str, Any] | None = None,
                 text: str | None = None) -> None:
        self._booster = booster
        self.text = str(booster.model_to_string(num_iteration=-1)) if text is None else text
        self.trees = Trees.parse(self.text)
        self.feature_names = list(feature_names)
        self.meta: dict[str, Any] = dict(meta or {})
        self.meta.setdefault("objective", self.trees.objective)
        self._compiled: _compiled.Predictor | None = None
        self._compiled_generation = -1  # the compiled-file generation last looked up; -1: never

    @property
    def booster(self) -> Any:
        if self._booster is None:
            lgb = need("lightgbm", "train", "a LightGBM booster")
            self._booster = lgb.Booster(model_str=self.text)
        return self._booster

    @property
    def base(self) -> float:
        """TreeSHAP's expected value: the same for every row."""
        return self.trees.expected_value()

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Raw scores (ranker) or probabilities (block filter, cross-entropy objective): the model compiled by lleaves
        when the process asked for fast predictors (:func:`native_predictor`) and it was compiled on this machine,
        else LightGBM's own predictor when the process has imported LightGBM, else :mod:`._trees`; the same doubles
        every way (``tests/unit/test_trees.py``, ``tests/integration/test_compiled.py``)."""
        if X.shape[0] == 0:
            return np.zeros(0)
        compiled = self.compiled()
        if compiled is not None:
            return compiled(X)
        native = self.native()
        if native is not None:
            return np.asarray(native.predict(np.ascontiguousarray(X, dtype=np.float64), num_threads=1))
        return self.trees.predict(X)

    def compiled(self) -> _compiled.Predictor | None:
        """This model compiled by lleaves, when the process asked for fast predictors and the file exists; looked
        up once, and again after a compilation ends (:func:`._compiled.reload`)."""
        if not _FAST or self._compiled is not None or self._compiled_generation == _compiled.generation:
            return self._compiled
        self._compiled_generation = _compiled.generation
        self._compiled = _compiled.load(self.text, len(self.trees.feature_names))
        return self._compiled

    def native(self) -> Any:
        """LightGBM's booster of this model when LightGBM is already imported, else None (importing it costs more
        than a page's prediction: the host imports it while it warms up, see :func:`native_predictor`)."""
        if "lightgbm" not in sys.modules:
            return None
        return self.booster

    def contributions(self, X: np.ndarray) -> np.ndarray:
        """(rows, features) in raw-score space."""
        if X.shape[0] == 0:
            return np.zeros((0, len(self.feature_names)))
        return self.trees.contributions(X)

    def used_features(self) -> list[int]:
        """Features some split reads (the others always contribute 0)."""
        return self.trees.used_features()

    def to_string(self) -> str:
        return self.text

    def save(self, path: Path) -> None:
        path.write_text(self.to_string(), encoding="utf-8")

    @classmethod
    def from_string(cls, text: str, feature_names: list[str] | None = None) -> Boosted:
        trees = Trees.parse(text)
        names = trees.feature_names
        if feature_names is not None and names != feature_names:
            differ = sorted(set(names) ^ set(feature_names))
            raise ValueError(f"model was trained on other features (differ: {', '.join(differ[:8]) or 'order'})")
        return cls(None, names, text=text)

    @classmethod
    def load(cls, path: Path, feature_names: list[str] | None = None) -> Boosted:
        return cls.from_string(path.read_text(encoding="utf-8"), feature_names)


_FAST = False  # whether this process asked for fast predictors (native_predictor)


def native_predictor() -> bool:
    """Ask for the fastest predictors this install has: models compiled by lleaves where they have been (the ``fast``
    extra; :mod:`._compiled`), and LightGBM imported when it is installed, for the others (the numpy evaluator tests
    every node for every row). Returns whether LightGBM is importable; without either, predictions come from
    :mod:`._trees`: the same doubles every way (docs/speed.md)."""
    global _FAST
    _FAST = True
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        return False
    return True


# A bag of boosters as one: every member's trees, leaf values divided by the member count, so that the model's raw
# score is the members' mean and its TreeSHAP contributions their mean contributions (both are linear in the leaves).
_LEAF_VALUES = re.compile(r"^(leaf_value|internal_value)=(.*)$", re.M)
_TREE_HEADER = re.compile(r"^Tree=\d+$", re.M)


def average_boosters(boosters: Sequence[Any]) -> Any:
    """One LightGBM booster scoring the mean raw score of ``boosters`` (same features and objective), written and
    read as LightGBM's own text format; deterministic in its inputs."""
    lgb = need("lightgbm", "train", "averaging boosters")

    k = len(boosters)
    texts = [str(b.model_to_string(num_iteration=-1)) for b in boosters]
    first = texts[0]
    head = re.sub(r"^tree_sizes=.*\n", "", first[: first.index("Tree=0")], flags=re.M)  # recomputed on writing
    tail = first[first.index("end of trees"):]
    trees: list[str] = []
    for text in texts:
        body = text[text.index("Tree=0"): text.index("end of trees")]
        for block in re.split(r"(?=^Tree=\d+$)", body, flags=re.M):
            if block.strip():
                block = _LEAF_VALUES.sub(
                    lambda m: m.group(1) + "=" + " ".join(repr(float(v) / k) for v in m.group(2).split()), block)
                trees.append(_TREE_HEADER.sub(f"Tree={len(trees)}", block, count=1))
    merged = lgb.Booster(model_str=head + "".join(trees) + tail)
    return lgb.Booster(model_str=merged.model_to_string(num_iteration=-1))


Model = Stumps | Boosted


def load_model_file(path: Path, feature_names: list[str] | None = None) -> Model:
    """A model file of either kind, by its name: ``*.lgb.txt`` LightGBM, ``*.json`` stumps."""
    if path.name.endswith(LGB_SUFFIX):
        return Boosted.load(path, feature_names)
    return Stumps.load(path, feature_names)
