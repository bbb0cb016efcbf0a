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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..snapshot import Snapshot
from . import _ensemble_features as F

_TAGS = ("p", "li", "div", "td", "h", "blockquote", "pre", "dd", "dt", "figcaption", "section", "article", "span")
# Sentence-final punctuation of many scripts (Latin, CJK full-width, Arabic, Devanagari danda, ellipsis, quotes).
_SENTENCE_END = frozenset(".!?。！？؟।…\"'”’»)")
_SENTENCE_PUNCT = F.char_table(".!?。！？؟।")


@functools.cache
def _digits() -> np.ndarray:
    """BMP table of decimal digits (Unicode Nd, as the regex ``\\d``), built on first use."""
    return np.fromiter((chr(c).isdecimal() for c in range(0x10000)), dtype=bool, count=0x10000)


def feature_names() -> list[str]:
    names = ["log_chars", "log_words", "chars_share", "link_density", "rel_index", "rel_top", "rel_left",
             "rel_width", "rel_height", "n_text_nodes", "heading", "pos_cue", "neg_cue", "strong_cue",
             "ends_sentence", "sentence_marks_per_word", "digit_share", "rule_trimmed", "prev_link_density",
             "next_link_density", "prev_log_chars", "next_log_chars", "cand_log_chars", "cand_log_blocks",
             "dist_to_largest", "words_rel_max"]
    names += [f"tag_{t}" for t in _TAGS] + ["tag_other"]
    names += [f"in_{a}" for a in F.BASE_ALGORITHMS] + ["in_mean"]
    return names


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


def page_blocks(snap: Snapshot, nodes: Sequence[int], arrays: F.PageArrays, prop: F.Proposals,
                rule_drop: np.ndarray | None = None, with_texts: bool = False) -> PageBlocks:
    """Blocks of the candidate ``nodes`` and their feature matrix (``rule_drop``: elements the rule trim removes)."""
    names = feature_names()
    inside = F._inside(snap, np.asarray(nodes, dtype=np.int64))
    tn = _text_nodes(snap, inside, arrays.rendered)
    if tn.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return PageBlocks(tn, z, z, z, [], np.zeros((0, len(names))))
    owner = snap.text_owner[tn]
    cont = snap.block_container[owner]
    new = np.ones(tn.size, dtype=bool)
    new[1:] = cont[1:] != cont[:-1]
    starts = np.nonzero(new)[0]
    block_of = np.cumsum(new) - 1
    b = starts.size
    container = cont[starts]

    def bsum(v: np.ndarray) -> np.ndarray:
        return np.add.reduceat(v.astype(np.float64), starts)

    chars = bsum(arrays.text_chars[tn])
    words = bsum(snap.text_words[tn])
    link = bsum(arrays.text_chars[tn] * arrays.in_link[owner])
    tb = snap.text_box[tn]
    x0 = np.minimum.reduceat(tb[:, 0], starts)
    y0 = np.minimum.reduceat(tb[:, 1], starts)
    x1 = np.maximum.reduceat(tb[:, 0] + tb[:, 2], starts)
    y1 = np.maximum.reduceat(tb[:, 1] + tb[:, 3], starts)
    cx0, cy0, cx1, cy1 = x0.min(), y0.min(), x1.max(), y1.max()
    cw, ch = max(cx1 - cx0, 1.0), max(cy1 - cy0, 1.0)
    total = max(float(chars.sum()), 1.0)
    texts = snap.texts
    block_texts = [" ".join(texts[t] for t in tn[s:e].tolist()) for s, e in
                   zip(starts.tolist(), [*starts[1:].tolist(), tn.size], strict=True)] if with_texts else []
    lasts = [texts[t].rstrip()[-1:] for t in tn[np.append(starts[1:], tn.size) - 1].tolist()]
    X = np.zeros((b, len(names)), dtype=np.float64)
    col = {n: i for i, n in enumerate(names)}
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(chars > 0, link / np.maximum(chars, 1.0), 1.0)
        X[:, col["log_chars"]] = np.log1p(chars)
        X[:, col["log_words"]] = np.log1p(words)
        X[:, col["chars_share"]] = chars / total
        X[:, col["link_density"]] = dens
        X[:, col["rel_index"]] = np.arange(b) / max(b - 1, 1)
        X[:, col["rel_top"]] = (y0 - cy0) / ch
        X[:, col["rel_left"]] = (x0 - cx0) / cw
        X[:, col["rel_width"]] = (x1 - x0) / cw
        X[:, col["rel_height"]] = (y1 - y0) / ch
        X[:, col["n_text_nodes"]] = np.log1p(np.diff(np.append(starts, tn.size)))
        X[:, col["cand_log_chars"]] = np.log1p(total)
        X[:, col["cand_log_blocks"]] = np.log1p(b)
        big = int(np.argmax(chars))
        X[:, col["dist_to_largest"]] = (np.arange(b) - big) / max(b, 1)
        X[:, col["words_rel_max"]] = words / max(float(words.max()), 1.0)
    X[:, col["ends_sentence"]] = np.fromiter((s in _SENTENCE_END for s in lasts), dtype=bool, count=b)
    # Punctuation and digits (Unicode Nd, as the regex \d, astral digits included), counted per text node.
    marks, digits = F.char_counts(snap, tn, [(_SENTENCE_PUNCT, None), (_digits(), str.isdecimal)])
    X[:, col["sentence_marks_per_word"]] = bsum(marks) / np.maximum(words, 1)
    X[:, col["digit_share"]] = bsum(digits) / np.maximum(chars, 1.0)
    ctag = snap.tags[container]
    heading = np.isin(ctag, ("h1", "h2", "h3", "h4", "h5", "h6"))
    X[:, col["heading"]] = heading
    for t in _TAGS:
        X[:, col[f"tag_{t}"]] = heading if t == "h" else (ctag == t)
    X[:, col["tag_other"]] = ~np.isin(ctag, _TAGS) & ~heading
    # Cues on the container or an ancestor strictly inside the candidate (the candidate's own cues are its scorer's).
    roots = np.zeros(snap.n, dtype=bool)
    roots[np.asarray(nodes, dtype=np.int64)] = True
    for name, flags in (("pos_cue", arrays.pos_cue), ("neg_cue", arrays.neg_cue), ("strong_cue", arrays.strong_cue)):
        under = F._inside(snap, np.nonzero(flags & inside & ~roots)[0])
        X[:, col[name]] = under[container] | under[owner[starts]]
    if rule_drop is not None and rule_drop.any():
        removed = F._inside(snap, np.nonzero(rule_drop)[0])
        X[:, col["rule_trimmed"]] = bsum(arrays.text_chars[tn] * removed[owner]) / np.maximum(chars, 1.0)
    X[1:, col["prev_link_density"]] = dens[:-1]
    X[:-1, col["next_link_density"]] = dens[1:]
    X[0, col["prev_link_density"]] = X[-1, col["next_link_density"]] = -1.0
    X[1:, col["prev_log_chars"]] = np.log1p(chars[:-1])
    X[:-1, col["next_log_chars"]] = np.log1p(chars[1:])
    ins = []
    for a in F.BASE_ALGORITHMS:
        ans = prop.answers.get(a, ())
        if ans:
            sel = F._inside(snap, np.asarray(ans, dtype=np.int64))
            v = bsum(arrays.text_chars[tn] * sel[owner]) / np.maximum(chars, 1.0)
            ins.append(v)
        else:
            v = np.full(b, -1.0)  # no answer: distinct from "answered elsewhere" (0)
        X[:, col[f"in_{a}"]] = v
    if ins:
        X[:, col["in_mean"]] = np.mean(ins, axis=0)
    X = np.nan_to_num(X, nan=0.0, posinf=0.0, neginf=0.0)
    return PageBlocks(tn, block_of, starts, container, block_texts, X)
