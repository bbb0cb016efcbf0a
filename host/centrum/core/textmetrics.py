"""Script-fair tokenization and word counting.

Spaced scripts (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Hangul, ...) are split on whitespace and
punctuation. Scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, Tibetan) count one
token per character, the usual convention of CJK evaluation (character-level F1), so that a Japanese page is not
"one word" long. Combining marks (Devanagari vowel signs, Arabic harakat, accents) belong to their word: Python's
``\\w`` alone would split "समिति" into pieces. Algorithms (R4 word ratio, zoning token counts) and the evaluation
share these functions so that "a word" means the same everywhere.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

# Unspaced scripts: one token per character, as (first, last) code points.
_UNSPACED_RANGES = [
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
]
_UNSPACED = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _UNSPACED_RANGES)
_JOINERS = "'’.-"  # "It's", "e.g", "well-known" stay one token when a word character follows

OTHER, WORD, UNSPACED, JOINER = 0, 1, 2, 3


@functools.cache
def _bmp_table() -> np.ndarray:
    """Class of every BMP code point (built once, ~40 ms)."""
    table = np.zeros(0x10000, dtype=np.uint8)
    for c in range(0x10000):
        ch = chr(c)
        if ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M":
            table[c] = WORD
    for a, b in _UNSPACED_RANGES:
        if a < 0x10000:
            # Thai/Lao/Khmer/Myanmar vowel signs are marks but still one token per character in these scripts.
            table[a: b + 1] = UNSPACED
    for ch in _JOINERS:
        table[ord(ch)] = JOINER
    return table


@functools.cache
def _token_regex() -> re.Pattern[str]:
    table = _bmp_table()
    marks = np.nonzero(table == WORD)[0]
    # Characters that are word characters for us but not for ``\w`` (combining marks), as a class of ranges.
    extra = [c for c in marks.tolist() if not re.match(r"\w", chr(c))]
    ranges: list[str] = []
    for c in extra:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)  # type: ignore[assignment]
        else:
            ranges.append((c, c))  # type: ignore[arg-type]
    mark_class = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)  # type: ignore[misc]
    word = rf"(?:[^\s{_UNSPACED}\W]|[{mark_class}])"
    joiner = "[" + re.escape(_JOINERS) + "]"
    return re.compile(rf"[{_UNSPACED}]|{word}+(?:{joiner}{word}+)*", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Tokens of ``text``: words of spaced scripts (case kept), single characters of unspaced scripts.

    Punctuation is dropped; digits count as words. ``tokens("日本語 text, ok")`` → ``['日', '本', '語', 'text', 'ok']``.
    """
    return _token_regex().findall(text)


def count_words(text: str) -> int:
    """Number of :func:`tokens` in ``text`` (one short text: the regex is cheaper than a numpy pass)."""
    return len(_token_regex().findall(text))


def char_classes(codes: np.ndarray) -> np.ndarray:
    """Class (OTHER, WORD, UNSPACED, JOINER) of each code point in a uint32 array."""
    table = _bmp_table()
    cls = np.empty(codes.shape[0], dtype=np.uint8)
    bmp = codes < 0x10000
    cls[bmp] = table[codes[bmp]]
    astral = codes[~bmp]
    if astral.size:
        # Outside the BMP: CJK extensions are unspaced; everything else (historic scripts, emoji) a word char
        # unless it is an emoji/symbol plane character, which we count as other.
        a_cls = np.where((astral >= 0x20000) & (astral <= 0x2FA1F), UNSPACED,
                         np.where((astral >= 0x1F000) & (astral <= 0x1FAFF), OTHER, WORD))
        cls[~bmp] = a_cls
    return cls


def count_words_many(texts: Sequence[str]) -> np.ndarray:
    """Token counts of many texts as an int64 array, in vectorized passes over all their characters.

    Equals ``[len(tokens(t)) for t in texts]``: a token starts at an unspaced character, or at a word character whose
    predecessor is neither a word character nor a joiner that follows a word character. The texts are taken in runs
    of about ``_COUNT_PIECE`` characters: one pass holds some 30 bytes per character (code points, classes, masks,
    a prefix sum), which over a whole large page would outweigh the page itself.
    """
    m = len(texts)
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=m)
    ends = np.cumsum(lengths + 1)
    # Run k: texts [cut[k], cut[k+1]); a text longer than a piece is a run of its own.
    cut = np.unique(np.r_[0, np.searchsorted(ends, np.arange(_COUNT_PIECE, int(ends[-1]), _COUNT_PIECE)), m])
    out = np.empty(m, dtype=np.int64)
    for a, b in zip(cut[:-1].tolist(), cut[1:].tolist(), strict=True):
        out[a:b] = _count_run(texts[a:b], lengths[a:b])
    return out


_COUNT_PIECE = 1 << 18


def _count_run(texts: Sequence[str], lengths: np.ndarray) -> np.ndarray:
    """:func:`count_words_many` of one run of texts, joined into one array of code points."""
    joined = "\x00".join(texts)  # the separator is class OTHER: no token spans two texts
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    del joined
    cls = char_classes(codes)
    del codes
    word = cls == WORD
    prev_word = np.zeros_like(word)
    prev_word[1:] = word[:-1]
    bridged = np.zeros_like(word)
    bridged[2:] = (cls[1:-1] == JOINER) & word[:-2]
    starts = (word & ~prev_word & ~bridged) | (cls == UNSPACED)
    # Per-text sums: text k occupies [off[k], off[k] + len(texts[k])) in the joined string.
    off = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths + 1, out=off[1:])
    c = np.zeros(starts.size + 1, dtype=np.int64)
    np.cumsum(starts, out=c[1:])
    return c[off[:-1] + lengths] - c[off[:-1]]


def is_unspaced(ch: str) -> bool:
    """True when ``ch`` belongs to a script written without spaces between words."""
    return any(a <= ord(ch) <= b for a, b in _UNSPACED_RANGES)


_HASH_BASE = np.uint64(1_000_003)


def token_hashes(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The :func:`tokens` of ``text`` as 64-bit hashes (a polynomial over their code points, wrapping), with each
    token's start offset in ``text``: a vectorized stand-in for ``set(tokens(...))`` lookups over many texts at
    once (join them with a separator of class OTHER, such as ``"\\x00"``, and place the starts with searchsorted).
    The regex of :func:`tokens` costs about a microsecond a character; this a few numpy passes."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if codes.size == 0:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    cls = char_classes(codes)
    word = cls == WORD
    prev_word = np.zeros_like(word)
    prev_word[1:] = word[:-1]
    next_word = np.zeros_like(word)
    next_word[:-1] = word[1:]
    bridged = np.zeros_like(word)
    bridged[2:] = (cls[1:-1] == JOINER) & word[:-2]
    unspaced = cls == UNSPACED
    starts = (word & ~prev_word & ~bridged) | unspaced
    inside = np.nonzero(word | unspaced | ((cls == JOINER) & prev_word & next_word))[0]
    first = np.nonzero(starts)[0]
    tid = np.cumsum(starts[inside]) - 1
    pos = inside - first[tid]
    with np.errstate(over="ignore"):
        steps = np.full(int(pos.max()) + 1 if pos.size else 1, _HASH_BASE, dtype=np.uint64)
        steps[0] = 1
        powers = np.cumprod(steps, dtype=np.uint64)
        values = codes[inside].astype(np.uint64) * powers[pos]
        hashes = np.add.reduceat(values, np.searchsorted(inside, first)) if first.size else values[:0]
    return hashes.astype(np.uint64), first.astype(np.int64)
