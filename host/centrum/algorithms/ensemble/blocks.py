"""Block filter of the ensemble (step 5): keep or drop each text block inside the chosen candidate.

The candidate scorer picks a subtree; the subtree still holds bylines, share bars, related links and comment
counters that the reference extractors (trafilatura, Readability) drop paragraph by paragraph. This stage splits the
chosen subtree's rendered text into *blocks* (runs of text nodes with the same block-level container, i.e. the lines
:meth:`Snapshot.text_of` would break) and scores each with a second stumps model trained on gold (share of the
block's 4-token shingles found in the gold text, or the trafilatura snippets it holds). Features are
language-independent: sizes, link density, position inside the candidate, container tag, class/id cues on the way
up to the candidate, punctuation, neighbours, and how much of the block each base algorithm selected.
All per-block quantities are ``np.add.reduceat`` sums over the text nodes in document order: O(n + m).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...core.snapshot import Snapshot
from ...core.tree import cover_count
from . import features as F

_TAGS = ("p", "li", "div", "td", "h", "blockquote", "pre", "dd", "dt", "figcaption", "section", "article", "span")
# Sentence-final punctuation of many scripts (Latin, CJK full-width, Arabic, Devanagari danda, ellipsis, quotes).
_SENTENCE_END = frozenset(".!?。！？؟।…\"'”’»)")
_LAST_CHAR = operator.itemgetter(slice(-1, None))
_SENTENCE_PUNCT = F.char_table(".!?。！？؟।")


@functools.cache
def _digits() -> np.ndarray:
    """BMP table of decimal digits (Unicode Nd, as the regex ``\\d``), built on first use."""
    return np.fromiter((chr(c).isdecimal() for c in range(0x10000)), dtype=bool, count=0x10000)


def feature_names(feature_set: str | None = None) -> list[str]:
    """The block features of ``feature_set`` (``features.FEATURE_SETS``; default the latest), an older set a
    prefix of a newer one."""
    names = ["log_chars", "log_words", "chars_share", "link_density", "rel_index", "rel_top", "rel_left",
             "rel_width", "rel_height", "n_text_nodes", "heading", "pos_cue", "neg_cue", "strong_cue",
             "ends_sentence", "sentence_marks_per_word", "digit_share", "rule_trimmed", "prev_link_density",
             "next_link_density", "prev_log_chars", "next_log_chars", "cand_log_chars", "cand_log_blocks",
             "dist_to_largest", "words_rel_max"]
    names += [f"tag_{t}" for t in _TAGS] + ["tag_other"]
    names += [f"in_{a}" for a in F.BASE_ALGORITHMS] + ["in_mean"]
    names += PAGE_FEATURES + DECLARED_FEATURES
    return names + SHAPE_FEATURES if F.feature_set_index(feature_set) >= 1 else names


# Features of the page scope, after those of the candidate scope so that a model trained before them reads the
# leading columns (a model's features are a prefix of feature_names()).
PAGE_FEATURES = ["in_chosen", "same_path", "log_path_blocks", "dist_chosen", "gap_chosen"]
# The block's share of characters found in the text the page declares as its content (JSON-LD; v7), and whether the
# page declares any that it shows.
DECLARED_FEATURES = ["decl_share", "log_decl_shown"]
# Comment threads and title lists by shape (feature set v14, :mod:`.shapes`): the block's share in
# comment-shaped items, in items with a control, the size of its item run, its share in title link lists, the
# paragraph text of the page outside items before and after it, and a reply form below it.
SHAPE_FEATURES = ["shape_item", "shape_control", "shape_run_log", "shape_titles", "shape_para_before",
                  "shape_para_after", "shape_form_below"]


@dataclass
class PageBlocks:
    text_nodes: np.ndarray  # rendered, non-blank text nodes inside the candidate, document order
    block_of: np.ndarray  # per entry of text_nodes: its block index
    starts: np.ndarray  # (b,) index into text_nodes of each block's first text node
    container: np.ndarray  # (b,) block container element of each block
    texts: list[str]  # (b,) block text (text nodes joined by a space; for training labels)
    X: np.ndarray  # (b, len(feature_names()))


def _text_nodes(snap: Snapshot, inside: np.ndarray, rendered: np.ndarray) -> np.ndarray:
    if snap.m == 0:
        return np.zeros(0, dtype=np.int64)
    return np.nonzero(inside[snap.text_owner] & rendered & ~snap.text_blank)[0]


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def path_signature(snap: Snapshot, arrays: F.PageArrays) -> np.ndarray:
    """Per element, a hash of its (tag, class) path from the root, ids ignored: the paragraphs of every post of a
    thread, or of every item of a listing, share one signature. The sum over ancestors-or-self of a 40-bit mix of
    (tag, class, depth), so one subtree cover computes it in O(n); float sums of 40-bit integers stay exact."""
    with np.errstate(over="ignore"):
        v = (snap.tag_code.astype(np.uint64) * np.uint64(1_000_003) + arrays.class_code.astype(np.uint64)
             + snap.depth.astype(np.uint64) * _MIX[0])
        v = (v ^ (v >> np.uint64(30))) * _MIX[1]
        v = (v ^ (v >> np.uint64(27))) * _MIX[2]
        v ^= v >> np.uint64(31)
    return cover_count(snap, np.arange(snap.n), weights=(v >> np.uint64(24)).astype(np.float64))


def _ancestors_or_self(snap: Snapshot, nodes: np.ndarray) -> np.ndarray:
    out = np.zeros(snap.n, dtype=bool)
    for i in nodes.tolist():
        while i >= 0 and not out[i]:
            out[i] = True
            i = int(snap.parent[i])
    return out


@dataclass
class _Split:
    """The text nodes of one :func:`page_blocks` call grouped into blocks, with the per-block sums every step reads."""

    tn: np.ndarray  # text nodes in document order
    owner: np.ndarray  # per text node: its element
    starts: np.ndarray  # (b,) index into tn of each block's first text node
    chars: np.ndarray  # (b,) rendered characters
    words: np.ndarray  # (b,) words
    in_chosen: np.ndarray  # (b,) share of the block's characters inside the candidate
    ch: np.ndarray  # (b,) blocks of the candidate: every position and size is relative to them

    def sum(self, v: np.ndarray) -> np.ndarray:
        return _block_sum(v, self.starts)


def _block_sum(v: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per block (``starts``: each block's first text node): the sum of the per-text-node values ``v``."""
    return np.add.reduceat(v.astype(np.float64), starts)


def _split(snap: Snapshot, arrays: F.PageArrays, tn: np.ndarray, chosen: np.ndarray
           ) -> tuple[_Split, np.ndarray, np.ndarray]:
    """(the blocks, per text node: its block index, per block: its container). A block is a run of text nodes with
    the same block-level container."""
    owner = snap.text_owner[tn]
    cont = snap.block_container[owner]
    new = np.ones(tn.size, dtype=bool)
    new[1:] = cont[1:] != cont[:-1]
    starts = np.nonzero(new)[0]
    block_of = np.cumsum(new) - 1
    container = cont[starts]
    chars = _block_sum(arrays.text_chars[tn], starts)
    words = _block_sum(snap.text_words[tn], starts)
    in_chosen = _block_sum(arrays.text_chars[tn] * chosen[owner], starts) / np.maximum(chars, 1.0)
    ch = in_chosen > 0.5
    if not ch.any():
        ch = in_chosen >= in_chosen.max()
    return _Split(tn, owner, starts, chars, words, in_chosen, ch), block_of, container


def page_blocks(snap: Snapshot, nodes: Sequence[int], arrays: F.PageArrays, prop: F.Proposals,
                rule_drop: np.ndarray | None = None, with_texts: bool = False, scope: str = "candidate"
                ) -> PageBlocks:
    """Blocks and their feature matrix, relative to the chosen candidate ``nodes`` (``rule_drop``: elements the rule
    trim removes). ``scope="candidate"``: the blocks inside the candidate; ``"page"``: every block of the page, so
    that the filter can also add what the candidate missed (the other posts of a thread, the other parts of a
    product page)."""
    names = feature_names()
    roots_idx = np.asarray(nodes, dtype=np.int64)
    chosen = F._inside(snap, roots_idx)
    region = chosen if scope == "candidate" else np.ones(snap.n, dtype=bool)
    tn = _text_nodes(snap, region, arrays.rendered)
    if tn.size == 0 or not chosen[snap.text_owner[tn]].any():
        z = np.zeros(0, dtype=np.int64)
        return PageBlocks(z, z, z, z, [], np.zeros((0, len(names))))
    sp, block_of, container = _split(snap, arrays, tn, chosen)
    X = np.zeros((sp.starts.size, len(names)), dtype=np.float64)
    col = {n: i for i, n in enumerate(names)}
    dens = _geometry(snap, arrays, sp, X, col)
    _text_features(snap, sp, X, col)
    _tag_features(snap, container, X, col)
    _structure_features(snap, arrays, sp, container, X, col)
    _cue_features(snap, arrays, sp, container, roots_idx, region, X, col)
    if rule_drop is not None and rule_drop.any():
        removed = F._inside(snap, np.nonzero(rule_drop)[0])
        X[:, col["rule_trimmed"]] = sp.sum(arrays.text_chars[tn] * removed[sp.owner]) / np.maximum(sp.chars, 1.0)
    _neighbour_features(sp, dens, X, col)
    _answer_shares(snap, X, col, prop, arrays, tn, sp.owner, sp.chars, sp.sum)
    X[:, col["decl_share"]] = sp.sum(arrays.decl_t[tn]) / np.maximum(sp.chars, 1.0)
    X[:, col["log_decl_shown"]] = np.log1p(float(arrays.decl_chars[arrays.body]) if snap.n else 0.0)
    _shape_features(snap, arrays, sp, container, X, col)
    X = np.nan_to_num(X, copy=False, nan=0.0, posinf=0.0, neginf=0.0)  # in place: the matrix is ours
    return PageBlocks(tn, block_of, sp.starts, container, _block_texts(snap, sp) if with_texts else [], X)


def _block_texts(snap: Snapshot, sp: _Split) -> list[str]:
    """Per block: its text nodes joined by a space (for training labels)."""
    texts, tn = snap.texts, sp.tn
    return [" ".join(texts[t] for t in tn[s:e].tolist()) for s, e in
            zip(sp.starts.tolist(), [*sp.starts[1:].tolist(), tn.size], strict=True)]


def _geometry(snap: Snapshot, arrays: F.PageArrays, sp: _Split, X: np.ndarray, col: dict[str, int]) -> np.ndarray:
    """Sizes, link density, position and extent relative to the candidate's blocks; returns the link density."""
    tn, starts, chars, words, ch = sp.tn, sp.starts, sp.chars, sp.words, sp.ch
    b = starts.size
    link = sp.sum(arrays.text_chars[tn] * arrays.in_link[sp.owner])
    ci = np.nonzero(ch)[0]
    tb = snap.text_box[tn]
    x0 = np.minimum.reduceat(tb[:, 0], starts)
    y0 = np.minimum.reduceat(tb[:, 1], starts)
    x1 = np.maximum.reduceat(tb[:, 0] + tb[:, 2], starts)
    y1 = np.maximum.reduceat(tb[:, 1] + tb[:, 3], starts)
    cx0, cy0, cx1, cy1 = x0[ch].min(), y0[ch].min(), x1[ch].max(), y1[ch].max()
    cw, chh = max(cx1 - cx0, 1.0), max(cy1 - cy0, 1.0)
    total = max(float(chars[ch].sum()), 1.0)
    nb = int(ch.sum())
    first, last = int(ci[0]), int(ci[-1])
    idx = np.arange(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(chars > 0, link / np.maximum(chars, 1.0), 1.0)
        X[:, col["log_chars"]] = np.log1p(chars)
        X[:, col["log_words"]] = np.log1p(words)
        X[:, col["chars_share"]] = chars / total
        X[:, col["link_density"]] = dens
        X[:, col["rel_index"]] = (idx - first) / max(last - first, 1)
        X[:, col["rel_top"]] = (y0 - cy0) / chh
        X[:, col["rel_left"]] = (x0 - cx0) / cw
        X[:, col["rel_width"]] = (x1 - x0) / cw
        X[:, col["rel_height"]] = (y1 - y0) / chh
        X[:, col["n_text_nodes"]] = np.log1p(np.diff(np.append(starts, tn.size)))
        X[:, col["cand_log_chars"]] = np.log1p(total)
        X[:, col["cand_log_blocks"]] = np.log1p(nb)
        big = int(ci[np.argmax(chars[ch])])
        X[:, col["dist_to_largest"]] = (np.cumsum(ch) - np.cumsum(ch)[big]) / max(nb, 1)
        X[:, col["words_rel_max"]] = words / max(float(words[ch].max()), 1.0)
        X[:, col["in_chosen"]] = sp.in_chosen
        X[:, col["dist_chosen"]] = np.where(idx < first, idx - first, np.where(idx > last, idx - last, 0)) / max(b, 1)
        gap = np.maximum(np.maximum(cy0 - y1, y0 - cy1), 0.0)
        X[:, col["gap_chosen"]] = gap / max(float(snap.page.viewport[1]), 1.0)
    return dens


def _text_features(snap: Snapshot, sp: _Split, X: np.ndarray, col: dict[str, int]) -> None:
    """Whether the block ends a sentence, its sentence marks per word and its share of digits."""
    texts, tn = snap.texts, sp.tn
    # Each block's last text node, right-stripped, its last character: C-level maps, no Python frame per block.
    lasts = map(_LAST_CHAR, map(str.rstrip, map(texts.__getitem__, tn[np.append(sp.starts[1:], tn.size) - 1].tolist())))
    X[:, col["ends_sentence"]] = np.fromiter(map(_SENTENCE_END.__contains__, lasts), dtype=bool, count=sp.starts.size)
    # Punctuation and digits (Unicode Nd, as the regex \d, astral digits included), counted per text node.
    marks, digits = F.char_counts(snap, tn, [(_SENTENCE_PUNCT, None), (_digits(), str.isdecimal)])
    X[:, col["sentence_marks_per_word"]] = sp.sum(marks) / np.maximum(sp.words, 1)
    X[:, col["digit_share"]] = sp.sum(digits) / np.maximum(sp.chars, 1.0)


def _tag_features(snap: Snapshot, container: np.ndarray, X: np.ndarray, col: dict[str, int]) -> None:
    """The container's tag, one-hot (h1-h6 as one "h")."""
    ctag = snap.tags[container]
    heading = np.isin(ctag, ("h1", "h2", "h3", "h4", "h5", "h6"))
    X[:, col["heading"]] = heading
    for t in _TAGS:
        X[:, col[f"tag_{t}"]] = heading if t == "h" else (ctag == t)
    X[:, col["tag_other"]] = ~np.isin(ctag, _TAGS) & ~heading


def _structure_features(snap: Snapshot, arrays: F.PageArrays, sp: _Split, container: np.ndarray, X: np.ndarray,
                        col: dict[str, int]) -> None:
    """Repeated structure: blocks whose container has the (tag, class) path of a block of the candidate."""
    sig = path_signature(snap, arrays)[container]
    _, inv, counts = np.unique(sig, return_inverse=True, return_counts=True)
    in_cand_sig = np.zeros(counts.size, dtype=bool)
    in_cand_sig[inv[sp.ch]] = True
    X[:, col["same_path"]] = in_cand_sig[inv]
    X[:, col["log_path_blocks"]] = np.log1p(counts[inv])


def _cue_features(snap: Snapshot, arrays: F.PageArrays, sp: _Split, container: np.ndarray, roots_idx: np.ndarray,
                  region: np.ndarray, X: np.ndarray, col: dict[str, int]) -> None:
    """Class/id cues on the container or an ancestor, except the candidate's roots and their ancestors (those are
    its scorer's)."""
    above = _ancestors_or_self(snap, roots_idx)
    for name, flags in (("pos_cue", arrays.pos_cue), ("neg_cue", arrays.neg_cue), ("strong_cue", arrays.strong_cue)):
        under = F._inside(snap, np.nonzero(flags & region & ~above)[0])
        X[:, col[name]] = under[container] | under[sp.owner[sp.starts]]


def _shape_features(snap: Snapshot, arrays: F.PageArrays, sp: _Split, container: np.ndarray, X: np.ndarray,
                    col: dict[str, int]) -> None:
    """Comment-shaped items and title lists (v14) around each block."""
    sh, tn = arrays.shapes, sp.tn
    share = np.maximum(sp.chars, 1.0)
    X[:, col["shape_item"]] = sp.sum(arrays.text_chars[tn] * sh.item_t[tn]) / share
    X[:, col["shape_control"]] = sp.sum(arrays.text_chars[tn] * sh.control_t[tn]) / share
    X[:, col["shape_run_log"]] = np.maximum.reduceat(sh.group_t[tn], sp.starts)
    X[:, col["shape_titles"]] = sp.sum(arrays.text_chars[tn] * sh.titles_t[tn]) / share
    # Paragraph text outside items in document order over the whole page, whatever the scope.
    body = np.concatenate([[0.0], np.cumsum(arrays.para_t * (1.0 - sh.item_t))])
    first, last = tn[sp.starts], tn[np.append(sp.starts[1:], tn.size) - 1]
    X[:, col["shape_para_before"]] = np.log1p(body[first])
    X[:, col["shape_para_after"]] = np.log1p(body[-1] - body[last + 1])
    X[:, col["shape_form_below"]] = container < sh.form_at


def _neighbour_features(sp: _Split, dens: np.ndarray, X: np.ndarray, col: dict[str, int]) -> None:
    """Link density and size of the previous and next block (-1 link density at the page's ends)."""
    X[1:, col["prev_link_density"]] = dens[:-1]
    X[:-1, col["next_link_density"]] = dens[1:]
    X[0, col["prev_link_density"]] = X[-1, col["next_link_density"]] = -1.0
    X[1:, col["prev_log_chars"]] = np.log1p(sp.chars[:-1])
    X[:-1, col["next_log_chars"]] = np.log1p(sp.chars[1:])


def _answer_shares(snap: Snapshot, X: np.ndarray, col: dict[str, int], prop: F.Proposals, arrays: F.PageArrays,
                   tn: np.ndarray, owner: np.ndarray, chars: np.ndarray, bsum: Callable[[np.ndarray], np.ndarray]
                   ) -> None:
    """How much of each block every base algorithm selected (-1: it answered nothing on the page)."""
    ins = []
    for a in F.BASE_ALGORITHMS:
        ans = prop.answers.get(a, ())
        if ans:
            sel = F._inside(snap, np.asarray(ans, dtype=np.int64))
            v = bsum(arrays.text_chars[tn] * sel[owner]) / np.maximum(chars, 1.0)
            ins.append(v)
        else:
            v = np.full(chars.size, -1.0)  # no answer: distinct from "answered elsewhere" (0)
        X[:, col[f"in_{a}"]] = v
    if ins:
        X[:, col["in_mean"]] = np.mean(ins, axis=0)
