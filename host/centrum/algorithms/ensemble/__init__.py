"""Centrum's ensemble: choose the main content among every algorithm's proposals with a small learned scorer.

1. **proposals**: run the base algorithms the models were trained with (semantic, GCE, zoning, R4, DANA, DANAg,
   AdDANAg, unless `centrum train --without` left some out) on the same snapshot (they share its cached tree
   arrays); take each one's answer and runners-up (``Result.candidates``); and Arc90 Readability's selection as one
   more proposer: the element with the best content score plus the siblings Readability appends to it, then the
   next best-scoring elements.
2. **candidates**: those node sets plus the ancestors of each up to ``<body>`` and children holding a quarter of its
   text (the right answer is often one level away from a proposal), capped at ``Config.max_candidates``.
3. **features** (:mod:`.features`, language-independent, vectorized subtree sums): text and script-fair word counts
   and shares, link character and link area density, text-area density, box size and position relative to the
   viewport and document centre, depth, tag, positive/negative class/id cues, and per proposer: did it answer, is
   this its answer, its rank for this candidate, text precision/recall of the candidate against its answer, plus
   agreement summaries; the candidate's context (paragraph-like text around it, how its text splits among its
   children, its distance below the page title, repeated children, finer class/id cue groups); Arc90 Readability's
   content score relative to the page's top-scoring element.
4. **scorer** (:mod:`.model`): LightGBM trees ranking the page's candidates (lambdarank on their token F1, every
   training data set weighing the same), shipped in LightGBM's own text format as
   ``centrum/weights/<WEIGHTS_NAME>.lgb.txt`` and reproduced by ``centrum train``. Models are chosen by *name*
   (``weights=NAME``): the file shipped in ``centrum/weights/`` or one that ``centrum models install`` put in
   ``$CENTRUM_HOME/models/``; parameters come from requests, so they never name a path. The best-scoring candidate
   wins; the reported candidates carry their per-feature contributions (``features``, TreeSHAP values) for the
   debugger.
5. **block filter** (:mod:`.blocks`): the chosen subtree's text is cut into blocks (the lines ``text_of`` would
   break), each scored by a second model (``<BLOCK_WEIGHTS_NAME>.lgb.txt``, same command, cross-entropy) that
   predicts the share of the block in the gold text; blocks below ``block_threshold`` are dropped (never all of
   them). The rule-based trim (navigation/aside/footer, strong negative class/id cues, link groups; never media) is
   one of its features and remains as ``filter="rules"``. Elements holding no dropped text (images and tables
   included) stay in the answer. Output text is rendered text only.

The models' versions, their figures and what changed between them are on docs/ensemble.md and in CHANGELOG.md.
"""

from __future__ import annotations

import functools
import json
import re
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ... import algorithms as registry
from ...core.config import ConfigError, ranged
from ...core.result import Candidate, Result, basic_overlays, block_overlays
from ...core.snapshot import Snapshot
from ...core.trace import debug_wanted
from ...core.tree import cover_count
from ..model_columns import BLOCK_WEIGHTS_NAME, NOT_RUN, WEIGHTS_NAME, algorithm_of, proposers_of_names
from . import blocks as B
from . import features as F
from .model import LGB_SUFFIX, Boosted, Model, Stumps, load_model_file

# A model name: no path separator, no "..", no leading dot, so that a name can only ever mean one file in the
# package's weights folder or in $CENTRUM_HOME/models/.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*")
MODEL_NAME_CHARS = 64


def models_dir() -> Path:
    """Where ``centrum models install`` puts models: ``$CENTRUM_HOME/models/``."""
    from ...core.paths import centrum_home

    return centrum_home() / "models"


# Model files: LightGBM's own text format, or the stumps' JSON; a name means the first that exists.
MODEL_SUFFIXES = (LGB_SUFFIX, ".json")


def model_files(names: list[str]) -> dict[str, str]:
    """{model name: file name} of the model files among ``names`` (a folder listing)."""
    out: dict[str, str] = {}
    for suffix in reversed(MODEL_SUFFIXES):  # earlier suffixes win
        for n in names:
            if n.endswith(suffix) and is_model_name(n[: -len(suffix)]):
                out[n[: -len(suffix)]] = n
    return out


@functools.cache
def _shipped_files() -> dict[str, str]:
    # The package's own folder does not change while it runs; listing it per page cost milliseconds a page.
    return model_files([p.name for p in (resources.files("centrum") / "weights").iterdir()])


def _installed_files() -> dict[str, str]:
    folder = models_dir()
    if not folder.is_dir():
        return {}
    return model_files([p.name for p in folder.iterdir() if p.is_file()])


def shipped_models() -> list[str]:
    return sorted(_shipped_files())


def installed_models() -> list[str]:
    return sorted(_installed_files())


def installed_model_path(name: str) -> Path | None:
    found = _installed_files().get(name)
    return models_dir() / found if found else None


def is_model_name(name: str) -> bool:
    return len(name) <= MODEL_NAME_CHARS and MODEL_NAME.fullmatch(name) is not None


def check_model_name(key: str, name: str) -> None:
    """ConfigError unless ``name`` is a shipped or installed model. The message depends only on ``name`` and the
    list of models, never on whether some other file exists: a request cannot probe the file system with it."""
    if not is_model_name(name):
        raise ConfigError(f"{key}: {name[:80]!r} is not a model name (letters, digits, '_', '-', inner '.'; at most "
                          f"{MODEL_NAME_CHARS} characters; install a file with `centrum models install FILE`)")
    if name not in shipped_models() and name not in installed_models():
        raise ConfigError(f"{key}: no model named {name!r} (shipped: {', '.join(shipped_models())}; installed in "
                          f"$CENTRUM_HOME/models: {', '.join(installed_models()) or 'none'})")


MAX_DEBUG_BLOCKS = 200  # block trace entries in the debug output


@dataclass(frozen=True)
class Config:
    # Candidate scorer: a model name (shipped centrum/weights/NAME.json or installed $CENTRUM_HOME/models/NAME.json).
    weights: str = field(default=WEIGHTS_NAME, metadata={"check": check_model_name})
    # Candidate cap per page: scoring stays linear in the page and the learner sees comparable sets.
    max_candidates: int = ranged(150, 1, 1_000)
    # Runners-up read from each algorithm's Result.candidates (best first).
    per_algorithm: int = ranged(8, 0, 1_000)
    # Post-processing of the chosen node (trim link groups and boilerplate): "model" (learned block
    # filter), "rules" (the rule trim below), "none".
    filter: Literal["model", "rules", "none"] = "model"
    # Block filter: a model name, as ``weights`` (the ``-blocks`` file of `centrum train`).
    block_weights: str = field(default=BLOCK_WEIGHTS_NAME, metadata={"check": check_model_name})
    # Keep a block when its predicted gold share is at least this: the site-CV sweep of `centrum train --cv` with its
    # nested choice (each fold at the threshold best on the other folds) puts the best mean here for the shipped
    # models (docs/ensemble.md).
    block_threshold: float = ranged(0.4, 0.0, 1.0)
    # Where the block filter looks: "candidate" (drop blocks of the chosen subtree) or "page" (every block of the page
    # is kept or dropped, relative to the chosen subtree: it can add the other posts of a thread or the parts of a
    # product page that no single subtree holds without boilerplate).
    scope: Literal["candidate", "page"] = "page"
    # Comment sections (class/id "comment" or "disqus" naming no thread, features.COMMENT_SECTION) in the
    # block filter's answer: "drop" leaves them out when at least `comment_min_body` characters of the answer stay
    # outside them (a thread whose every post is marked a comment keeps them); "keep" for gold that keeps readers'
    # comments, as CleanEval's does. Site CV with and without, and the floor's sweep: docs/ensemble.md.
    comments: Literal["drop", "keep"] = "drop"
    comment_min_body: int = ranged(200, 0, 10_000_000)
    # Comment sections by shape too (ensemble.shapes: runs of sibling items with a byline, date or reply control),
    # whatever their names: an item is set aside as a named section is when at least `comment_min_body` characters of
    # the answer outside items come before it and fewer after it (an article's comments close it; a thread's posts, a
    # listing's items are the page). On with the models trained so (ensemble-v14: `centrum train` scores its final
    # outputs with it, and the site CV measures it).
    comment_shapes: bool = True
    # Rule trim (filter="rules", and the `rule_trimmed` block feature):
    # A link group: link characters / characters at least this, with at least `link_group_links` links.
    link_group_density: float = ranged(0.6, 0.0, 1.0)
    link_group_links: int = ranged(3, 0, 10_000_000)
    # Never trim away more than this share of the chosen text (a wrong cue must not empty the answer).
    max_trim_share: float = ranged(0.5, 0.0, 1.0)
    # Candidates reported in Result.candidates.
    report_candidates: int = ranged(20, 0, 1_000)
    # The best this many of them carry their per-feature contributions (exact TreeSHAP costs more per candidate than
    # scoring all of them): by default the answer's, "why this one"; raise it to see the runners-up's. Only when the
    # caller wants the debug output: the debugger reads them, a press does not.
    explain: int = ranged(1, 0, 1_000)


@functools.cache
def _shipped(name: str, blocks: bool) -> Model:
    file_name = _shipped_files()[name]
    text = (resources.files("centrum") / "weights" / file_name).read_text(encoding="utf-8")
    if file_name.endswith(LGB_SUFFIX):
        return _checked(Boosted.from_string(text), blocks)
    return _checked(Stumps.from_json(json.loads(text)), blocks)


def reads_features(names: list[str], blocks: bool) -> bool:
    """Whether a model trained on ``names`` runs on this version's features: new features are always appended, so a
    model trained before them (the v5 block filter before the page scope, v6 before the declared-text features)
    reads the leading columns."""
    current = B.feature_names() if blocks else F.feature_names()
    names = [n.removeprefix(NOT_RUN) if algorithm_of(n) else n for n in names]
    return 0 < len(names) <= len(current) and names == current[: len(names)]


def _checked(model: Model, blocks: bool) -> Model:
    if not reads_features(model.feature_names, blocks):
        current = B.feature_names() if blocks else F.feature_names()
        differ = sorted(set(model.feature_names) ^ set(current))
        raise ValueError(f"model was trained on other features (differ: {', '.join(differ[:8]) or 'order'})")
    return model


@functools.lru_cache(maxsize=4)
def _installed(path: str, mtime_ns: int, size: int, blocks: bool) -> Model:
    """An installed model file, read once per version of the file (a host answering with a former model would
    otherwise parse megabytes of trees on every request); a file replaced in place has another key."""
    return _checked(load_model_file(Path(path)), blocks)


def _load(name: str, blocks: bool) -> Model:
    key = "block_weights" if blocks else "weights"
    check_model_name(key, name)
    try:
        if name in shipped_models():
            return _shipped(name, blocks)
        path = installed_model_path(name)
        if path is None:  # removed since the check
            raise OSError(f"model {name!r} is no longer installed")
        st = path.stat()
        return _installed(str(path), st.st_mtime_ns, st.st_size, blocks)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        kind = "block filter" if blocks else "candidate scorer"
        raise ConfigError(f"{key}: model {name!r} is not a usable {kind}: {type(e).__name__}: {e}") from e


def load_model(name: str = WEIGHTS_NAME) -> Model:
    """The candidate scorer named ``name`` (shipped or installed, see :func:`check_model_name`)."""
    return _load(name, False)


def load_block_model(name: str = BLOCK_WEIGHTS_NAME) -> Model:
    """The block filter named ``name`` (the ``-blocks`` file of `centrum train`, installed by name)."""
    return _load(name, True)


def trained_names(names: list[str], proposers: tuple[str, ...]) -> list[str]:
    """Feature names as a model trained with only ``proposers`` records them."""
    return [f"{NOT_RUN}{n}" if (a := algorithm_of(n)) is not None and a not in proposers else n for n in names]


def proposers_of(*models: Model) -> tuple[str, ...]:
    """The base algorithms to run for these models: those some model was trained with (every one for a model from
    before `--without`)."""
    return proposers_of_names(*(m.feature_names for m in models))


# Parameters of the base algorithms as proposers, where they differ from the defaults: GCE answers nothing when every
# expansion reaches <body>, as it did when the shipped models were trained (its default since returns the best region
# below <body>, the paper's rule; a model trained on that answer would set this with its retrain).
BASE_PARAMS: dict[str, dict[str, Any]] = {"gce": {"at_body": "none"}}


def run_base(snap: Snapshot, names: tuple[str, ...] = F.BASE_ALGORITHMS,
             params: dict[str, dict[str, Any]] = BASE_PARAMS) -> tuple[dict[str, Result], dict[str, float]]:
    """The base algorithms ``names`` with their default configs but ``params`` (by default :data:`BASE_PARAMS`, as
    proposers); a failing one is recorded as no answer, and one not in ``names`` is absent (the ensemble reads an
    absent algorithm as one that answered nothing)."""
    out: dict[str, Result] = {}
    ms: dict[str, float] = {}
    for name in names:
        t0 = time.perf_counter()
        try:
            out[name] = registry.run(name, snap, params.get(name))
        except Exception as e:  # noqa: BLE001 - one broken proposer must not break the ensemble
            out[name] = Result(name, [], message=f"{type(e).__name__}: {e}")
        ms[name] = (time.perf_counter() - t0) * 1000
    return out, ms


def only(results: dict[str, Result], names: tuple[str, ...]) -> dict[str, Result]:
    """The results of ``names`` among ``results``: what a model trained with those proposers reads."""
    return {a: r for a, r in results.items() if a in names}


@dataclass
class PageModel:
    """Everything the ensemble derives from one page before scoring (also what `centrum train` stores)."""

    candidates: list[tuple[int, ...]]
    X: np.ndarray
    arrays: F.PageArrays
    proposals: F.Proposals


def prepare(snap: Snapshot, results: dict[str, Result], cfg: Config) -> PageModel:
    arrays = F.page_arrays(snap)
    prop = F.proposals(snap, results, cfg.per_algorithm, arrays)
    cands = F.gather(snap, prop, arrays, cfg.max_candidates)
    X = F.features(snap, cands, prop, arrays)
    return PageModel(cands, X, arrays, prop)


# ---- trimming ------------------------------------------------------------------------------------------------
_BOILER_TAGS = ("nav", "aside", "footer", "form", "button", "select", "noscript", "menu")
_MEDIA = ("img", "picture", "video", "audio", "figure", "svg", "canvas", "iframe", "table", "math")


def trim_mask(snap: Snapshot, nodes: tuple[int, ...], arrays: F.PageArrays, cfg: Config) -> np.ndarray:
    """Per element: removed by post-processing (only strict descendants of ``nodes``)."""
    n = snap.n
    inside = F._inside(snap, np.asarray(nodes, dtype=np.int64))
    inside[list(nodes)] = False  # the chosen roots themselves stay
    idx = np.nonzero(inside)[0]
    drop = np.zeros(n, dtype=bool)
    if idx.size == 0:
        return drop
    tags = snap.tags[idx]
    role = snap.attr("role")[idx]
    cue = arrays.strong_cue[idx]
    media = snap.tag_in(_MEDIA) & ~arrays.in_link
    media_sub = snap.subtree_sum(media.astype(np.float64))[idx] > 0
    links = snap.subtree_sum(snap.is_link.astype(np.float64))[idx]
    ch = arrays.chars[idx]
    dens = np.where(ch > 0, arrays.link_chars[idx] / np.maximum(ch, 1), 0.0)
    group = (dens >= cfg.link_group_density) & (links >= cfg.link_group_links)
    boiler = np.isin(tags, _BOILER_TAGS) | np.isin(role, ("navigation", "complementary", "contentinfo")) | cue
    drop[idx] = (boiler | group) & ~media_sub
    total = float(arrays.chars[list(nodes)].sum())
    removed = F._inside(snap, np.nonzero(drop)[0])
    if total > 0 and float((arrays.text_chars * removed[snap.text_owner]).sum()) > cfg.max_trim_share * total:
        return np.zeros(n, dtype=bool)
    return drop


def without_comments(snap: Snapshot, nodes: tuple[int, ...], arrays: F.PageArrays, keep_t: np.ndarray, cfg: Config
                     ) -> np.ndarray:
    """Per text node: ``keep_t`` without the text inside comment sections below the chosen roots' ancestors, when at
    least ``cfg.comment_min_body`` kept characters stay outside them; else ``keep_t``."""
    named = arrays.comment_section | (_shaped_comments(snap, arrays, keep_t, cfg) if cfg.comment_shapes else False)
    sections = np.nonzero(named & ~B._ancestors_or_self(snap, np.asarray(nodes, dtype=np.int64)))[0]
    if sections.size == 0 or snap.m == 0:
        return keep_t
    under = F._inside(snap, sections)[snap.text_owner]
    body = keep_t & ~under
    if not (keep_t & under).any() or float(arrays.text_chars[body].sum()) < cfg.comment_min_body:
        return keep_t
    return body


# How far above the answer's roots a comment section may hang (a sibling of the answer or of its nearest ancestors)
# to count as the answer's comments when the candidate did not reach it: an article's comments follow it in the same
# column; a sidebar's "recent comments" widget hangs off a distant ancestor.
COMMENT_REACH = 3
# Fewer rendered characters in the sections set aside are a comment box without comments ("0 comments", "Leave a
# reply"), not worth a "Comments" section in the reader.
COMMENT_MIN_CHARS = 80
# Elements that can be one comment of a comment list (a paragraph, a name or a link is a piece of one).
_COMMENT_ITEM_TAGS = ("div", "li", "article", "section", "dd", "tr")
# Elements that can hold a comment section (a comment button or link, a form field, is no section to read).
_COMMENT_SECTION_TAGS = ("div", "section", "aside", "article", "ol", "ul", "footer", "main", "details", "dl", "li")


def comments_aside(snap: Snapshot, nodes: tuple[int, ...], answer: list[int], arrays: F.PageArrays,
                   left_out: np.ndarray) -> list[int]:
    """The comment sections (COMMENT_SECTION, outermost) the answer sets aside, for the reader's "Comments (N)":
    those holding text the comment rule left out of the block filter's answer (``left_out``, per text node), else
    the ones after the chosen ``nodes`` hanging off their nearest ancestors (COMMENT_REACH levels) that hold
    rendered text, outside the ``answer``; none when they hold under COMMENT_MIN_CHARS rendered characters."""
    if snap.m == 0 or not arrays.comment_section.any():
        return []
    roots = np.asarray(nodes, dtype=np.int64)
    sections = (arrays.comment_section & snap.tag_in(_COMMENT_SECTION_TAGS)
                & ~B._ancestors_or_self(snap, roots) & ~F._inside(snap, answer))
    outer = sections & (cover_count(snap, sections) == 1)
    shown = snap.subtree_sum(snap.text_per_element(arrays.text_chars))
    if left_out.any():
        dropped = snap.subtree_sum(snap.text_per_element(left_out.astype(np.float64))) > 0
        keep = outer & dropped
        return [int(i) for i in np.nonzero(keep)[0]] if shown[keep].sum() >= COMMENT_MIN_CHARS else []
    near = np.zeros(snap.n, dtype=bool)
    for r in roots.tolist():
        for _ in range(COMMENT_REACH):
            r = int(snap.parent[r])
            if r < 0:
                break
            near[r] = True
    parent = snap.parent
    after = np.arange(snap.n) >= int(snap.subtree_end[roots].max())
    keep = outer & after & (shown > 0) & np.where(parent >= 0, near[np.maximum(parent, 0)], False)
    return [int(i) for i in np.nonzero(keep)[0]] if shown[keep].sum() >= COMMENT_MIN_CHARS else []


def comment_count(snap: Snapshot, sections: list[int]) -> int:
    """How many comments ``sections`` hold: the elements (of _COMMENT_ITEM_TAGS, with text; the sections themselves
    too, when each is one comment) sharing the tag and first class word of the longest run of such siblings, replies
    nested in comments included; 0 when no two siblings repeat (a comment list the count cannot see)."""
    if not sections:
        return 0
    inside = F._inside(snap, sections)
    has_text = snap.subtree_sum(snap.text_per_element(np.ones(snap.m))) > 0
    items = np.nonzero(inside & has_text & snap.tag_in(_COMMENT_ITEM_TAGS))[0]
    if items.size == 0:
        return 0
    classes = snap.attrs.get("class", {})
    words: dict[str, int] = {"": 0}
    first = np.fromiter((words.setdefault(next(iter(classes.get(int(i), "").split()), ""), len(words))
                         for i in items), dtype=np.int64, count=items.size)
    tag_codes = np.unique(snap.tags[items], return_inverse=True)[1].astype(np.int64)
    key = tag_codes * len(words) + first
    span = int(key.max()) + 1
    groups, counts = np.unique(snap.parent[items].astype(np.int64) * span + key, return_counts=True)
    if counts.max() < 2:
        return 0
    best = int(groups[np.argmax(counts)] % span)
    return int((key == best).sum())


# comment_shapes: the kept text outside items before them is at least this share of the kept text inside items.
COMMENT_SHARE = 0.5


def _shaped_comments(snap: Snapshot, arrays: F.PageArrays, keep_t: np.ndarray, cfg: Config) -> np.ndarray:
    """Per element: a comment-shaped item with at least ``cfg.comment_min_body`` kept characters outside items
    before it and fewer after it (in pre-order: the text of the elements before it, and after its subtree): comments
    close the answer, a run of items inside an article's text is the article's."""
    sh = arrays.shapes
    if snap.m == 0 or not sh.item.any():
        return np.zeros(snap.n, dtype=bool)
    outside = snap.text_per_element(arrays.text_chars * keep_t * (1.0 - sh.item_t))
    cum = np.concatenate([[0.0], np.cumsum(outside)])
    before, after = cum[: snap.n], cum[-1] - cum[snap.subtree_end]
    # Readers' comments add to an article; a page that is mostly items (reviews, testimonials) is about them.
    inside = float((arrays.text_chars * keep_t * sh.item_t).sum())
    return sh.item & (before >= max(cfg.comment_min_body, COMMENT_SHARE * inside)) & (after < cfg.comment_min_body)


@dataclass
class Output:
    nodes: list[int]  # maximal subtrees of the chosen candidate holding no dropped text
    text: str
    dropped: int  # dropped subtrees (rules) or blocks (model)
    blocks: list[dict[str, Any]]  # the block filter's trace (debugger): container, score, kept, text preview
    comments: list[int] = field(default_factory=list)  # comment sections set aside (comments_aside)


def _kept_nodes(snap: Snapshot, inside: np.ndarray, keep_t: np.ndarray) -> list[int]:
    """Maximal elements whose subtree holds no text node left out of ``keep_t`` and that are inside the candidate
    (``inside``) or hold kept text (blocks the page-scope filter added)."""
    dirty = snap.subtree_sum(snap.text_per_element((~keep_t).astype(np.float64))) > 0
    has_kept = snap.subtree_sum(snap.text_per_element(keep_t.astype(np.float64))) > 0
    clean = (inside | has_kept) & ~dirty
    par = snap.parent
    top = clean & ~np.where(par >= 0, clean[np.maximum(par, 0)], False)
    return [int(i) for i in np.nonzero(top)[0]]


def block_scores(snap: Snapshot, nodes: tuple[int, ...], pm: PageModel, cfg: Config, model: Model
                 ) -> tuple[B.PageBlocks, np.ndarray]:
    """(the blocks, the block filter's score of each) for candidate ``nodes``: what :func:`block_filter` thresholds."""
    rule = trim_mask(snap, nodes, pm.arrays, cfg)
    pb = B.page_blocks(snap, nodes, pm.arrays, pm.proposals, rule, scope=cfg.scope)
    return pb, (model.predict(pb.X[:, : len(model.feature_names)]) if pb.X.shape[0] else np.zeros(0))


def block_filter(snap: Snapshot, nodes: tuple[int, ...], pm: PageModel, cfg: Config, model: Model,
                 scored: tuple[B.PageBlocks, np.ndarray] | None = None) -> tuple[np.ndarray, B.PageBlocks, np.ndarray]:
    """(per text node: kept, the blocks, their scores) of the learned block filter on candidate ``nodes``; text nodes
    that are in no block (blank, not rendered) are kept when inside the candidate. ``scored``: the blocks and scores
    of :func:`block_scores` for these nodes and model, when the caller has them (a sweep of thresholds)."""
    pb, score = scored or block_scores(snap, nodes, pm, cfg, model)
    keep = score >= cfg.block_threshold
    inside = F._inside(snap, np.asarray(nodes, dtype=np.int64))[snap.text_owner]
    if not keep.any():  # a filter that would empty the answer is wrong about this page: keep the candidate whole
        return inside, pb, score
    kept = inside.copy()
    kept[pb.text_nodes] = keep[pb.block_of]
    return kept, pb, score


def output(snap: Snapshot, nodes: tuple[int, ...], pm: PageModel, cfg: Config,
           block_model: Model | None = None, scored: tuple[B.PageBlocks, np.ndarray] | None = None) -> Output:
    """The answer for the chosen ``nodes``: kept subtrees and rendered text after the configured filter (``scored``:
    as for :func:`block_filter`)."""
    inside = F._inside(snap, np.asarray(nodes, dtype=np.int64))
    if snap.m == 0:
        return Output(list(nodes), "", 0, [])
    blocks: list[dict[str, Any]] = []
    in_t = inside[snap.text_owner]
    filtered = in_t
    if cfg.filter == "model":
        keep_t, pb, score = block_filter(snap, nodes, pm, cfg, block_model or load_block_model(cfg.block_weights),
                                         scored)
        filtered = keep_t
        if cfg.comments == "drop":
            keep_t = without_comments(snap, nodes, pm.arrays, keep_t, cfg)
        n_dropped = int((~keep_t[pb.text_nodes[pb.starts]]).sum()) if pb.starts.size else 0
        for k in range(min(pb.container.size, MAX_DEBUG_BLOCKS)):
            first = int(pb.text_nodes[pb.starts[k]])
            blocks.append({"node": int(pb.container[k]), "score": round(float(score[k]), 4),
                           "kept": bool(keep_t[first]), "text": " ".join(snap.texts[first].split())[:80]})
            if filtered[first] and not keep_t[first]:
                blocks[-1]["comment"] = True  # kept by the filter, left out as a comment section
    elif cfg.filter == "rules":
        drop = trim_mask(snap, nodes, pm.arrays, cfg)
        removed = F._inside(snap, np.nonzero(drop)[0])
        keep_t = in_t & ~removed[snap.text_owner]
        n_dropped = int(drop.sum())
    else:
        keep_t = in_t
        n_dropped = 0
    text = snap.text_of_mask(keep_t)
    whole = np.array_equal(keep_t, in_t)
    kept = list(nodes) if whole else _kept_nodes(snap, inside, keep_t)
    left_out = filtered & ~keep_t if cfg.filter == "model" else np.zeros(snap.m, dtype=bool)
    return Output(kept, text, 0 if whole else n_dropped, blocks, comments_aside(snap, nodes, kept, pm.arrays, left_out))


def run(snapshot: Snapshot, config: Config | None = None) -> Result:
    cfg = config or Config()
    # Models first: a model that cannot be used is a parameter error, answered before any work.
    model = load_model(cfg.weights)
    block_model = load_block_model(cfg.block_weights) if cfg.filter == "model" else None
    results, base_ms = run_base(snapshot, proposers_of(model, *([block_model] if block_model else [])))
    return combine(snapshot, results, cfg, base_ms, model, block_model)


def combine(snap: Snapshot, results: dict[str, Result], cfg: Config, base_ms: dict[str, float] | None = None,
            model: Model | None = None, block_model: Model | None = None) -> Result:
    """The ensemble's decision given the base algorithms' results (split out so timing and training reuse it)."""
    t0 = time.perf_counter()
    model = model or load_model(cfg.weights)
    if block_model is None and cfg.filter == "model":
        block_model = load_block_model(cfg.block_weights)
    # Only what the models were trained with: a caller may hand in every algorithm's answer.
    results = only(results, proposers_of(model, *([block_model] if block_model else [])))
    if snap.n == 0:
        return Result("ensemble", [], message="empty snapshot")
    pm = prepare(snap, results, cfg)
    t_feat = time.perf_counter()
    if not pm.candidates:
        return Result("ensemble", [], message="no candidate with rendered text")
    X = pm.X[:, : len(model.feature_names)]
    score = model.predict(X)
    order = np.argsort(-score, kind="stable")
    best = pm.candidates[int(order[0])]
    out = output(snap, best, pm, cfg, block_model)
    nodes, text = out.nodes, out.text
    top = order[: cfg.report_candidates]
    contrib = model.contributions(X[top[: cfg.explain if debug_wanted() else 0]])
    used = model.used_features()
    names = model.feature_names
    cands = []
    for row, j in enumerate(top):
        c = pm.candidates[int(j)]
        who = [a for a in F.PROPOSERS if pm.proposals.answers[a] == c]
        label = (f"<{snap.tags[c[0]]}>" if len(c) == 1 else f"{len(c)} siblings") + (
            f" answer of {', '.join(who)}" if who else "")
        features = {names[f]: float(contrib[row, f]) for f in used} if row < contrib.shape[0] else {}
        cands.append(Candidate(list(c), float(score[j]), label, features))
    t1 = time.perf_counter()
    timing = {"ensemble": (t1 - t0) * 1000, "features": (t_feat - t0) * 1000}
    if base_ms:
        timing.update({f"base_{k}": v for k, v in base_ms.items()})
        timing["algorithm"] = sum(base_ms.values()) + timing["ensemble"]
    dbg = {"answers": {a: list(v) for a, v in pm.proposals.answers.items()}, "proposers": sorted(results),
           "messages": {a: r.message for a, r in results.items() if r.message},
           "chosen": list(best), "score": float(score[order[0]]), "objective": model.meta.get("objective", "l2"),
           "candidates": len(pm.candidates), "filter": cfg.filter, "dropped": out.dropped, "blocks": out.blocks,
           "base": model.base}
    message = "" if nodes else f"the best candidate {list(best)} kept no content after trimming"
    comments = {"nodes": out.comments, "count": comment_count(snap, out.comments)} if nodes and out.comments else None
    return Result("ensemble", nodes, cands, dbg, message=message, text=text, timing_ms=timing,
                  overlays=basic_overlays(nodes, cands, block_overlays(out.blocks)), comments=comments)
