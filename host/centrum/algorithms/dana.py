"""DANA, DANAg and AdDANAg (Mohammadzadeh, Gottron, Schweiggert, Nakhaeizadeh): main content as the densest run
of *source lines*, mapped back to live node ids.

- DANA ("A Fast and Accurate Approach for Main Content Extraction based on Character Encoding", 2011): per line,
  T1 = non-ASCII characters, T2 = ASCII characters (1-byte UTF-8 code units); for right-to-left and other non-Latin
  pages, where content is written in multi-byte characters and markup in ASCII.
- DANAg (WEBIST 2011, the language-independent version): per line, T = content characters (outside tags) and
  S = code characters (inside tags).
- AdDANAg ("The Impact of Source Code Normalization on Main Content Extraction", WEBIST 2012): DANAg after a
  pre-processing step that replaces the attributes of every ``<a>`` opening tag by a placeholder of length LT - 5
  (LT = anchor text length), so link-rich text (wikis) keeps a positive balance.

All three share the phases: pre-processing (remove scripts, styles and comments; normalize line length), counting,
smoothing diff_i = sum_{j=i-1..i+1} (T_j - S_j), regions = maximal runs with diff > 0, then the region with most
content characters grows by merging neighbour regions while at most ``gap`` lines separate them.

The hot path works on the UTF-8 bytes as a numpy array: tag spans come from the sorted '<' / '>' positions
(searchsorted), per-line sums from ``np.add.reduceat`` over line starts and binary search over the tag spans,
script/style/comment removal from one regex scan for the openers plus ``bytes.find`` for the closers on a
lower-cased copy (no HTML parse, no per-line or per-anchor Python loop). ``run_source`` works on raw HTML without
a browser; ``run`` works on ``snapshot.source`` (the collector's serialization with ``data-cx`` node ids) and maps
the selected lines back to node ids.

The figures behind the defaults (token F1 on the dev sets per option, throughput) are in docs/algorithms/dana.md.
"""

from __future__ import annotations

import re
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..core.config import ranged
from ..core.html import html_text, remove_code, source_bytes
from ..core.result import Candidate, Overlay, Result
from ..core.snapshot import Snapshot
from ..core.trace import debug_wanted, text_wanted

Variant = Literal["dana", "danag", "addanag"]
VARIANTS: tuple[str, ...] = ("dana", "danag", "addanag")

# Debug payload bounds: a 5 MB page has ~50k lines; the debugger needs the shape, not every number.
MAX_DEBUG_LINES = 5000
MAX_DEBUG_REGIONS = 500
MAX_CANDIDATES = 12
MAX_OVERLAY_NODES = 500  # ids per drawn overlay: the debugger outlines the top-most elements, not every one


@dataclass(frozen=True)
class Config:
    """Parameters; the papers are cited by their phases (DANAg: 1 content/code length of fixed segments,
    2 smoothing, 3 boundary of the main content, 4 parsing the selected area; AdDANAg adds two pre-processing steps:
    hyperlink normalization and line-length normalization, after the usual script/style/comment removal)."""

    # Phase 3 (DANA, DANAg, AdDANAg): regions separated by at most `gap` lines are merged into the main content.
    # 20 is the papers' default; AdDANAg uses 160 for wiki-like, link-rich pages, which helps some sets and costs
    # others more (docs/algorithms/dana.md).
    gap: int = ranged(20, 0, 10_000_000)
    # Pre-processing "line-length normalization" (phase 1's fixed segments): lines are fixed segments of this many
    # bytes of the cleaned, whitespace-collapsed source, so the result does not depend on how the author wrapped
    # or minified the HTML; 0 keeps the source's own lines (the original DANA). 100 bytes is about one sentence of
    # prose: the 3-line smoothing window then spans a short paragraph and the default gap bridges ~2 KB of markup
    # (an inline ad or figure); on the dev sets it beat 50, 200 and the source's own lines (docs/algorithms/dana.md).
    line_length: int = ranged(100, 0, 10_000_000)
    # Phase 2: smoothing window half-width, diff_i = sum over j = i-w .. i+w of (T_j - S_j) (papers: w = 1).
    smoothing: int = ranged(1, 0, 10_000_000)
    # AdDANAg hyperlink normalization: the anchor attributes become a placeholder of length LT - link_offset.
    link_offset: int = ranged(5, 0, 10_000)
    # Pre-processing of all three papers removes scripts, styles and comments. <noscript> too (Centrum): its
    # content is not rendered when scripts run, and is never main content.
    remove_noscript: bool = True
    # Mapping lines back to nodes (Centrum, not in the papers): an element is selected when at least `min_overlap`
    # of its text lies in the selected lines and its text outside them is at most `max_outside` times the
    # selection's text (so <body>, or a wrapper that also holds the comments, is not chosen while a paragraph cut
    # by the first line is); then reduced to the top-most selected elements. 0.1 scored best of 0.1 / 0.2 / 0.3
    # on the dev sets (docs/algorithms/dana.md).
    min_overlap: float = ranged(0.5, 0.0, 1.0)
    max_outside: float = ranged(0.1, 0.0, 1e6)
    # Centrum option, off by default (the papers keep them): drop lines at the ends of the merged selection whose
    # own T - S <= 0 (selected only because the smoothing window reaches into the dense block next to them).
    # It did not help on the dev sets (docs/algorithms/dana.md), so the papers' rule stays the default.
    trim_edges: bool = False


# ------------------------------------------------------------------------------------------------ decoding
# ------------------------------------------------------------------------------------------------ pre-processing
_CX_B = re.compile(rb' data-cx="(\d+)"')  # literal prefix: the collector writes one space before it


# ------------------------------------------------------------------------------------------------ counting
def _collapse_whitespace(c: np.ndarray, keep_newlines: bool) -> np.ndarray:
    """Keep mask dropping every whitespace byte that follows another one (as rendering does).

    With ``keep_newlines`` (source lines kept) newlines always survive, so the line structure is unchanged.
    """
    ws = c <= 0x20  # space, tab, CR, LF, FF (other control bytes do not occur in real HTML text)
    keep = np.ones(c.size, dtype=bool)
    if c.size > 1:
        # In place: on a large page each boolean temporary is as large as the source itself.
        np.logical_and(ws[1:], ws[:-1], out=keep[1:])
        np.logical_not(keep[1:], out=keep[1:])
    del ws
    if keep_newlines:
        keep |= c == 10
    return keep


def tag_intervals(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Markup spans ``[start, end)`` (sorted, disjoint) of the byte array ``c``, brackets included.

    A '<' opens a tag only when followed by a letter, '/', '!' or '?' (HTML tokenizer), so ``a < b`` stays text;
    a tag ends at the first '>' after it; a '<' inside an open tag (``title="<b>"``) opens nothing. All from the
    sorted bracket positions (searchsorted): no per-byte state machine.
    """
    n = c.size
    brackets = np.flatnonzero((c | 2) == 62)  # '<' (60) and '>' (62) in one pass: 60 | 2 == 62
    is_lt = c[brackets] == 60
    lt, gt = brackets[is_lt], brackets[~is_lt]
    if lt.size:
        nb = c[np.minimum(lt + 1, n - 1)] | 0x20
        ok = ((nb >= 97) & (nb <= 122)) | (nb == 0x2F) | (nb == 0x21) | (nb == 0x3F)
        lt = lt[ok & (lt + 1 < n)]
    if lt.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    k = np.searchsorted(gt, lt)
    close = gt[np.minimum(k, gt.size - 1)] if gt.size else np.zeros(lt.size, dtype=np.int64)
    close = np.where(k < gt.size, close, n - 1)  # an unclosed tag runs to the end
    first = np.ones(lt.size, dtype=bool)
    first[1:] = close[1:] != close[:-1]  # a later '<' before the same '>' is inside the earlier tag
    return lt[first].astype(np.int64), close[first].astype(np.int64) + 1


def _bytes_before(start: np.ndarray, end: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Number of bytes inside the disjoint sorted spans [start, end) that lie before each offset in ``x``."""
    if start.size == 0:
        return np.zeros(x.size, dtype=np.int64)
    full = np.concatenate(([0], np.cumsum(end - start)))
    k = np.searchsorted(start, x, side="left")  # spans starting before x: 0 .. k-1
    last = np.maximum(k - 1, 0)
    overhang = np.where(k > 0, np.maximum(end[last] - x, 0), 0)  # part of span k-1 at or after x
    return full[k] - overhang


def normalize_links_array(c: np.ndarray, offset: int = 5,
                          intervals: tuple[np.ndarray, np.ndarray] | None = None
                          ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """AdDANAg pre-processing: the attributes of each ``<a ...>`` opening tag become a placeholder of LT - offset
    characters (a space and ``x``s; none when LT <= offset), LT = the anchor text length in characters.

    Vectorized over the tag spans: an opening ``<a`` pairs with the first ``</a`` after it (an ``<a`` before that
    closer is inside the anchor, as the non-greedy pattern of the paper's regular expression would treat it);
    LT = bytes between the tags - tag bytes - UTF-8 continuation bytes; the new array is one boolean compress
    (attribute bytes beyond the placeholder's length out) and, for placeholders longer than the attributes, one
    ``np.insert``. Returns the new array and a function mapping old offsets to new ones (an offset inside removed
    attributes maps to the end of the placeholder).
    """
    n = c.size
    st, en = intervals if intervals is not None else tag_intervals(c)
    if st.size == 0:
        return c, lambda p: p
    nxt = [c[np.minimum(st + d, n - 1)] for d in (1, 2, 3)]
    is_open = ((nxt[0] | 0x20) == 0x61) & ((nxt[1] <= 0x20) | (nxt[1] == 0x3E)) & (st + 2 < n)
    is_close = ((nxt[0] == 0x2F) & ((nxt[1] | 0x20) == 0x61) & ((nxt[2] <= 0x20) | (nxt[2] == 0x3E))
                & (st + 3 < n))
    o_s, o_e = st[is_open], en[is_open]
    c_s = st[is_close]
    k = np.searchsorted(c_s, o_e)
    ok = k < c_s.size  # an anchor never closed is left alone
    o_s, o_e, k = o_s[ok], o_e[ok], k[ok]
    first = np.ones(k.size, dtype=bool)
    first[1:] = k[1:] != k[:-1]
    o_s, o_e, k = o_s[first], o_e[first], k[first]
    if o_s.size == 0:
        return c, lambda p: p
    close = c_s[k]
    m = close.size
    edges = np.concatenate((close, o_e))
    tag_b = _bytes_before(st, en, edges)
    if c.max() >= 0x80:
        cont = (c & 0xC0) == 0x80  # UTF-8 continuation bytes; close and o_e are each sorted
        cont_b = np.concatenate((count_before(cont, close), count_before(cont, o_e)))
        del cont
    else:
        cont_b = np.zeros(edges.size, dtype=np.int64)
    lt = (close - o_e) - (tag_b[:m] - tag_b[m:]) - (cont_b[:m] - cont_b[m:])
    kk = np.maximum(lt - offset, 0)
    a_s = o_s + 2  # attributes: after "<a" up to the closing '>'
    a_e = np.maximum(o_e - 1, a_s)
    alen = a_e - a_s
    # Usually the placeholder is shorter than the attributes: keep its length of them (overwritten below) and drop
    # the rest; only the excess of a longer placeholder is inserted.
    keep_n = np.minimum(kk, alen)
    out = c[_outside_spans(a_s + keep_n, a_e, n)]
    extra = kk - keep_n
    more = extra > 0
    if more.any():
        at = a_e - np.cumsum(alen - keep_n)  # the tag's '>' once the dropped bytes are out
        out = np.insert(out, np.repeat(at[more], extra[more]), np.uint8(0x78))
    delta = kk - alen
    cum = np.concatenate(([0], np.cumsum(delta)))
    ph = a_s + cum[:-1]  # where each placeholder starts in the new array
    total = int(kk.sum())
    if total:
        out[np.repeat(ph, kk) + (np.arange(total) - np.repeat(cum_excl(kk), kk))] = 0x78  # 'x'
        out[ph[kk > 0]] = 0x20  # a space after the tag name keeps it "<a ...>"

    def remap(p: np.ndarray) -> np.ndarray:
        j = np.searchsorted(a_s, p, side="right")  # anchors whose attributes start at or before p
        jj = np.maximum(j - 1, 0)
        inside = (j > 0) & (p < a_e[jj])
        return np.where(inside, ph[jj] + kk[jj], p + cum[j])

    return out, remap


def _outside_spans(start: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:
    """Boolean mask of length n, False inside the sorted disjoint spans [start, end).

    ``np.repeat`` of an alternating True/False pattern by the segment lengths: memset speed (an int8 prefix sum
    over a +1/-1 array is ~15x slower).
    """
    bounds = np.empty(2 * start.size + 2, dtype=np.int64)
    bounds[0], bounds[-1] = 0, n
    bounds[1:-1:2] = start
    bounds[2:-1:2] = end
    pattern = np.ones(bounds.size - 1, dtype=bool)
    pattern[1::2] = False
    return np.repeat(pattern, np.diff(bounds))


def cum_excl(x: np.ndarray) -> np.ndarray:
    """Exclusive prefix sum: ``[0, x0, x0 + x1, ...]`` (len(x) entries)."""
    out = np.zeros(x.size, dtype=np.int64)
    np.cumsum(x[:-1], out=out[1:])
    return out


def line_starts(c: np.ndarray, line_length: int) -> np.ndarray:
    """Start offset of every line: fixed segments of ``line_length`` bytes, or the source's own lines (0)."""
    n = c.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if line_length > 0:
        return np.arange(0, n, line_length, dtype=np.int64)
    starts = np.flatnonzero(c == 10) + 1
    return np.concatenate(([0], starts[starts < n])).astype(np.int64)


def line_counts(c: np.ndarray, starts: np.ndarray, variant: str,
                intervals: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-line (content, code) character counts: (T, S) for DANAg/AdDANAg, (T1, T2) for DANA.

    Characters, not bytes: a UTF-8 continuation byte (10xxxxxx) never starts a character.
    DANA: T1 = non-ASCII characters (lead byte >= 0xC0), T2 = ASCII bytes (< 0x80), markup included, as the paper.
    DANAg: T = characters outside tags, S = bytes inside tags (markup is ASCII but for attribute values). Per-line
    tag bytes come from the span boundaries by binary search, so the only full passes are two comparisons and
    one ``np.add.reduceat``.
    """
    if starts.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    bounds = np.concatenate((starts, [c.size]))
    if variant == "dana":
        if c.max() < 0x80:  # ASCII only: no non-ASCII character, every byte is ASCII
            return np.zeros(starts.size, dtype=np.int64), np.diff(bounds)
        return _per_line(c >= 0xC0, bounds), _per_line(c < 0x80, bounds)
    if c.size and c.max() < 0x80:  # ASCII only (one SIMD pass): every byte is a character
        chars = np.diff(bounds)
    else:
        chars = _per_line((c & 0xC0) != 0x80, bounds)
    before = _bytes_before(*(intervals if intervals is not None else tag_intervals(c)), bounds)
    s = np.diff(before)
    return np.maximum(chars - s, 0), s


def _per_line(mask: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Set bytes of ``mask`` in each line ``[bounds[i], bounds[i + 1])``: differences of :func:`count_before`'s
    piecewise prefix count. (``np.add.reduceat`` with an int64 result casts its whole input to int64 first: eight
    times the source, the largest temporary of a large page.)"""
    return np.diff(count_before(mask, bounds))


def smooth(t: np.ndarray, s: np.ndarray, width: int = 1) -> np.ndarray:
    """diff_i = sum_{j=i-w..i+w} (T_j - S_j), lines beyond the ends count 0 (DANA section 3.2)."""
    d = t.astype(np.int64) - s.astype(np.int64)
    if width <= 0 or d.size == 0:
        return d
    c = np.concatenate(([0], np.cumsum(d)))
    i = np.arange(d.size)
    return c[np.minimum(i + width + 1, d.size)] - c[np.maximum(i - width, 0)]


def find_regions(diff: np.ndarray, content: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal runs of lines with diff > 0: (starts, ends exclusive, content characters in the run)."""
    pos = np.zeros(diff.size + 2, dtype=np.int8)
    pos[1:-1] = diff > 0
    edges = np.diff(pos)
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    cum = np.concatenate(([0], np.cumsum(content, dtype=np.int64)))
    return starts, ends, cum[ends] - cum[starts]


def merge_regions(starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray, gap: int) -> tuple[int, int, int]:
    """From the region with most characters, merge neighbours while at most ``gap`` lines separate them.

    Returns (best, first, last) region indices. Vectorized: the merge stops at the first separation > gap on
    each side of the best region.
    """
    best = int(np.argmax(sizes))
    seps = starts[1:] - ends[:-1]  # lines strictly between region k and k+1
    right = np.flatnonzero(seps[best:] > gap)
    last = best + int(right[0]) if right.size else starts.size - 1
    left = np.flatnonzero(seps[:best] > gap)
    first = int(left[-1]) + 1 if left.size else 0
    return best, first, last


def trim_edges(t: np.ndarray, s: np.ndarray, lo: int, hi: int) -> tuple[int, int]:
    """Drop lines at both ends of [lo, hi) whose own T - S <= 0.

    Smoothing makes the line next to a dense block positive even when it is pure menu markup; inside the
    selection it bridges, at the edges it only adds boilerplate.
    """
    own = np.flatnonzero(t[lo:hi] > s[lo:hi])
    if own.size == 0:
        return lo, hi
    return lo + int(own[0]), lo + int(own[-1]) + 1


# ------------------------------------------------------------------------------------------------ text output
def _snap_range(c: bytes, a: int, b: int) -> tuple[int, int]:
    """Widen [a, b) so it neither starts nor ends inside a tag or a text run (lines are fixed segments)."""
    n = len(c)
    if a > 0:
        lt, gt = c.rfind(b"<", 0, a + 1), c.rfind(b">", 0, a)
        if lt > gt:  # a is inside a tag: start at its '<'
            a = lt
        else:  # inside text: start after the previous tag
            a = gt + 1
    if b < n:
        lt, gt = c.find(b"<", b - 1), c.find(b">", b - 1)
        if 0 <= gt and (lt < 0 or gt < lt):  # inside a tag: end after its '>'
            b = gt + 1
        else:  # inside text: end at the next tag
            b = n if lt < 0 else lt
    return a, b


# ------------------------------------------------------------------------------------------------ pipeline
@dataclass
class _Analysis:
    clean: bytes  # cleaned, whitespace-collapsed source: what the text is extracted from
    counted: int  # length of the counted array: clean without whitespace between two tags
    dropped: np.ndarray  # offsets in clean of the inter-tag whitespace bytes not counted
    starts: np.ndarray  # line start offsets into the counted array
    t: np.ndarray  # per-line content count (T or T1)
    s: np.ndarray  # per-line code count (S or T2)
    diff: np.ndarray
    r_starts: np.ndarray  # region line ranges
    r_ends: np.ndarray
    r_sizes: np.ndarray
    merged: tuple[int, int, int] | None  # (best, first, last) region indices
    lines: tuple[int, int] | None  # selected lines [lo, hi) after edge trimming
    cx_ids: np.ndarray  # data-cx ids found in the source, in source order
    cx_pos: np.ndarray  # their offsets in the counted array
    timing: dict[str, float]

    def line_bytes(self, first_line: int, end_line: int) -> tuple[int, int]:
        """Offsets in the counted array of lines [first_line, end_line)."""
        n = self.counted
        a = int(self.starts[first_line]) if first_line < self.starts.size else n
        b = int(self.starts[end_line]) if end_line < self.starts.size else n
        return a, b

    def to_clean(self, p: int) -> int:
        """Offset in ``clean`` of counted offset ``p`` (dropped byte j sits before counted offset d_j - j)."""
        if self.dropped.size == 0:
            return p
        return p + int(np.searchsorted(self.dropped - np.arange(self.dropped.size), p, side="right"))


def _cut_ids(data: bytes) -> tuple[bytes, np.ndarray, np.ndarray]:
    """``data`` without the collector's ``data-cx`` attributes (they are not in the page the papers saw), the ids
    and where each one was in the returned bytes. The split pieces live only in this call: on a large page they
    are several times the source in Python objects."""
    parts = _CX_B.split(data)
    if len(parts) == 1:
        return data, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    texts = parts[0::2]
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return b"".join(texts), np.array(parts[1::2]).astype(np.int64), np.cumsum(lens)[:-1]


# Bytes per piece of :func:`count_before` (a multiple of 8): its prefix sum is int64 per 8 bytes of the piece.
_PREFIX_PIECE = 1 << 21
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def count_before(mask: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``mask[:p].sum()`` for each offset ``p`` of the sorted ``pos`` (offsets in ``[0, mask.size]``).

    Piece by piece, on the mask packed eight bytes to a byte (``np.packbits``): the prefix sum runs over the set-bit
    counts of the packed bytes, and the bits of ``p``'s own byte before it are counted apart. A prefix sum over the
    whole mask would be an int64 array eight times the source, alive beside every later pass; one over every byte of
    a piece cost most of DANA's time (an int64 accumulation per byte)."""
    out = np.zeros(pos.size, dtype=np.int64)
    done = 0
    for a in range(0, mask.size, _PREFIX_PIECE):
        packed = np.packbits(mask[a:a + _PREFIX_PIECE])
        size = min(_PREFIX_PIECE, mask.size - a)
        csum = np.zeros(packed.size + 1, dtype=np.int64)
        np.cumsum(_POPCOUNT[packed], dtype=np.int64, out=csum[1:])
        # Offsets p in (a, a + size] (p = 0 stays 0): whole packed bytes before p - a, then the leading bits of the
        # byte holding p - a (packbits is big-endian: a byte's first mask byte is its highest bit).
        lo, hi = int(np.searchsorted(pos, a + 1, side="left")), int(np.searchsorted(pos, a + size, side="right"))
        rel = pos[lo:hi] - a
        q, r = rel >> 3, rel & 7
        head = packed[np.minimum(q, packed.size - 1)].astype(np.uint16) >> (8 - r)
        out[lo:hi] = done + csum[q] + _POPCOUNT[head]
        done += int(csum[-1])
    return out


# The page source without code and ids, per snapshot and ``remove_noscript``: the three variants (the ensemble runs
# them all on one page) start from the very same bytes, cut once. Weak keys: an entry goes with its snapshot.
_PREPROCESSED: weakref.WeakKeyDictionary[Snapshot, dict[bool, tuple[bytes, np.ndarray, np.ndarray]]] = (
    weakref.WeakKeyDictionary())


def _preprocess(source: str | bytes, noscript: bool, snapshot: Snapshot | None) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The source without code (:func:`remove_code`) and, for a snapshot, without its ids (:func:`_cut_ids`)."""
    if snapshot is None:
        return remove_code(source_bytes(source), noscript), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    kept = _PREPROCESSED.setdefault(snapshot, {})
    if noscript not in kept:
        kept[noscript] = _cut_ids(remove_code(source_bytes(source), noscript))
    return kept[noscript]


def _analyse(source: str | bytes, cfg: Config, variant: str, snapshot: Snapshot | None) -> _Analysis:
    """``snapshot``: the snapshot whose source this is (its node ids are cut out and kept), or None for raw HTML."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown DANA variant {variant!r} (known: {', '.join(VARIANTS)})")
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    data, cx_ids, cx_pos = _preprocess(source, cfg.remove_noscript, snapshot)
    timing["preprocess"] = (time.perf_counter() - t0) * 1000

    t0 = time.perf_counter()
    raw = np.frombuffer(data, dtype=np.uint8)
    keep = _collapse_whitespace(raw, keep_newlines=cfg.line_length <= 0)
    clean = raw[keep]
    if cx_pos.size:
        cx_pos = count_before(keep, cx_pos)
    # The uncleaned source's view and its mask are not read again: they go before the later passes allocate theirs
    # (the cut source itself stays in _PREPROCESSED for the snapshot's other DANA variants).
    del raw, keep, data
    # Tag spans are found once and carried through the two later edits (DANA does not need them).
    iv = tag_intervals(clean) if variant != "dana" else None
    if variant == "addanag" and iv is not None:
        clean, remap = normalize_links_array(clean, cfg.link_offset, iv)
        iv = (remap(iv[0]), remap(iv[1]))
        if cx_pos.size:
            cx_pos = remap(cx_pos)
    dropped = np.zeros(0, dtype=np.int64)
    c = clean
    if cfg.line_length > 0 and clean.size > 2:
        # Whitespace between two tags is formatting, not content: "</li>\n<li>" and "</li><li>" must count the
        # same or wrapping would change the result. It stays in `clean` so that inline words keep their spaces.
        inter = np.zeros(clean.size, dtype=bool)
        inter[1:-1] = (clean[1:-1] <= 0x20) & (clean[:-2] == 62) & (clean[2:] == 60)
        dropped = np.flatnonzero(inter)
        if dropped.size:
            c = clean[~inter]
            if cx_pos.size:
                cx_pos = cx_pos - np.searchsorted(dropped, cx_pos, side="left")
            if iv is not None:
                iv = (iv[0] - np.searchsorted(dropped, iv[0]), iv[1] - np.searchsorted(dropped, iv[1]))
    starts = line_starts(c, cfg.line_length)
    t, s = line_counts(c, starts, variant, iv)
    timing["count"] = (time.perf_counter() - t0) * 1000

    t0 = time.perf_counter()
    diff = smooth(t, s, cfg.smoothing)
    r_starts, r_ends, r_sizes = find_regions(diff, t)
    merged = merge_regions(r_starts, r_ends, r_sizes, cfg.gap) if r_starts.size and r_sizes.max() > 0 else None
    lines = None
    if merged is not None:
        lo, hi = int(r_starts[merged[1]]), int(r_ends[merged[2]])
        lines = trim_edges(t, s, lo, hi) if cfg.trim_edges else (lo, hi)
    timing["regions"] = (time.perf_counter() - t0) * 1000
    return _Analysis(clean.tobytes(), int(c.size), dropped, starts, t, s, diff, r_starts, r_ends, r_sizes, merged,
                     lines, cx_ids, cx_pos, timing)


def _debug(an: _Analysis, cfg: Config, variant: str) -> dict[str, Any]:
    k = min(an.t.size, MAX_DEBUG_LINES)
    names = ("T1", "T2") if variant == "dana" else ("T", "S")
    order = np.argsort(-an.r_sizes, kind="stable")[:MAX_DEBUG_REGIONS]
    dbg: dict[str, Any] = {
        "variant": variant,
        "bytes": an.counted,
        "lines": int(an.t.size),
        "line_length": cfg.line_length,
        "gap": cfg.gap,
        "counts": {names[0]: an.t[:k].tolist(), names[1]: an.s[:k].tolist()},
        "diff": an.diff[:k].tolist(),
        "lines_truncated": bool(an.t.size > k),
        "regions": [{"index": int(i), "lines": [int(an.r_starts[i]), int(an.r_ends[i])],
                     "chars": int(an.r_sizes[i])} for i in order],
        "regions_total": int(an.r_starts.size),
        "regions_truncated": bool(an.r_starts.size > MAX_DEBUG_REGIONS),
    }
    if an.merged is not None:
        best, first, last = an.merged
        assert an.lines is not None
        lo, hi = an.lines
        dbg["merged"] = {"best": best, "regions": [first, last], "lines": [lo, hi],
                         "untrimmed_lines": [int(an.r_starts[first]), int(an.r_ends[last])],
                         "bytes": list(an.line_bytes(lo, hi)), "chars": int(an.r_sizes[first:last + 1].sum())}
    return dbg


def _no_region_message(variant: str) -> str:
    if variant == "dana":
        return ("no line has more non-ASCII than ASCII characters: DANA is meant for pages in non-Latin scripts "
                "(Arabic, Persian, Urdu, ...); use danag on this page")
    return "no line has more content than markup characters"


def _text_for_lines(an: _Analysis, lo: int, hi: int) -> str:
    a, b = an.line_bytes(lo, hi)
    a, b = _snap_range(an.clean, an.to_clean(a), an.to_clean(b))
    return html_text(an.clean[a:b])


def run_source(html: str | bytes, config: Config | None = None, variant: str = "danag") -> Result:
    """Run a variant on raw HTML without a browser (``centrum extract --no-render``): ``nodes`` empty, ``text`` set.

    Bytes are read as :func:`centrum.core.charset.decode` reads them.
    """
    cfg = config or Config()
    t0 = time.perf_counter()
    an = _analyse(html, cfg, variant, None)
    dbg = _debug(an, cfg, variant)
    if an.merged is None:
        return Result(variant, [], debug=dbg, message=_no_region_message(variant), text="",
                      timing_ms={"algorithm": (time.perf_counter() - t0) * 1000})
    best, first, last = an.merged
    assert an.lines is not None
    lo, hi = an.lines
    text = _text_for_lines(an, lo, hi)
    candidates = [Candidate([], float(an.r_sizes[first:last + 1].sum()), label=f"merged regions {first}..{last}",
                            features={"lines": float(hi - lo), "regions": float(last - first + 1)})]
    candidates += _region_candidates(an, None)
    return Result(variant, [], candidates, debug=dbg, text=text,
                  timing_ms={"algorithm": (time.perf_counter() - t0) * 1000})


# ------------------------------------------------------------------------------------------------ back to nodes
@dataclass
class _Spans:
    """Where every element and text node of the snapshot sits in the counted source array."""

    pos: np.ndarray  # (n,) offset of each element's opening tag (where its data-cx was)
    after: np.ndarray  # (n,) end of its serialized subtree
    text_mid: np.ndarray  # (m,) estimated middle offset of each text node
    text_w: np.ndarray  # (m,) text length (characters)
    total: np.ndarray  # (n,) text length in each element's subtree (the same for every range asked)


def _element_spans(an: _Analysis, snapshot: Snapshot) -> _Spans:
    """Element spans [pos, after) and text node positions in the counted array.

    pos = where its ``data-cx`` was; after = pos of the first element after its subtree. Elements absent from the
    source (removed with a script, or never serialized) get the position of the next present element: an empty
    span, so they are never selected on their own. A text node lies between element ``seq - 1``'s opening tag and
    element ``seq``'s: the middle of that interval stands for it (exact enough for a leaf paragraph, the common
    case, and needs no byte length of the text).
    """
    n = snapshot.n
    ok = (an.cx_ids >= 0) & (an.cx_ids < n)
    pos_known = np.full(n + 1, -1, dtype=np.int64)
    pos_known[an.cx_ids[ok]] = an.cx_pos[ok]
    pos_known[n] = an.counted
    idx = np.where(pos_known >= 0, np.arange(n + 1), n)
    nxt = np.minimum.accumulate(idx[::-1])[::-1]  # next present index (n = the end sentinel)
    pos = pos_known[nxt]
    after = np.maximum(pos[snapshot.subtree_end], pos[:n])  # ids out of order must not give negative spans
    seq = snapshot.text_seq
    mid = (pos[np.maximum(seq - 1, 0)] + pos[seq]) // 2
    text_w = snapshot.text_len.astype(np.int64)
    total = snapshot.subtree_sum(snapshot.text_per_element(text_w.astype(float))) if snapshot.m else np.zeros(n)
    return _Spans(pos[:n], after, mid, text_w, total)


# Ranges mapped to nodes per batch (:func:`_nodes_for_ranges`): their (ranges x elements) arrays stay a few MB.
_RANGE_BATCH_VALUES = 1 << 21


def _nodes_for_ranges(spans: _Spans, snapshot: Snapshot, ranges: list[tuple[int, int]], cfg: Config
                      ) -> list[list[int]]:
    """:func:`_select` for each counted range ``[a, b)`` of ``ranges`` (the answer's and the regions'): the text of
    each range summed over every subtree for all ranges at once, one bincount and one prefix sum per batch (a
    range's sums are added in the same order as for that range alone, so they are the same doubles)."""
    n, m = snapshot.n, snapshot.m
    out: list[list[int]] = []
    step = max(1, _RANGE_BATCH_VALUES // max(n, m, 1))
    for k0 in range(0, len(ranges), step):
        part = np.asarray(ranges[k0:k0 + step], dtype=np.int64).reshape(-1, 2)
        k = part.shape[0]
        w_in = spans.text_w * ((spans.text_mid >= part[:, :1]) & (spans.text_mid < part[:, 1:]))
        if m:
            keys = (snapshot.text_owner + n * np.arange(k, dtype=np.int64)[:, None]).ravel()
            per_el = np.bincount(keys, weights=w_in.astype(float).ravel(), minlength=k * n).reshape(k, n)
            c = np.zeros((k, n + 1), dtype=np.float64)
            np.cumsum(per_el, axis=1, out=c[:, 1:])
            inside = c[:, snapshot.subtree_end] - c[:, :n]
        else:
            inside = np.broadcast_to(spans.total, (k, n))
        out += [_select(spans, snapshot, inside[j], float(w_in[j].sum()), a, b, cfg)
                for j, (a, b) in enumerate(part.tolist())]
    return out


def _select(spans: _Spans, snapshot: Snapshot, inside: np.ndarray, sel_total: float, a: int, b: int, cfg: Config
            ) -> list[int]:
    """Top-most elements that the selected counted range [a, b) covers (``inside``: per element, the text of its
    subtree inside the range; ``sel_total``: the range's text).

    An element with text is selected when at least ``min_overlap`` of its text lies in the range and its text
    outside the range is at most ``max_outside`` of the range's text (text, not bytes, so a long href outside does
    not veto a paragraph while a footer's link texts do veto a wrapper). Elements without text (images, line
    breaks) are never chosen on their own: they come with a chosen ancestor, and one next to the selection's edge
    is not content just because the smoothing window reached its tag. Without any text in the range, the smallest
    element overlapping it most (bytes) is the answer.
    """
    total = spans.total
    sel = (inside > 0) & (inside >= cfg.min_overlap * total) & (total - inside <= cfg.max_outside * sel_total)
    if not sel.any():
        # The range lies inside one element's text (a long <pre>): the smallest element that overlaps it most.
        ov = np.clip(np.minimum(spans.after, b) - np.maximum(spans.pos, a), 0, None)
        if ov.max() <= 0:
            return []
        cand = np.flatnonzero(ov == ov.max())
        return [int(cand[np.argmin((spans.after - spans.pos)[cand])])]
    par = snapshot.parent
    parent_sel = np.where(par >= 0, sel[np.maximum(par, 0)], False)
    return np.flatnonzero(sel & ~parent_sel).tolist()


def _region_order(an: _Analysis) -> np.ndarray:
    return np.argsort(-an.r_sizes, kind="stable")[: MAX_CANDIDATES - 1]


def _region_candidates(an: _Analysis, nodes_of: list[list[int]] | None) -> list[Candidate]:
    """The regions, largest first, as candidates (``nodes_of``: each one's nodes, in that order; None: no nodes)."""
    out = []
    for rank, i in enumerate(_region_order(an)):
        lo, hi = int(an.r_starts[i]), int(an.r_ends[i])
        out.append(Candidate(nodes_of[rank] if nodes_of is not None else [], float(an.r_sizes[i]),
                             label=f"region #{rank + 1} (lines {lo}-{hi})",
                             features={"lines": float(hi - lo), "region": float(i)}))
    return out


def run(snapshot: Snapshot, config: Config | None = None, variant: str = "danag") -> Result:
    """Run a variant on ``snapshot.source`` and map the selected lines back to node ids (top-most elements)."""
    cfg = config or Config()
    if not snapshot.source:
        return Result(variant, [], message="the snapshot has no page source (collect with source=true): "
                                           f"{variant} works on the serialized HTML")
    an = _analyse(snapshot.source, cfg, variant, snapshot)
    dbg = _debug(an, cfg, variant) if debug_wanted() else {}  # a proposer's trace is read by nobody
    timing = {f"stage.{k}": round(v, 3) for k, v in an.timing.items()}
    if an.merged is None:
        return Result(variant, [], debug=dbg, message=_no_region_message(variant), timing_ms=timing)
    t0 = time.perf_counter()
    best, first, last = an.merged
    assert an.lines is not None
    lo, hi = an.lines
    spans = _element_spans(an, snapshot)
    regions = [an.line_bytes(int(an.r_starts[i]), int(an.r_ends[i])) for i in _region_order(an)]
    ranges = [an.line_bytes(lo, hi), *regions]
    nodes, *region_nodes = _nodes_for_ranges(spans, snapshot, ranges, cfg)
    candidates = [Candidate(nodes, float(an.r_sizes[first:last + 1].sum()), label=f"merged regions {first}..{last}",
                            features={"lines": float(hi - lo), "regions": float(last - first + 1)})]
    candidates += _region_candidates(an, region_nodes)
    timing["stage.map"] = round((time.perf_counter() - t0) * 1000, 3)
    overlays = [Overlay("candidate", c.label, round(c.score, 4), nodes=c.nodes[:MAX_OVERLAY_NODES])
                for c in candidates[1:]]
    if not nodes:
        return Result(variant, [], candidates, dbg, timing_ms=timing, overlays=overlays,
                      message="the selected lines contain no element of the snapshot (source and DOM disagree)")
    overlays.append(Overlay("answer", candidates[0].label, nodes=nodes[:MAX_OVERLAY_NODES]))
    text = snapshot.text_of(nodes) if text_wanted() else None  # None when the caller reads nodes only (the ensemble)
    return Result(variant, nodes, candidates, dbg, text=text, timing_ms=timing, overlays=overlays)
