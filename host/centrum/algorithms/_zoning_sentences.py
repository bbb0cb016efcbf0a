"""Pluggable sentence tests for HTML zoning (Rae et al., DocEng '18, section 3.3).

The paper calls a leaf zone a *paragraph* when it holds at least two sentences that contain a verb, found with an
English sentence detector and part-of-speech tagger. That test is English-only, so two tests are offered:

* ``script`` (default, any language): a sentence ends at a Unicode sentence terminator (``. ! ? …`` followed by
  a space or the end, ``。！？؟۔।॥።။។`` anywhere) or at a space between two Thai/Lao/Khmer/Myanmar letters (those
  scripts separate sentences with a space, not a mark). A sentence "has a verb" when it holds at least
  ``min_words`` script-fair tokens (:func:`centrum.core.textmetrics.count_words`, CJK/Thai by character): menus,
  bylines and "Read more." fragments are short, prose is not.
* ``verb`` (English only): the same splitting, then the averaged-perceptron POS tagger whose trained weights ship
  inside the PyPI package ``textblob-aptagger`` (pip install --no-deps textblob-aptagger; loaded from the
  installed package, never downloaded). A sentence counts when one token is tagged ``VB*``.
"""

from __future__ import annotations

import importlib.util
import pickle
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..core.textmetrics import count_words, count_words_many

# Latin-style terminators end a sentence only before whitespace / end (so "3.5", "e.g.x" and URLs do not split);
# full-width and other-script terminators need no following space (CJK runs on without spaces). Closing quotes and
# brackets may follow the mark. The pattern opens with one character class so that the regex engine can skip
# ahead to candidate characters (the two-alternative form was 10x slower on a 50k-element page).
_CLOSERS = "\"'”’»)\\]}」』】〕》〉）"
_SPACED = ".!?…‽‼⁇⁈⁉"
_UNSPACED = "。！？｡؟۔।॥።။។᙮"
_TERM = re.compile(
    rf"[{_SPACED}{_UNSPACED}](?:(?<=[{_SPACED}])[{_SPACED}]*[{_CLOSERS}]*(?=\s|$)"
    rf"|(?<=[{_UNSPACED}])[{_UNSPACED}]*[{_CLOSERS}]*)\s*"
)
# Thai, Lao, Khmer and Myanmar write no sentence mark: a space between two of their letters is the break.
_SEA = "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"
_SEA_BREAK = re.compile(rf"([{_SEA}])\s+(?=[{_SEA}])")
_HAS_SEA = re.compile(rf"[{_SEA}]")
_SENT, _SEG = "\x01", "\x02"


def _mark(text: str, keep: bool) -> str:
    """``text`` with a ``_SENT`` mark after every sentence end; ``keep=False`` drops the terminator and its spaces
    (they hold no token), which avoids the per-match template expansion on long texts."""
    out = _TERM.sub(rf"\g<0>{_SENT}" if keep else _SENT, text)
    if _HAS_SEA.search(out):
        out = _SEA_BREAK.sub(rf"\1{_SENT}", out)
    return out


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (terminator kept with its sentence); a trailing fragment is a sentence too."""
    marked = _mark(text.replace(_SENT, " "), keep=True)
    return [p for p in (piece.strip() for piece in marked.split(_SENT)) if p]


def count_script_sentences(text: str, min_words: int) -> int:
    """Language-independent test: sentences holding at least ``min_words`` script-fair tokens."""
    return sum(1 for s in sentences(text) if count_words(s) >= min_words)


# Control characters used as markers in the vectorized pass (removed from the page text first).
_CTRL = str.maketrans({"\x00": " ", _SENT: " ", _SEG: " "})
_MARKS = re.compile("[\x01\x02]")


def segment_stats(parts: list[str], ends: np.ndarray, min_words: int) -> tuple[np.ndarray, np.ndarray,
                                                                             np.ndarray, list[str]]:
    """Token and sentence counts of many segments (leaf zones) without Python work per segment or sentence.

    ``parts`` are text pieces in order; ``ends[i]`` says piece ``i`` is the last of its segment (pieces of one
    segment are joined by a space). Returns per segment: tokens, sentences with >= ``min_words`` tokens,
    sentences with >= 1 token, and the segment texts. Same splitting as :func:`sentences` and the same tokens as
    :func:`centrum.core.textmetrics.count_words`: one regex pass marks every sentence end (a terminator and its spaces
    hold no token, so the mark replaces them), the marked string is split at the marks, and the sentences are
    counted in one :func:`count_words_many` call.
    """
    # Each whole-page string below is dropped once the next is built: a large page's text is several of them.
    raw = "".join(parts)
    if "\x00" in raw or _SENT in raw or _SEG in raw:  # rare: page text holding our marker characters
        parts = [p.translate(_CTRL) for p in parts]
    del raw
    seq: list[str] = [""] * (2 * len(parts))
    seq[0::2] = parts
    seq[1::2] = np.where(ends, _SEG, " ").tolist()
    big = "".join(seq)
    del seq
    marked = _mark(big, keep=False)
    pieces = _MARKS.split(marked)  # piece k is closed by mark k; the piece after the last mark is empty
    marks = np.frombuffer("".join(_MARKS.findall(marked)).encode("utf-32-le"), dtype=np.uint32)
    del marked
    is_seg = marks == ord(_SEG)
    seg_of = np.cumsum(is_seg) - is_seg
    nseg = int(is_seg.sum())
    tok = count_words_many(pieces[:-1])
    del pieces
    words = np.bincount(seg_of, weights=tok, minlength=nseg).astype(np.int64)
    long_sent = np.bincount(seg_of[tok >= min_words], minlength=nseg)
    any_sent = np.bincount(seg_of[tok >= 1], minlength=nseg)
    return words, long_sent, any_sent, big.split(_SEG)[:nseg]


# ---- optional English verb test -------------------------------------------------------------------------------

_WORD = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]", re.UNICODE)
_START = ("-START-", "-START2-")
_END = ("-END-", "-END2-")


class PerceptronTagger:
    """Greedy averaged-perceptron POS tagger (Collins 2002; feature set of Honnibal's "200 lines" tagger, which
    the shipped weights were trained with). Only the inference half: weights come from the installed package."""

    def __init__(self, weights: dict[str, dict[str, float]], tagdict: dict[str, str], classes: set[str]) -> None:
        self.weights = weights
        self.tagdict = tagdict
        self.classes = sorted(classes)

    @staticmethod
    def _norm(word: str) -> str:
        if "-" in word and word[0] != "-":
            return "!HYPHEN"
        if word.isdigit() and len(word) == 4:
            return "!YEAR"
        if word[0].isdigit():
            return "!DIGITS"
        return word.lower()

    def tag(self, words: list[str]) -> list[str]:
        context = [*_START, *(self._norm(w) for w in words), *_END]
        prev, prev2 = _START
        tags: list[str] = []
        for i, word in enumerate(words):
            tag = self.tagdict.get(word)
            if tag is None:
                j = i + 2
                feats = (
                    "bias",
                    f"i suffix {word[-3:]}",
                    f"i pref1 {word[0]}",
                    f"i-1 tag {prev}",
                    f"i-2 tag {prev2}",
                    f"i tag+i-2 tag {prev} {prev2}",
                    f"i word {context[j]}",
                    f"i-1 tag+i word {prev} {context[j]}",
                    f"i-1 word {context[j - 1]}",
                    f"i-1 suffix {context[j - 1][-3:]}",
                    f"i-2 word {context[j - 2]}",
                    f"i+1 word {context[j + 1]}",
                    f"i+1 suffix {context[j + 1][-3:]}",
                    f"i+2 word {context[j + 2]}",
                )
                scores: dict[str, float] = {}
                for f in feats:
                    for label, w in self.weights.get(f, {}).items():
                        scores[label] = scores.get(label, 0.0) + w
                tag = max(self.classes, key=lambda label: (scores.get(label, 0.0), label))
            tags.append(tag)
            prev2, prev = prev, tag
        return tags


@lru_cache(maxsize=1)
def load_tagger() -> PerceptronTagger | None:
    """The tagger from the installed ``textblob-aptagger`` package, or None when it is not installed.

    The package is located without importing it (its ``__init__`` imports TextBlob/NLTK, which are not needed).
    """
    spec = importlib.util.find_spec("textblob_aptagger")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "trontagger-0.1.0.pickle"
    if not path.exists():
        return None
    with path.open("rb") as f:
        # Pickled by Python 2: plain dicts/sets of str; latin1 maps its byte strings back to str.
        weights, tagdict, classes = pickle.load(f, encoding="latin1")  # noqa: S301 - file from an installed package
    return PerceptronTagger(weights, tagdict, classes)


def count_verb_sentences(text: str, tagger: PerceptronTagger) -> int:
    """English test of the paper: sentences with at least one token tagged as a verb (VB, VBD, VBG, VBN, VBP, VBZ)."""
    n = 0
    for s in sentences(text):
        words = _WORD.findall(s)
        if words and any(t.startswith("VB") for t in tagger.tag(words)):
            n += 1
    return n


VERB_UNAVAILABLE = "verb test needs the PyPI package textblob-aptagger; used the language-independent test"
