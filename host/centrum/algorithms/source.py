"""Source-only extraction: a learned block classifier on the page's HTML alone (no browser, no geometry).

The page is parsed with lexbor (selectolax) into blocks (runs of text with the same block-level container,
``source_features``); a LightGBM model (``centrum/weights/source-v4.lgb.txt``, trained by
``centrum train-source``) gives each block the share of it expected in the main text, from its text (length,
script-fair words, link density, sentence and clause marks), its container and ancestors (tags, class/id cue
groups, subtree text and paragraph shares, the deepest elements holding half / most of the page's paragraph
text), its position and its neighbours. A second model (``source-v4-context2``, the same command) scores each block
again from those columns and the first model's scores around it: its neighbours', its ancestors' subtrees', its
sibling run's and heading section's, the page's, and where the page's main container lies by those scores.
Blocks at or above ``block_threshold`` are the answer, in document order; when none reaches it, the best block
alone when it reaches ``min_best``. One pass over the elements in Python, the rest vectorized: linear in the page
(the rank of the scores: n log n).

This is the extractor of ``--no-render`` (``centrum extract --no-render``, ``centrum batch --no-render``), where
there is no snapshot: the answer is the text and the ``tag:k`` paths (``centrum.annotation.labels``) of the blocks'
containers. On a collected snapshot (``run``) the same model reads the snapshot's source serialization and answers
node ids.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from ..core import limits
from ..core.config import ConfigError, ranged
from ..core.result import Result
from ..core.snapshot import Snapshot
from . import ensemble as E
from . import source_features as S
from .ensemble.model import LGB_SUFFIX, Boosted
from .source_features import SourceError

NAME = "source"
__all__ = ["Config", "SourceError", "run", "run_source"]
WEIGHTS_NAME = "source-v4"
CONTEXT_WEIGHTS_NAME = "source-v4-context2"
MAX_PATHS = 2_000  # node paths reported per answer (a crawl row stays bounded)


NO_CONTEXT = "none"


def _check_context(key: str, name: str) -> None:
    if name == NO_CONTEXT:
        return
    try:
        E.check_model_name(key, name)
    except ConfigError as e:
        raise ConfigError(f"{e}; or {NO_CONTEXT!r}: no context stage") from None


@dataclass(frozen=True)
class Config:
    # The block model: a model *name* (shipped centrum/weights/NAME.lgb.txt, or installed with `centrum models
    # install` from the output of `centrum train-source`), never a path; checked as the ensemble's are.
    weights: str = field(default=WEIGHTS_NAME, metadata={"check": E.check_model_name})
    # The context stage: a model name as ``weights`` (the ``-context`` file `centrum train-source` writes with it;
    # it reads the scores of the ``weights`` model it was trained with), or "none": the first model's scores are the
    # answer's (the former models, trained before there was a context stage).
    context_weights: str = field(default=CONTEXT_WEIGHTS_NAME, metadata={"check": _check_context})
    # Keep a block when the model's expected gold share is at least this (the block filter's rule,
    # docs/ensemble.md: a block is kept when more of it is expected to be main text than not).
    block_threshold: float = ranged(0.5, 0.0, 1.0)
    # When no block reaches the threshold, the best block alone if its share is at least this; else no answer.
    min_best: float = ranged(0.2, 0.0, 1.0)
    # Pages longer than this many characters are refused with a clear error (a request's byte limit, limits.py).
    max_chars: int = ranged(limits.REQUEST_BYTES, 1, limits.REQUEST_BYTES)


@functools.cache
def _shipped(name: str, context: bool) -> Boosted:
    text = (resources.files("centrum") / "weights" / f"{name}{LGB_SUFFIX}").read_text(encoding="utf-8")
    return Boosted.from_string(text, S.context_feature_names() if context else S.feature_names())


def load_model(name: str = WEIGHTS_NAME, context: bool = False) -> Boosted:
    """The block model named ``name``, or with ``context`` the context stage (shipped: loaded once; installed: read
    each time, it may be replaced). ConfigError for a name that is no model, or a model of other features (an
    ensemble model, or a first stage given as the context stage)."""
    key = "context_weights" if context else "weights"
    E.check_model_name(key, name)
    try:
        if name in E.shipped_models():
            return _shipped(name, context)
        path = E.installed_model_path(name)
        if path is None or not path.name.endswith(LGB_SUFFIX):
            raise OSError(f"model {name!r} is not an installed LightGBM model")
        return Boosted.load(path, S.context_feature_names() if context else S.feature_names())
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        what = "context stage" if context else "source-only model"
        raise ConfigError(f"{key}: model {name!r} is not a usable {what}: {type(e).__name__}: {e}") from e


@dataclass
class Answer:
    tree: S.SourceTree
    scores: np.ndarray  # (blocks,) expected gold share
    keep: np.ndarray  # (blocks,) bool
    timing_ms: dict[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return join_blocks(self.tree, self.keep)

    def containers(self) -> list[int]:
        """The elements that stand for the kept blocks (pre-order indexes, none inside another): the top-most
        elements whose blocks are all kept, and the container of a kept block that also holds a dropped one."""
        tree = self.tree
        n = tree.parent.shape[0]
        if not self.keep.any():
            return []
        blocks = S.subtree_sum(tree, np.bincount(tree.block_el, minlength=n).astype(np.float64))
        kept = S.subtree_sum(tree, np.bincount(tree.block_el[self.keep], minlength=n).astype(np.float64))
        full = (blocks > 0) & (kept == blocks)
        parent_full = np.concatenate([[False], full])[tree.parent + 1]
        chosen = set(np.nonzero(full & ~parent_full)[0].tolist()) | set(tree.block_el[self.keep].tolist())
        out: list[int] = []
        end = -1
        for e in sorted(chosen):
            if e >= end:
                out.append(e)
                end = int(tree.end[e])
        return out


def join_blocks(tree: S.SourceTree, keep: np.ndarray) -> str:
    """The kept blocks' texts, one per line, in document order."""
    return "\n".join(t for t, k in zip(tree.block_text, keep.tolist(), strict=True) if k)


def select(scores: np.ndarray, cfg: Config) -> np.ndarray:
    keep = scores >= cfg.block_threshold
    if not keep.any() and scores.size and float(scores.max()) >= cfg.min_best:
        keep[int(np.argmax(scores))] = True
    return keep


def answer(html: str, cfg: Config | None = None) -> Answer:
    """Parse, score (both stages) and select; :class:`SourceError` for a page that cannot be read."""
    cfg = cfg or Config()
    first = load_model(cfg.weights)
    context = None if cfg.context_weights == NO_CONTEXT else load_model(cfg.context_weights, context=True)
    t0 = time.perf_counter()
    tree = S.parse(html, cfg.max_chars)
    t1 = time.perf_counter()
    X, _ = S.block_features(tree)
    t2 = time.perf_counter()
    scores = first.predict(X)
    if context is not None:
        scores = context.predict(S.context_features(tree, X, scores))
    keep = select(scores, cfg)
    t3 = time.perf_counter()
    return Answer(tree, scores, keep, {"parse": (t1 - t0) * 1000, "features": (t2 - t1) * 1000,
                                       "score": (t3 - t2) * 1000})


def node_paths(tree: S.SourceTree, elements: list[int]) -> list[str]:
    """``tag:k>...`` root paths (``centrum.annotation.labels``' format: k = 1-based place among the element
    children)."""
    parent, child_k, tags = tree.parent, tree.child_k, tree.tags
    made: dict[int, str] = {}  # each element's path made once: the kept containers share their ancestors
    out = []
    for e in elements[:MAX_PATHS]:
        chain = []
        while e >= 0 and e not in made:
            chain.append(e)
            e = int(parent[e])
        path = made.get(e, "")
        for x in reversed(chain):
            step = f"{tags[x]}:{int(child_k[x])}"
            path = made[x] = f"{path}>{step}" if path else step
        out.append(path)
    return out


def _debug(a: Answer) -> dict[str, object]:
    return {"blocks": int(a.scores.size), "kept": int(a.keep.sum()),
            "block_scores": [round(float(s), 4) for s in a.scores[:200].tolist()]}


def run_source(html: str | bytes, config: Config | None = None) -> Result:
    """Main content of raw HTML without a browser: ``text`` and ``debug["node_paths"]`` set, ``nodes`` empty (no
    snapshot gives them ids). Bytes are decoded with ``centrum.core.charset``. :class:`SourceError` (a ValueError) for a
    page that cannot be read: empty, over ``max_chars``, unparsable."""
    from ..core import charset

    t0 = time.perf_counter()
    a = answer(charset.decode(html) if isinstance(html, bytes) else html, config)
    text = a.text
    dbg = {**_debug(a), "node_paths": node_paths(a.tree, a.containers())}
    return Result(NAME, [], debug=dbg, text=text, message="" if text else "no block scored as main content",
                  timing_ms={**a.timing_ms, "algorithm": (time.perf_counter() - t0) * 1000})


def run(snapshot: Snapshot, config: Config | None = None) -> Result:
    """The same model on a collected snapshot's source serialization; the answer is the kept containers' node ids
    (their ``data-cx``)."""
    t0 = time.perf_counter()
    if not snapshot.source:
        return Result(NAME, [], message="the snapshot has no source serialization (collect it with source: true)")
    try:
        a = answer(snapshot.source, config)
    except S.SourceError as e:
        return Result(NAME, [], message=str(e))
    nodes = []
    for e in a.containers():
        cx = a.tree.cx[e]
        if cx is not None and cx.isdigit() and int(cx) < snapshot.n:
            nodes.append(int(cx))
    return Result(NAME, sorted(set(nodes)), debug=_debug(a),
                  message="" if nodes else "no block scored as main content",
                  timing_ms={**a.timing_ms, "algorithm": (time.perf_counter() - t0) * 1000})
