"""Training and site-grouped cross-validation of the source-only extractor (``centrum train-source``).

Every page of the data sets is parsed from its HTML (no rendering: no snapshot cache needed), its blocks get the
features of ``algorithms.source_features`` and the ensemble's block labels (the share of a block's 4-token
shingles found in the gold text; snippet gold: 1 / 0 for a block holding a "with" / "without" snippet, else
unknown and left out). A LightGBM cross-entropy model is fitted on the labelled blocks, each data set weighing the
same and a block by a power of its words (``TrainOptions``). A second model (the context stage) is fitted the same
way on the block's columns and the first model's scores of the blocks around it; the scores it reads for a training page
come from a first model trained without that page's fold, as they will for a page the models never saw (stacking).
Training runs ``deterministic`` on a fixed thread count: the same pages and seed write the same model bytes.

Validation is k-fold grouped by site (``evaluation.sites``: no registered domain in two folds): each fold's pages
are answered by a model trained on the other folds and scored with the page metric of their data set (AEB
token-shingle F1, trafilatura's snippet F1), aggregated as each set publishes it, as ``centrum train --cv`` does for
the rendered ensemble.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..algorithms import source
from ..algorithms import source_features as S
from ..algorithms.ensemble.model import Boosted
from ..core import charset
from ..core.extras import need
from ..gold.datasets import PageItem
from ..gold.sites import page_site, site_folds
from .learner import aggregate_f1, block_labels, light_score

INDEPENDENT_GOLD_EXCLUDES = ("readability-testpages",)  # its gold is Readability.js's output


@dataclass(frozen=True)
class TrainOptions:
    # source-v3's: 150 trees of 15 leaves score as 200 of 31 did in site CV (docs/algorithms/source.md) with a
    # third of the tests per block, and scoring is a large part of a page's CPU time.
    rounds: int = 150
    # The context stage's trees: it starts from the first stage's scores, so fewer trees reach what more would
    # (docs/algorithms/source.md), and its trees are paid on every page.
    context_rounds: int = 80
    learning_rate: float = 0.1
    leaves: int = 15
    min_leaf: int = 100  # blocks are many and their labels noisy: large leaves
    # A block weighs (words + 1) ** power. The page metric counts tokens, so long blocks matter more, but in the
    # first stage the many short boilerplate lines must not vanish (the square root); the context stage decides what
    # the page keeps, where a block's tokens are what it adds to or takes from the page's F1.
    word_power: float = 0.5
    context_word_power: float = 1.0
    # A page's blocks together weigh (their summed weights) ** (1 - page_power). At 1 every page of a data set weighs
    # the same, as in the metric, a mean of per-page F1: the context stage decides each page's answer, where a short
    # page's few blocks are its whole F1. The first stage learns what a block is from all blocks alike.
    page_power: float = 0.0
    context_page_power: float = 1.0
    bagging: float = 0.5  # rows per tree: half the cost, and the folds' blocks are plentiful
    seed: int = 0
    # One thread: fixed (deterministic=True then makes the model bytes depend only on data and seed), and on a
    # busy machine LightGBM's OpenMP threads wait on each other far longer than one thread computes.
    threads: int = 1

    def for_context(self) -> TrainOptions:
        """The context stage's options: its trees, word and page powers."""
        return replace(self, rounds=self.context_rounds, word_power=self.context_word_power,
                       page_power=self.context_page_power)


def block_weights(words: np.ndarray, opts: TrainOptions) -> np.ndarray:
    """The training weights of a page's labelled blocks (their words), before the data sets are balanced."""
    w = (words + 1.0) ** opts.word_power
    return w / w.sum() ** opts.page_power


@dataclass
class PageRows:
    item: PageItem
    site: str
    X: np.ndarray  # (blocks, features) float32
    y: np.ndarray  # (blocks,) gold share, NaN where unknown
    words: np.ndarray  # (blocks,)
    tree: S.SourceTree | None = field(default=None, repr=False)


def page_rows(item: PageItem, keep_tree: bool = True) -> PageRows | str:
    """The page's block rows, or why there are none (unreadable page)."""
    data = item.html()
    try:
        tree = S.parse(charset.decode(data), source.Config().max_chars)
    except S.SourceError as e:
        return str(e)
    X, names = S.block_features(tree)
    y = block_labels(item.gold, tree.block_text)
    words = np.expm1(X[:, names.index("log_words")])
    return PageRows(item, page_site(item, data), X.astype(np.float32), y, words, tree if keep_tree else None)


def collect(items: Iterable[PageItem], progress: Callable[[Iterable[PageItem]], Iterable[PageItem]] | None = None
            ) -> tuple[list[PageRows], dict[str, str]]:
    rows, skipped = [], {}
    for item in (progress(items) if progress else items):
        r = page_rows(item)
        if isinstance(r, str):
            skipped[f"{item.dataset}/{item.id}"] = r
        else:
            rows.append(r)
    return rows, skipped


def fit(rows: Sequence[PageRows], opts: TrainOptions, matrices: Sequence[np.ndarray] | None = None,
        names: list[str] | None = None) -> Boosted:
    """LightGBM cross-entropy on the labelled blocks of ``rows`` (their ``X``, or ``matrices``: one per row)."""
    lgb = need("lightgbm", "train", "centrum train-source")

    names = names or S.feature_names()
    per_set = Counter(r.item.dataset for r in rows)
    Xs, ys, ws = [], [], []
    for i, r in enumerate(rows):
        ok = ~np.isnan(r.y)
        if not ok.any():
            continue
        w = block_weights(r.words[ok], opts)
        Xs.append((r.X if matrices is None else matrices[i])[ok])
        ys.append(r.y[ok])
        ws.append(w / per_set[r.item.dataset])  # every data set weighs the same in total pages
    if not Xs:
        raise ValueError("no labelled blocks to train on")
    X, y, w = np.concatenate(Xs), np.clip(np.concatenate(ys), 0.0, 1.0), np.concatenate(ws)
    w = w * (w.shape[0] / w.sum())
    params = {"objective": "cross_entropy", "learning_rate": opts.learning_rate, "num_leaves": opts.leaves,
              "min_data_in_leaf": opts.min_leaf, "feature_fraction": 0.8, "bagging_fraction": opts.bagging,
              "bagging_freq": 1, "max_bin": 63, "seed": opts.seed, "deterministic": True, "force_row_wise": True,
              "num_threads": opts.threads, "verbosity": -1}
    data = lgb.Dataset(X, label=y, weight=w, feature_name=names, params=params)
    booster = lgb.train(params, data, num_boost_round=opts.rounds)
    return Boosted(booster, names, {"objective": "cross_entropy", "blocks": int(X.shape[0])})


@dataclass(frozen=True)
class TwoStage:
    """The block model (first stage) and the model that re-scores each block from the first stage's scores around it
    (``source_features.context_features``)."""

    first: Boosted
    context: Boosted

    def predict(self, r: PageRows) -> np.ndarray:
        X = r.X.astype(np.float64)
        assert r.tree is not None
        return self.context.predict(S.context_features(r.tree, X, self.first.predict(X)))


def _context_rows(rows: Sequence[PageRows], scores: Sequence[np.ndarray]) -> list[np.ndarray]:
    out = []
    for r, s in zip(rows, scores, strict=True):
        assert r.tree is not None
        out.append(S.context_features(r.tree, r.X.astype(np.float64), s).astype(np.float32))
    return out


class FirstStages:
    """First-stage models trained without some folds, each fitted once: the context model of a training set is
    fitted on first-stage scores its pages did not train (stacking), so a fold's pages are scored by the model of
    the training set without that fold too. In k-fold CV the model without folds {f, g} serves both outer folds."""

    def __init__(self, rows: Sequence[PageRows], folds: Sequence[int], opts: TrainOptions,
                 progress: Callable[[str], None] | None = None) -> None:
        self.rows, self.folds, self.opts, self.progress = rows, list(folds), opts, progress
        self.models: dict[frozenset[int], Boosted] = {}

    def without(self, out: frozenset[int]) -> Boosted:
        if out not in self.models:
            if self.progress:
                self.progress(f"first stage without folds {sorted(out) or 'none'}")
            self.models[out] = fit([r for r, g in zip(self.rows, self.folds, strict=True) if g not in out], self.opts)
        return self.models[out]

    def two_stage(self, out: frozenset[int]) -> TwoStage:
        """The pair trained on the pages outside the folds ``out``."""
        inside = [i for i, g in enumerate(self.folds) if g not in out]
        if not inside:
            raise ValueError("no pages to train on outside the held-out folds")
        scores = [self.without(out | {self.folds[i]}).predict(self.rows[i].X.astype(np.float64)) for i in inside]
        train = [self.rows[i] for i in inside]
        if self.progress:
            self.progress(f"context stage without folds {sorted(out) or 'none'}")
        context = fit(train, self.opts.for_context(), _context_rows(train, scores), S.context_feature_names())
        return TwoStage(self.without(out), context)


def stages(rows: Sequence[PageRows], opts: TrainOptions, k: int = 5,
           progress: Callable[[str], None] | None = None) -> FirstStages:
    """The stage models of ``rows`` over k site-grouped folds: ``site_cv`` and ``two_stage(frozenset())`` (the model
    of all pages) share the first stages they both need."""
    return FirstStages(rows, site_folds([r.site for r in rows], k), opts, progress)


def page_text(r: PageRows, scores: np.ndarray, cfg: source.Config) -> str:
    assert r.tree is not None
    return source.join_blocks(r.tree, source.select(scores, cfg))


def site_cv(models: FirstStages, thresholds: Sequence[float] = (0.5,)
            ) -> dict[float, dict[str, list[tuple[float, ...]]]]:
    """{threshold: {data set: per-page metric counts}} of each page answered by the two stages trained on the other
    folds (nested: their context stage was fitted on scores of first stages that had not seen the pages either)."""
    out: dict[float, dict[str, list[tuple[float, ...]]]] = {t: {} for t in thresholds}
    for f in sorted(set(models.folds)):
        test = [r for r, g in zip(models.rows, models.folds, strict=True) if g == f]
        model = models.two_stage(frozenset({f}))
        for r in test:
            scores = model.predict(r)
            for t in thresholds:
                text = page_text(r, scores, source.Config(block_threshold=t))
                out[t].setdefault(r.item.dataset, []).append(light_score(r.item.gold, text)[1])
    return out


def f1_table(counts: dict[str, list[tuple[float, ...]]], kinds: dict[str, str], apart: Sequence[str] = ()
             ) -> dict[str, float]:
    """{data set: published aggregate F1}, plus "mean" over the sets with independent gold but those ``apart``
    (training-only sets: reported, not averaged, so the mean stays comparable with runs without them)."""
    table = {ds: aggregate_f1(kinds[ds], c) for ds, c in sorted(counts.items())}
    indep = [v for ds, v in table.items() if ds not in INDEPENDENT_GOLD_EXCLUDES and ds not in apart]
    table["mean"] = float(np.mean(indep)) if indep else float("nan")
    return table


def kinds_of(rows: Sequence[PageRows]) -> dict[str, str]:
    return {r.item.dataset: r.item.gold.kind for r in rows}


def report_markdown(tables: dict[str, dict[str, float]], pages: Counter[str], reference: dict[str, Any] | None = None,
                    apart: Sequence[str] = ()) -> str:
    """A markdown table: one row per data set, one column per entry of ``tables``."""
    cols = list(tables)
    lines = ["| data set | pages | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    sets = sorted({ds for t in tables.values() for ds in t if ds != "mean"})
    for ds in sets:
        name = f"{ds} (training only, not in the mean)" if ds in apart else ds
        lines.append(f"| {name} | {pages[ds]} | " + " | ".join(f"{tables[c].get(ds, float('nan')):.3f}" for c in cols)
                     + " |")
    n = sum(v for ds, v in pages.items() if ds not in INDEPENDENT_GOLD_EXCLUDES and ds not in apart)
    lines.append(f"| **mean, sets with independent gold** | {n} | "
                 + " | ".join(f"{tables[c].get('mean', float('nan')):.3f}" for c in cols) + " |")
    return "\n".join(lines) + "\n"
