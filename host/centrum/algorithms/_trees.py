"""LightGBM's text model format (``Booster.model_to_string``) evaluated with numpy, so that the native host and
``centrum extract`` run the shipped trees without the LightGBM package (and the scipy it pulls in) at run time.
LightGBM stays the learner (the ``train`` extra); this module only reads what it wrote.

Scores follow LightGBM's own predictor step by step, so that they are the same doubles: a row's values of magnitude
at most ``kZeroThreshold`` read as 0 (LightGBM keeps dense rows as sparse pairs), a split sends a value left when
``value <= threshold`` after the node's missing-value rule (decision_type bit 1: default left; bits 2-3: missing
type None, which reads NaN as 0, Zero or NaN, which send that value the default way), and the trees' leaf values
are added in tree order starting from 0. Every node's test is made for all rows at once and each tree's leaf found
from bitmasks (QuickScorer, :meth:`Trees._bitmasks`): O(rows x nodes) in a dozen numpy operations, no walk.

``contributions`` are path-dependent TreeSHAP values (Lundberg et al. 2018, Algorithm 2, LightGBM's
``pred_contrib``). They depend on a row only through which of a leaf's path conditions it meets, so each leaf's
path is merged by feature once (the product of the count ratios of a feature's splits, the conjunction of its
conditions) and the polynomial of Algorithm 2 is run for all leaves of a given path length and all rows at once.
The sum runs in another order than LightGBM's recursion, so values agree to rounding, not bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# LightGBM's kZeroThreshold, a float constant compared with doubles.
K_ZERO = float(np.float32(1e-35))
# Objectives whose predictions are the raw score (the ranking and regression ones LightGBM leaves untransformed).
_IDENTITY = {"lambdarank", "rank_xendcg", "regression", "regression_l1", "huber", "fair", "quantile", "mape"}
# Rows x internal nodes of one prediction pass (bounds the decision matrix's memory: 8 bytes a cell at most).
_CELLS = 1 << 21
# The rows of one contributions pass: memory is rows x (leaves x path length) doubles.
_SHAP_ROWS = 16


class ModelFormatError(ValueError):
    """Text that is not a LightGBM model this evaluator runs (not LightGBM's format, or a feature it lacks)."""


def _fields(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
        elif line:
            out[line] = ""
    return out


@dataclass
class _Leaves:
    """Every leaf of the model whose merged path has ``d`` distinct features (the TreeSHAP tables)."""

    value: np.ndarray  # (L,)
    feature: np.ndarray  # (L, d) the path's features, in order of first split
    zero: np.ndarray  # (L, d) the share of training rows that each feature's splits let through
    node: np.ndarray  # (L, P) the path's internal nodes (global index), P = the longest path of the group
    left: np.ndarray  # (L, P) whether the path goes left there
    slot: np.ndarray  # (L, P) the feature's place in ``feature``, -1 past the path's end


@dataclass
class Trees:
    feature_names: list[str]
    objective: str  # LightGBM's objective name ("lambdarank", "cross_entropy", "binary"...)
    sigmoid: float  # binary's sigmoid parameter
    # Internal nodes of all trees, numbered tree after tree; children are node numbers, or ~leaf for a leaf.
    feature: np.ndarray
    threshold: np.ndarray
    default_left: np.ndarray
    missing: np.ndarray  # 0 None, 1 Zero, 2 NaN
    left: np.ndarray
    right: np.ndarray
    root: np.ndarray  # per tree: its root node, or ~leaf for a one-leaf tree
    leaf_value: np.ndarray
    leaf_count: np.ndarray
    internal_count: np.ndarray
    leaf_tree: np.ndarray  # per leaf: its tree
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def num_trees(self) -> int:
        return int(self.root.shape[0])

    @classmethod
    def parse(cls, text: str) -> Trees:
        try:
            return cls._parse(text)
        except (KeyError, IndexError, ValueError) as e:
            if isinstance(e, ModelFormatError):
                raise
            raise ModelFormatError(f"not a LightGBM text model: {type(e).__name__}: {e}") from None

    @classmethod
    def _parse(cls, text: str) -> Trees:
        if not text.startswith("tree\n"):
            raise ModelFormatError("not a LightGBM text model (no 'tree' header)")
        end = text.find("\nend of trees")
        if end < 0:
            raise ModelFormatError("not a LightGBM text model (no 'end of trees')")
        start = text.find("\nTree=", 0, end)
        head = _fields(text[: start if start >= 0 else end].splitlines())
        if int(head["num_class"]) != 1 or int(head.get("num_tree_per_iteration", "1")) != 1:
            raise ModelFormatError("multiclass models are not supported")
        if "average_output" in head:
            raise ModelFormatError("averaged (random forest) models are not supported")
        names = head["feature_names"].split()
        obj, *params = head.get("objective", "regression").split()
        sigmoid = float(next((p.split(":")[1] for p in params if p.startswith("sigmoid:")), "1"))
        if obj not in _IDENTITY | {"binary", "cross_entropy"} or "sqrt" in params:
            raise ModelFormatError(f"objective {' '.join([obj, *params])!r} is not supported")
        blocks = text[start + 1: end].split("\nTree=") if start >= 0 else []
        trees = [dict(line.split("=", 1) for line in block.split("\n")[1:] if "=" in line) for block in blocks]
        if any(int(f.get("num_cat", "0")) or int(f.get("is_linear", "0")) for f in trees):
            raise ModelFormatError("categorical splits and linear trees are not supported")
        n_leaves = np.array([int(f["num_leaves"]) for f in trees], dtype=np.int64)
        multi = [f for f, n in zip(trees, n_leaves.tolist(), strict=True) if n > 1]

        def numbers(key: str, of: list[dict[str, str]], kind: type = np.float64) -> np.ndarray:
            # One C conversion of every tree's values (numpy parses decimal strings correctly rounded, as float()).
            return np.array(" ".join(f[key] for f in of).split(), dtype=kind)

        lval = numbers("leaf_value", trees)
        if lval.shape[0] != n_leaves.sum():
            raise ModelFormatError(f"{lval.shape[0]} leaf values for {n_leaves.sum()} leaves")
        l0 = np.concatenate([[0], np.cumsum(n_leaves)[:-1]]).astype(np.int64)  # each tree's first leaf
        n_nodes = n_leaves - 1
        n0 = np.concatenate([[0], np.cumsum(n_nodes)[:-1]]).astype(np.int64)  # each tree's first internal node
        nodes_of = np.repeat(np.arange(n_leaves.shape[0]), n_nodes)  # per internal node: its tree
        lcnt = np.zeros(lval.shape[0])
        lcnt[np.repeat(n_leaves > 1, n_leaves)] = numbers("leaf_count", multi)
        feat, thr = numbers("split_feature", multi, np.int64), numbers("threshold", multi)
        dtype, icnt = numbers("decision_type", multi, np.int64), numbers("internal_count", multi)
        lch, rch = (numbers(key, multi, np.int64) for key in ("left_child", "right_child"))
        if not feat.shape[0] == thr.shape[0] == dtype.shape[0] == lch.shape[0] == rch.shape[0] == n_nodes.sum():
            raise ModelFormatError("node arrays of different lengths")
        # Children to global numbers: a node's index plus its tree's first node, a leaf's plus its tree's first leaf.
        lch, rch = (np.where(c >= 0, c + n0[nodes_of], ~(~c + l0[nodes_of])) for c in (lch, rch))
        roots = np.where(n_leaves > 1, n0, ~l0)
        ltree = np.repeat(np.arange(n_leaves.shape[0]), n_leaves)
        d = dtype
        if (d & 1).any():
            raise ModelFormatError("categorical splits are not supported")
        feature = feat
        if feature.size and (feature.min() < 0 or feature.max() >= len(names)):
            raise ModelFormatError("a split reads a feature the model does not name")
        return cls(names, obj, sigmoid, feature, thr, (d & 2) > 0, (d >> 2) & 3, lch, rch, roots, lval, lcnt, icnt,
                   ltree)

    # ---- prediction ------------------------------------------------------------------------------------------------

    def _rows(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.feature_names):
            raise ValueError(f"expected rows of {len(self.feature_names)} features, got shape {X.shape}")
        return np.where(np.abs(X) <= K_ZERO, 0.0, X)

    def _goes_left(self, x: np.ndarray, threshold: np.ndarray, nan_possible: bool, node: np.ndarray) -> np.ndarray:
        """LightGBM's NumericalDecision for values ``x`` (read by :meth:`_rows`) at internal nodes ``node`` whose
        thresholds are ``threshold`` (broadcast together). After :meth:`_rows` a value LightGBM's IsZero holds for is
        exactly 0, and a NaN goes where the node sends it (:meth:`_nan_left`), so most rows cost one comparison."""
        left = x <= threshold
        nan = np.isnan(x) if nan_possible else None
        if nan is not None and nan.any():
            left = np.where(nan, self._nan_left()[node], left)
        if (self.missing == 1).any():
            left = np.where((x == 0) & (self.missing[node] == 1), self.default_left[node], left)
        return left

    def _nan_left(self) -> np.ndarray:
        """Per node, where a NaN goes: missing type None reads it as 0, Zero as a zero (the default side), NaN the
        default side."""
        if "nan_left" not in self._cache:
            self._cache["nan_left"] = np.where(self.missing == 0, self.threshold >= 0.0, self.default_left)
        return np.asarray(self._cache["nan_left"])

    def _bitmasks(self) -> tuple[np.ndarray, np.ndarray, int, np.ndarray] | None:
        """QuickScorer's tables (Lucchese et al. 2015) when every tree has at most 64 leaves: per internal node the
        bits of its tree's leaves (numbered left to right) that stay reachable when the node's test fails (its left
        subtree's are cleared); a row reaches the lowest bit left after AND-ing the masks of the nodes whose test it
        fails, with no walk from node to node. Returned as (node, mask, width, leaf by bit): the nodes of each tree
        with splits, padded to ``width`` per tree with all-ones masks (which change nothing), so that one reduce
        over a (trees, width, rows) array ANDs every tree's masks."""
        if "bitmasks" in self._cache:
            return self._cache["bitmasks"]  # type: ignore[no-any-return]
        tables = None
        counts = np.bincount(self.leaf_tree, minlength=self.num_trees)
        if counts.size == 0 or counts.max() <= 64:
            bits = next(b for b in (8, 16, 32, 64) if counts.size == 0 or counts.max() <= b)
            ones = (1 << bits) - 1
            multi = self.root[self.root >= 0]
            width = int(counts.max()) - 1 if counts.size else 0
            node = np.zeros((multi.shape[0], width), dtype=np.int64)
            mask = np.full((multi.shape[0], width), ones, dtype=np.dtype(f"uint{bits}"))
            by_bit = np.zeros((multi.shape[0], 64), dtype=np.int64)
            for t, root in enumerate(multi.tolist()):
                order: list[int] = []  # the tree's leaves left to right
                inner: list[tuple[int, int]] = []  # (node, mask)

                def visit(code: int, order: list[int] = order, inner: list[tuple[int, int]] = inner
                          ) -> tuple[int, int]:
                    """The bit range [first, end) of the leaves under ``code``."""
                    if code < 0:
                        order.append(~code)
                        return len(order) - 1, len(order)
                    first, mid = visit(int(self.left[code]))
                    _, end = visit(int(self.right[code]))
                    inner.append((code, ones ^ (((1 << (mid - first)) - 1) << first)))
                    return first, end

                visit(root)
                node[t, : len(inner)] = [c for c, _ in inner]
                mask[t, : len(inner)] = [m for _, m in inner]
                by_bit[t, : len(order)] = order
            tables = (node.ravel(), mask.ravel(), width, by_bit)
        self._cache["bitmasks"] = tables
        return tables

    def leaves(self, X: np.ndarray) -> np.ndarray:
        """(rows, trees): the leaf (global number) each row reaches in each tree."""
        X = self._rows(X)
        tables = self._bitmasks()
        if tables is None:
            return self._walk(X)
        node, mask, width, by_bit = tables
        out = np.empty((X.shape[0], self.num_trees), dtype=np.int64)
        single = self.root < 0
        out[:, single] = ~self.root[single]
        trees = np.nonzero(~single)[0]
        step = max(1, _CELLS // max(1, node.shape[0]))
        feature, nan_possible = self.feature[node], bool(np.isnan(X).any())
        threshold, ones = self.threshold[node][:, None], np.array(np.iinfo(mask.dtype).max, dtype=mask.dtype)
        ranks = None if nan_possible or (self.missing == 1).any() else self._ranks()
        if ranks is not None:  # the tests on small integers: a byte a cell where a value is eight
            columns, threshold = self._binned(X, ranks), ranks[2][node][:, None]
        else:  # a node's values are then one contiguous copy of a feature's row
            columns = np.ascontiguousarray(X.T)
        for s in range(0, X.shape[0] if trees.shape[0] else 0, step):
            if ranks is not None:
                held = columns[feature, s: s + step] <= threshold
            else:
                held = self._goes_left(columns[feature, s: s + step], threshold, nan_possible, node[:, None])
            # A test that holds keeps every bit, a failed one its mask: the mask OR all ones where the test holds
            # (two passes over bytes, cheaper than np.where's select).
            kept = (mask[:, None] | (held.view(np.uint8).astype(mask.dtype) * ones)).reshape(trees.shape[0], width, -1)
            kept = np.bitwise_and.reduce(kept, axis=1)
            lowest = kept & (~kept + np.ones(1, mask.dtype))
            bit = np.frexp(lowest.astype(np.float64))[1] - 1  # exact: a power of two is a float64
            out[s: s + step, trees] = by_bit[np.arange(trees.shape[0])[:, None], bit].T
        return out

    def _ranks(self) -> tuple[list[int], list[np.ndarray], np.ndarray] | None:
        """Per feature split on, its thresholds sorted (distinct), and per internal node its threshold's place among
        its feature's: ``x <= threshold`` then holds exactly when fewer than ``place + 1`` thresholds are below ``x``
        (for every x but NaN), so a row's values become small integers once and each test compares those. None when
        a feature has more than 255 thresholds (LightGBM's max_bin bounds them; ours is 63)."""
        if "ranks" not in self._cache:
            used = np.unique(self.feature).tolist()
            values = [np.unique(self.threshold[self.feature == f]) for f in used]
            place = np.zeros(self.feature.shape[0], dtype=np.uint8)
            ok = all(v.shape[0] < 256 for v in values)
            for f, v in zip(used, values, strict=True):
                at = self.feature == f
                place[at] = np.searchsorted(v, self.threshold[at]) if ok else 0
            self._cache["ranks"] = (used, values, place) if ok else None
        return self._cache["ranks"]  # type: ignore[no-any-return]

    def _binned(self, X: np.ndarray, ranks: tuple[list[int], list[np.ndarray], np.ndarray]) -> np.ndarray:
        """(features, rows) uint8: per value, how many of its feature's thresholds lie below it (see :meth:`_ranks`);
        0 for features no split reads."""
        out = np.zeros((X.shape[1], X.shape[0]), dtype=np.uint8)
        columns = np.ascontiguousarray(X.T)  # one transposing copy: each feature's values then contiguous
        for f, v in zip(ranks[0], ranks[1], strict=True):
            out[f] = v.searchsorted(columns[f], side="left")
        return out

    def _walk(self, X: np.ndarray) -> np.ndarray:
        """:meth:`leaves` for trees of more than 64 leaves: every row down every tree, one level per step."""
        cur = np.broadcast_to(self.root, (X.shape[0], self.num_trees)).ravel().copy()
        row = np.repeat(np.arange(X.shape[0]), self.num_trees)
        active = np.nonzero(cur >= 0)[0]
        while active.size:
            node = cur[active]
            left = self._goes_left(X[row[active], self.feature[node]], self.threshold[node], True, node)
            nxt = np.where(left, self.left[node], self.right[node])
            cur[active] = nxt
            active = active[nxt >= 0]
        return (~cur).reshape(X.shape[0], self.num_trees)

    def raw(self, X: np.ndarray) -> np.ndarray:
        """Raw scores: the leaf values added tree after tree (cumsum adds in order, as LightGBM's loop does)."""
        if self.num_trees == 0:
            return np.zeros(np.asarray(X).shape[0])
        values = self.leaf_value[self.leaves(X)]
        return np.cumsum(values, axis=1)[:, -1] if values.shape[0] else np.zeros(0)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """What ``Booster.predict`` returns: the objective's transform of the raw score."""
        raw = self.raw(X)
        if self.objective in ("binary", "cross_entropy"):
            # libm's exp, as LightGBM's std::exp: numpy's SIMD exp differs from it in the last bit on some values.
            scale = self.sigmoid if self.objective == "binary" else 1.0
            e = np.fromiter(map(math.exp, (-scale * raw).tolist()), dtype=np.float64, count=raw.shape[0])
            return 1.0 / (1.0 + e)
        return raw

    # ---- TreeSHAP --------------------------------------------------------------------------------------------------

    def expected_value(self) -> float:
        """TreeSHAP's base value: per tree the training-count-weighted mean of its leaves, summed in tree order."""
        if "base" not in self._cache:
            total = 0.0
            for t, root in enumerate(self.root.tolist()):
                leaves = np.nonzero(self.leaf_tree == t)[0]
                if root < 0:
                    total += float(self.leaf_value[~root])
                    continue
                n = float(self.internal_count[root])
                value = 0.0
                for k in leaves.tolist():
                    value += (float(self.leaf_count[k]) / n) * float(self.leaf_value[k])
                total += value
            self._cache["base"] = total
        return float(self._cache["base"])

    def _shap_groups(self) -> list[_Leaves]:
        if "groups" in self._cache:
            return list(self._cache["groups"])
        paths: dict[int, list[tuple[float, list[int], list[float], list[int], list[bool], list[int]]]] = {}

        def walk(code: int, steps: list[tuple[int, bool]]) -> None:
            if code >= 0:
                walk(int(self.left[code]), [*steps, (code, True)])
                walk(int(self.right[code]), [*steps, (code, False)])
                return
            feats: list[int] = []
            zeros: list[float] = []
            slots: list[int] = []
            for i, (node, _) in enumerate(steps):
                child = steps[i + 1][0] if i + 1 < len(steps) else code
                count = self.internal_count[child] if child >= 0 else self.leaf_count[~child]
                share = float(count) / float(self.internal_count[node])
                f = int(self.feature[node])
                if f in feats:
                    zeros[feats.index(f)] *= share
                else:
                    feats.append(f)
                    zeros.append(share)
                slots.append(feats.index(f))
            paths.setdefault(len(feats), []).append(
                (float(self.leaf_value[~code]), feats, zeros, [s[0] for s in steps], [s[1] for s in steps], slots))

        for root in self.root.tolist():
            if root >= 0:
                walk(root, [])
        groups = []
        for _, items in sorted(paths.items()):
            width = max(len(it[3]) for it in items)

            def pad(seq: list[Any], fill: Any, w: int = width) -> list[Any]:
                return list(seq) + [fill] * (w - len(seq))

            groups.append(_Leaves(np.array([it[0] for it in items]), np.array([it[1] for it in items], dtype=np.int64),
                                  np.array([it[2] for it in items], dtype=np.float64),
                                  np.array([pad(it[3], 0) for it in items], dtype=np.int64),
                                  np.array([pad(it[4], False) for it in items], dtype=bool),
                                  np.array([pad(it[5], -1) for it in items], dtype=np.int64)))
        self._cache["groups"] = groups
        return groups

    def contributions(self, X: np.ndarray) -> np.ndarray:
        """(rows, features): TreeSHAP values in raw-score space; with :meth:`expected_value` they sum to the raw
        score."""
        X = self._rows(X)
        out = np.zeros((X.shape[0], len(self.feature_names)))
        for s in range(0, X.shape[0], _SHAP_ROWS):
            out[s: s + _SHAP_ROWS] = self._contributions(X[s: s + _SHAP_ROWS])
        return out

    def _contributions(self, X: np.ndarray) -> np.ndarray:
        n_rows, n_feat = X.shape
        nodes = np.arange(self.feature.shape[0])
        # Every internal node's decision for every row, once.
        left_all = self._goes_left(X[:, self.feature], self.threshold, True, nodes)
        flat = np.zeros(n_rows * n_feat)
        rows = np.arange(n_rows)[:, None] * n_feat
        for g in self._shap_groups():
            d = g.feature.shape[1]
            if d == 0:
                continue
            agree = left_all[:, g.node] == g.left  # (rows, L, P)
            # one[r, l, j]: the row meets every condition of the path's feature j.
            one = np.stack([np.all(agree | (g.slot != j), axis=2) for j in range(d)], axis=2).astype(np.float64)
            # Algorithm 2's EXTEND for the dummy root element then each feature: weights of the subsets by size.
            pw = np.zeros((n_rows, g.value.shape[0], d + 1))
            pw[:, :, 0] = 1.0
            for k in range(1, d + 1):
                z, o = g.zero[:, k - 1], one[:, :, k - 1:k]
                j = np.arange(k + 1)
                grown = (z[:, None] * pw[:, :, : k + 1] * (k - j)) / (k + 1)
                grown[:, :, 1:] += (o * pw[:, :, :k] * j[1:]) / (k + 1)
                pw[:, :, : k + 1] = grown
            for i in range(d):
                z, o = g.zero[:, i], one[:, :, i]
                # UNWOUND-SUM: the subset weights with feature i taken out, both branches (o is 0 or 1).
                with np.errstate(divide="ignore", invalid="ignore"):
                    nxt = pw[:, :, d].copy()
                    total_one = np.zeros(nxt.shape)
                    total_zero = np.zeros(nxt.shape)
                    for m in range(d - 1, -1, -1):
                        tmp = nxt * (d + 1) / (m + 1)
                        total_one += tmp
                        nxt = pw[:, :, m] - tmp * z * ((d - m) / (d + 1))
                        total_zero += (pw[:, :, m] / z) / ((d - m) / (d + 1))
                    w = np.where(o != 0, total_one, total_zero)
                phi = w * (o - z) * g.value
                flat += np.bincount((rows + g.feature[:, i]).ravel(), weights=phi.ravel(), minlength=flat.shape[0])
        return flat.reshape(n_rows, n_feat)

    def used_features(self) -> list[int]:
        return [int(f) for f in np.unique(self.feature)]
