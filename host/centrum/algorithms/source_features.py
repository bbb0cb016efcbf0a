"""Source-only page arrays and block features: the page's HTML parsed by lexbor (selectolax), without a browser or
geometry.

:func:`parse` walks lexbor's tree once (first child / next sibling, SKIP subtrees never entered) into pre-order
element arrays (parent, tag, subtree end, class/id cues and tags inherited from the ancestors, as bit sets) and
*blocks*: runs of text with the same block-level container, the lines a reader would see. :func:`block_features`
turns them into one feature row per block, every column computed for all blocks at once with numpy (prefix sums over
the pre-order subtree ranges, one table lookup per character class over the joined block texts, token hashes for
the title overlap), so a page costs one Python pass over its elements plus vectorized work.
Features are script-fair (``centrum.core.textmetrics`` words, sentence and clause marks of many scripts) and markup
words are the ensemble's cue groups (``ensemble.features``), so the two extractors read class and id alike."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from ..core.html import shown_only_without_scripts
from ..core.textmetrics import count_words_many, token_hashes
from .ensemble.features import (
    CUE_GROUPS,
    LONG_WORDS,
    NEGATIVE,
    PARAGRAPH_LINK_DENSITY,
    PARAGRAPH_WORDS,
    POSITIVE,
    char_table,
)

# Elements whose content is never main text: walked over (their tail text still counts).
SKIP = frozenset({"script", "style", "noscript", "template", "head", "title", "svg", "math", "iframe", "object",
                  "embed", "select", "option", "textarea", "button", "input", "canvas", "video", "audio", "map",
                  "datalist", "meta", "link"})
# Block-level containers: text under one of them (and no deeper one) is one block.
BLOCK = frozenset({"address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
                   "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
                   "h3", "h4", "h5", "h6", "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section",
                   "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "menu", "legend"})
# Container tags with their own column; ancestors' tags that say what a region is.
OWN_TAGS = ("p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "dd", "dt",
            "section", "article", "figcaption", "span_like", "body")
_OWN_TAG_CODE = {t: k for k, t in enumerate(OWN_TAGS)}
ANCESTOR_TAGS = ("article", "main", "nav", "footer", "header", "aside", "form", "li", "table", "blockquote",
                 "figure", "a", "h1", "h2", "h3", "ul", "ol", "section", "p")
_CUES = {"positive": POSITIVE, "negative": NEGATIVE, **CUE_GROUPS}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden")

def _byte_set(*ranges: tuple[int, int]) -> bytes:
    return bytes(b for lo, hi in ranges for b in range(lo, hi + 1))


# Characters of undecodable bytes (C0/C1 controls, U+FFFD); and those no HTML text holds (core.html.BAD_CHARS: C0
# controls, U+FFFE/U+FFFF, lone surrogates). Found in the page's UTF-8 bytes: a C0 control or DEL is its own byte
# (never part of a longer sequence), a C1 control is C2 80-9F, U+FFFD EF BF BD, U+FFFE/U+FFFF EF BF BE/BF and a
# surrogate ED A0-BF (encoded with "surrogatepass"); C2, EF and ED are always lead bytes.
_C0_UNDECODABLE = _byte_set((0, 8), (0x0E, 0x1F), (0x7F, 0x7F))
_C0_BAD = _byte_set((0, 8), (0x0B, 0x0C), (0x0E, 0x1F))
_ALL_BYTES = bytes(range(256))


def _others(kept: bytes) -> bytes:
    """The bytes ``bytes.translate`` deletes to keep only ``kept``."""
    return bytes(b for b in _ALL_BYTES if b not in kept)


_NOT_C0 = _others(_C0_UNDECODABLE + _C0_BAD)
_NOT_C0_UNDECODABLE = _others(_C0_UNDECODABLE)
_NOT_C0_BAD = _others(_C0_BAD)
_CLAUSE = char_table(".!?。！？؟।,，、;；:：")
_SENTENCE = char_table(".!?。！？؟।")
_COMMA = char_table(",，、،")
_DIGIT = char_table("0123456789")
_SEPARATOR = char_table("|»«·•›‹/©®")
_CLASS_TABLES = (_CLAUSE, _SENTENCE, _COMMA, _DIGIT, _SEPARATOR)
_CLASS_BITS = np.zeros(0x10000, dtype=np.uint8)  # bit k: the character is in _CLASS_TABLES[k]
for _k, _t in enumerate(_CLASS_TABLES):
    _CLASS_BITS[_t] |= 1 << _k


UNDECODABLE_SHARE = 0.05  # above this share of undecodable characters a page is refused (random bytes give more)


class SourceError(ValueError):
    """A page the source-only extractor cannot read (empty, not HTML, over the size limit)."""


@dataclass
class SourceTree:
    """Pre-order elements (kept ones: not under a SKIP element) and the blocks of their text."""

    parent: np.ndarray  # (n,) -1 for the root
    end: np.ndarray  # (n,) subtree of i is [i, end[i])
    depth: np.ndarray
    tags: list[str]
    child_k: np.ndarray  # 1-based position among the parent's element children (skipped ones counted)
    inherited: np.ndarray  # (n,) bit set over ANCESTOR_TAGS + hidden + link: on the element or an ancestor
    inherited_cues: np.ndarray  # (n,) bit set over _CUES: on the element or an ancestor
    own_cues: np.ndarray  # (n,) bit set over _CUES: on the element itself
    signature: np.ndarray  # (n,) siblings with the same tag and class (the element included)
    block_el: np.ndarray  # (b,) container element of each block
    block_text: list[str]  # (b,) whitespace-collapsed text
    block_link_chars: np.ndarray  # (b,) characters inside <a href>
    title: str
    cx: list[str | None]  # (n,) the data-cx attribute (a snapshot's node id) when the source has one


def _split_alternatives(pattern: str) -> tuple[tuple[str, ...], list[str]]:
    """A cue regex as its top-level alternatives that are plain words (searched with ``str.find``) and the others:
    the regex matches a text exactly when one of the words is in it or one of the others matches."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 1
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    words = tuple(p for p in parts if _PLAIN.fullmatch(p))
    return words, [p for p in parts if p not in words]


_PLAIN = re.compile(r"[a-z0-9-]+")


def _anchors(alternative: str) -> tuple[str, ...] | None:
    """Plain strings one of which starts every match of the regex ``alternative`` (after a leading ``\\b``), or None:
    its leading run of plain characters (without the last when a quantifier follows it), or the words of a leading
    non-capturing group of plain words that no quantifier follows."""
    body = alternative.removeprefix("\\b")
    run = _PLAIN.match(body)
    if run:
        plain = run.group()[:-1] if body[run.end():run.end() + 1] in ("?", "*", "+", "{") else run.group()
        return (plain,) if plain else None
    close = body.find(")")
    if body.startswith("(?:") and close > 0 and body[close + 1:close + 2] not in ("?", "*", "+", "{"):
        words = body[3:close].split("|")
        if all(_PLAIN.fullmatch(w) for w in words):
            return tuple(words)
    return None


def _cue_parts(pattern: str) -> tuple[tuple[str, ...], list[tuple[re.Pattern[str], tuple[str, ...]]],
                                      re.Pattern[str] | None]:
    """A cue regex as (plain words, other alternatives with their anchors, a regex of the alternatives that have
    none or None): a match of an anchored alternative starts at an occurrence of one of its anchors, so it is looked
    for there alone (``Pattern.match`` at a position reads the characters before it for ``\\b``)."""
    words, others = _split_alternatives(pattern)
    anchored = [(re.compile(p), a) for p in others if (a := _anchors(p)) is not None]
    rest = [p for p in others if _anchors(p) is None]
    return words, anchored, (re.compile("|".join(rest)) if rest else None)


_CUE_PARTS = [_cue_parts(p.pattern) for p in _CUES.values()]
# The same, all groups together: each plain word with the bits of the groups holding it (found once for all), each
# anchored or other alternative with its group's bit.
_CUE_WORD_BITS: dict[str, int] = {}
for _k, (_words, _anchored, _rest) in enumerate(_CUE_PARTS):
    for _w in _words:
        _CUE_WORD_BITS[_w] = _CUE_WORD_BITS.get(_w, 0) | 1 << _k
_CUE_ANCHORED = [(regex, anchors, 1 << k) for k, (_, anchored, _) in enumerate(_CUE_PARTS)
                 for regex, anchors in anchored]
_CUE_REST = [(rest, 1 << k) for k, (_, _, rest) in enumerate(_CUE_PARTS) if rest is not None]

# Cue bits of the class/id texts seen in this process, and of their words: sites share their templates' classes and
# the web its frameworks' ("entry-content", "nav-menu"), so in a crawl most texts are matched once, and a text met for
# the first time is mostly made of words met before. Bounded: each emptied when full.
_CUE_CACHE: dict[str, int] = {}
_CUE_WORD_CACHE: dict[str, int] = {}
_CUE_CACHE_MAX = 200_000


def _match_cues(texts: list[str]) -> list[int]:
    """Per text, bit k set when it matches cue group k of ``_CUES``, found in the texts joined by newlines (no cue
    pattern matches a newline or reads past a word boundary, so a match in the join is a match in one text): each
    plain word once for all groups (``str.find`` runs in C at memory speed, where the regex engine tries every branch
    everywhere), each anchored alternative where its anchors occur, the other alternatives by their regex; the matches
    are then placed in their texts all at once."""
    if not texts:
        return []
    joined = "\n".join(texts)
    where: list[int] = []
    what: list[int] = []
    for word, bit in _CUE_WORD_BITS.items():
        at = joined.find(word)
        while at >= 0:
            where.append(at)
            what.append(bit)
            at = joined.find(word, at + 1)
    for regex, anchors, bit in _CUE_ANCHORED:
        for anchor in anchors:
            at = joined.find(anchor)
            while at >= 0:
                if regex.match(joined, at):
                    where.append(at)
                    what.append(bit)
                at = joined.find(anchor, at + 1)
    for rest, bit in _CUE_REST:
        for m in rest.finditer(joined):
            where.append(m.start())
            what.append(bit)
    bits = np.zeros(len(texts), dtype=np.int64)
    if where:
        starts = np.cumsum([0] + [len(a) + 1 for a in texts[:-1]])
        np.bitwise_or.at(bits, np.searchsorted(starts, where, side="right") - 1, np.asarray(what, dtype=np.int64))
    return bits.tolist()


def _cue_bits(attrs: list[str]) -> np.ndarray:
    """Per class/id text, bit k set when it matches cue group k of ``_CUES``. A text not in the cache gets the OR of
    its whitespace-separated words' bits (no cue pattern matches whitespace, and a word boundary reads whitespace as
    it reads a text's end, so a text matches a group exactly when one of its words does); the words not in their
    cache are matched together (:func:`_match_cues`). The page's bits are read into a dict of its own first, so
    another thread emptying a cache (``centrum.api`` extracts in threads) cannot take them away midway."""
    cache, word_bits = _CUE_CACHE, _CUE_WORD_CACHE
    if len(cache) + len(attrs) > _CUE_CACHE_MAX:
        cache.clear()
    if len(word_bits) > _CUE_CACHE_MAX:
        word_bits.clear()
    found = {a: cache.get(a) for a in set(attrs)}
    new = {a: a.split() for a, b in found.items() if b is None}
    if new:
        needed = {w for split in new.values() for w in split}
        words = {w: b for w in needed if (b := word_bits.get(w)) is not None}
        fresh = sorted(needed - words.keys())
        matched = dict(zip(fresh, _match_cues(fresh), strict=True))
        words.update(matched)
        word_bits.update(matched)
        for a, split in new.items():
            b = 0
            for w in split:
                b |= words[w]
            found[a] = b
            cache[a] = b
    return np.fromiter(map(found.__getitem__, attrs), dtype=np.int64, count=len(attrs))


_HIDDEN_BIT = 1 << len(ANCESTOR_TAGS)
_LINK_BIT = 1 << (len(ANCESTOR_TAGS) + 1)
_TAG_BITS = {t: 1 << k for k, t in enumerate(ANCESTOR_TAGS)}
_NOT_ELEMENT = "-"  # lexbor's names of text nodes, comments, doctypes... start with "-" (some kinds have no name: None)
# lexbor's tag ids: text nodes have LXB_TAG__TEXT; each id from LXB_TAG_A to LXB_TAG__LAST_ENTRY names one standard
# tag (an HTML parser never gives an element a prefix, and SKIP subtrees, where foreign elements live, are never
# entered); other ids (custom elements) are the document's own, so their names are read each time.
_TEXT_ID = 2
_STANDARD_IDS = range(6, 0xC4)
# The walk's view of a tag, by tag id: (lower-cased name, in SKIP, in BLOCK, ANCESTOR_TAGS bit); None for a node that
# is no element (document, comment, doctype). Standard ids are added as they are met.
_TAG_INFO: dict[int, tuple[str, bool, bool, int] | None] = {3: None, 4: None, 5: None}


def _tag_info(node: Any, tid: int) -> tuple[str, bool, bool, int] | None:
    """:data:`_TAG_INFO`'s entry for ``node`` (of tag id ``tid``), read from its name."""
    tag = node.tag
    if not tag or tag[0] == _NOT_ELEMENT:
        return None
    name = tag.lower()
    info = (name, name in SKIP, name in BLOCK, _TAG_BITS.get(name, 0))
    if tid in _STANDARD_IDS:
        _TAG_INFO[tid] = info
    return info


def _attributes(a: dict[str, str | None], tag: str) -> tuple[str, str, str | None, int]:
    """An element's attributes ``a`` (not empty) as the walk reads them: class, lower-cased "class id" text (the cue
    text), data-cx, and its hidden / link bits."""
    if len(a) == 1:  # a class alone (the most common case): nothing else to read
        cls = a.get("class")
        if cls is not None:
            return cls, cls.lower().strip(), None, 0
    get = a.get
    cls, ident, style = get("class") or "", get("id"), get("style")
    bits = 0
    if "hidden" in a or get("aria-hidden") == "true" or (style and _HIDDEN_STYLE.search(style)):
        bits = _HIDDEN_BIT
    if tag == "a" and "href" in a:
        bits |= _LINK_BIT
    return cls, (f"{cls} {ident}".lower().strip() if ident else cls.lower().strip()), get("data-cx"), bits


class _Walk:
    """Columns of the one pass over the tree, one entry per element in pre-order: parent, tag, child_k, lower-cased
    class and id, tag bits inherited (ANCESTOR_TAGS, hidden, link), container (the nearest block-level element, itself
    included), class and data-cx; ``end`` is set when its subtree closes. Lists per column, not a tuple per element to
    transpose afterwards; the depth follows from ``end``. Cues are matched after the walk, once per distinct
    class/id."""

    def __init__(self, root: Any) -> None:
        tag = root.tag  # the document element: no element above it
        a = root.attributes
        cls, attr, cx, bits = _attributes(a, tag) if a else ("", "", None, 0)
        self.parent: list[int] = [-1]
        self.tag: list[str] = [tag]
        self.child_k: list[int] = [1]
        self.attr: list[str] = [attr]
        self.bits: list[int] = [bits | _TAG_BITS.get(tag, 0)]
        self.cont: list[int] = [0]
        self.cls: list[str] = [cls]
        self.cx: list[str | None] = [cx]
        self.end: list[int] = [1]
        self.pieces: list[str] = []  # text in document order
        self.noscript: list[Any] = []  # the <noscript> elements passed over
        self.piece_at: list[int] = []  # (container << 1) | in link, per piece


def _walk(root: Any, enter_noscript: bool = False) -> _Walk:
    """One pre-order pass over lexbor's nodes (first child / next sibling), skipping SKIP subtrees (but <noscript>
    with ``enter_noscript``: lexbor parses its content as a browser without scripts does). Text on either
    side of a comment is one text, as in the page with its comments removed (``<b>3</b> comment<!-- -->s``). The
    per-element steps are inlined, with the columns' appends bound once (a method call and nine attribute lookups
    per element cost more than the steps); ``tests/unit/test_source.py`` checks it against a plain recursive walk."""
    w = _Walk(root)
    parent, tags, child_k, attrs, bits_of, cont_of, classes, cxs, end = (
        w.parent.append, w.tag.append, w.child_k.append, w.attr.append, w.bits.append, w.cont.append,
        w.cls.append, w.cx.append, w.end.append)
    bits, cont, ends, pieces, piece_at = w.bits, w.cont, w.end, w.pieces, w.piece_at
    infos, n = _TAG_INFO, 1
    # Open elements: [index, text owner code, the node to continue from, element children so far].
    stack: list[list[Any]] = [[0, (bits[0] & _LINK_BIT) // _LINK_BIT, root, 0]]
    node = root.first_child
    glue = False  # the last piece is the text just before this node (only comments between)
    while stack:
        if node is None:
            top = stack.pop()
            ends[top[0]] = n
            node, glue = top[2].next, False
            continue
        tid = node.tag_id
        if tid == _TEXT_ID:
            text = node.text_content
            if glue:
                pieces[-1] += text
            elif text and not text.isspace():
                pieces.append(text)
                piece_at.append(stack[-1][1])
                glue = True
            node = node.next
            continue
        info = infos.get(tid, False)
        if info is False:
            info = _tag_info(node, tid)
        if info is None:
            node = node.next
            continue
        glue = False
        top = stack[-1]
        top[3] += 1
        tag, skip, block, tag_bits = info
        if skip and not (enter_noscript and tag == "noscript"):
            if tag == "noscript":
                w.noscript.append(node)
            node = node.next
            continue
        p = top[0]
        a = node.attributes
        cls, attr, cx, b = _attributes(a, tag) if a else ("", "", None, 0)
        b |= tag_bits | bits[p]
        c = n if block else cont[p]
        parent(p)
        tags(tag)
        child_k(top[3])
        attrs(attr)
        bits_of(b)
        cont_of(c)
        classes(cls)
        cxs(cx)
        n += 1
        end(n)
        stack.append([n - 1, (c << 1) | (1 if b & _LINK_BIT else 0), node, 0])
        node = node.first_child
    return w


def _prepare(html: str, max_chars: int) -> bytes:
    """The page checked (size, emptiness, decodable text) as the UTF-8 bytes lexbor parses (what selectolax makes of
    a str), with characters no HTML text holds replaced."""
    from ..core.html import BAD_CHARS

    if len(html) > max_chars:
        raise SourceError(f"the page has {len(html)} characters, over the limit of {max_chars}")
    if not html or html.isspace():  # (strip() would copy the page)
        raise SourceError("the page is empty")
    # Bytes that are not text (an image saved as .html, a page in an encoding nothing declared) decode to
    # replacement and control characters, which HTML text never holds; a page made mostly of them has no text.
    # Counted in the UTF-8 bytes (see _C0_UNDECODABLE): bytes.translate runs at memory speed, and the lead bytes of
    # multi-byte marks are found with one numpy comparison each (a page is often hundreds of KB).
    data = html.encode("utf-8", "surrogatepass")
    c0 = data.translate(None, _NOT_C0)
    bad = len(c0.translate(None, _NOT_C0_UNDECODABLE))
    odd = bool(c0.translate(None, _NOT_C0_BAD))
    if len(data) != len(html):  # not ASCII: multi-byte marks, by their lead bytes (one comparison pass each)
        code = np.frombuffer(data, dtype=np.uint8)
        c2, ed = np.flatnonzero(code[:-1] == 0xC2), np.flatnonzero(code[:-1] == 0xED)
        ef = np.flatnonzero(code[:-2] == 0xEF)
        ef = ef[code[ef + 1] == 0xBF]
        bad += int(np.count_nonzero(code[c2 + 1] < 0xA0)) + int(np.count_nonzero(code[ef + 2] == 0xBD))
        odd = odd or bool((code[ef + 2] >= 0xBE).any()) or bool((code[ed + 1] >= 0xA0).any())
    if bad > UNDECODABLE_SHARE * len(html):
        raise SourceError(f"the page is not text in a known encoding: {100 * bad / len(html):.0f} % of its characters "
                          "could not be decoded")
    return BAD_CHARS.sub("\ufffd", html).encode("utf-8") if odd else data


def parse(html: str, max_chars: int) -> SourceTree:
    """The page's elements and blocks; :class:`SourceError` for an empty, oversized or unparsable page.

    Parsed by lexbor (selectolax), a browser-grade HTML5 parser: the tree is the one a browser builds (the same
    element paths as the collector's), and it parses several times faster than libxml2."""
    from selectolax.lexbor import LexborHTMLParser

    data = _prepare(html, max_chars)
    try:
        doc = LexborHTMLParser(data)
    except (ValueError, RuntimeError) as e:
        raise SourceError(f"the page cannot be parsed: {e}") from None
    root = doc.root
    if root is None:
        raise SourceError("the page cannot be parsed: no root element")
    title_el = doc.css_first("title")
    title = " ".join(title_el.text(deep=True).split()) if title_el is not None else ""
    walk = _walk(root)
    return _arrays(_without_scripts(root, walk) if walk.noscript else walk, title)


def _non_blank(pieces: list[str]) -> int:
    return len("".join("".join(pieces).split()))


def _without_scripts(root: Any, walk: _Walk) -> _Walk:
    """The walk again with <noscript> entered when the page shows almost no text without it (the renderer's rule,
    ``core.html.shown_only_without_scripts``). The <noscript> elements' whole text (styles and blanks included) bounds
    what they hold, so the second walk is made only when the rule could hold."""
    bound = sum(len(n.text(deep=True)) for n in walk.noscript)
    if not shown_only_without_scripts(0, bound):  # (most pages' <noscript> is a tracking pixel: no text to count)
        return walk
    shown = _non_blank(walk.pieces)
    if not shown_only_without_scripts(shown, bound):
        return walk
    entered = _walk(root, enter_noscript=True)
    return entered if shown_only_without_scripts(shown, _non_blank(entered.pieces) - shown) else walk


def _arrays(w: _Walk, title: str) -> SourceTree:
    n = len(w.parent)
    parent, tags, attrs = w.parent, w.tag, w.attr
    at = np.asarray(w.piece_at, dtype=np.int64)
    conts = at >> 1
    end = np.asarray(w.end, dtype=np.int64)
    parent_a = np.asarray(parent, dtype=np.int64)
    # Depth: the subtree ranges holding an element but its own, i.e. the elements before it whose range has not ended.
    depth = np.arange(n) - np.cumsum(np.bincount(end, minlength=n + 1))[:n]
    # Cues are read on the blocks' containers and inherited from their ancestors: the other elements' class and id
    # are never read (matching them was most of a large page's walk), so they are not matched.
    read = np.flatnonzero(_range_totals(end, np.bincount(conts, minlength=n) > 0) > 0)
    cue = np.zeros(n, dtype=np.int64)
    cue[read] = _cue_bits([attrs[i] for i in read.tolist()])
    inh_c = _inherited(cue, parent_a, depth)
    # Siblings sharing tag and class: repeated items (lists of teasers, comments) rather than one article.
    codes: dict[tuple[int, str, str], int] = {}
    sig_code = np.fromiter((codes.setdefault(s, len(codes)) for s in zip(parent, tags, w.cls, strict=True)),
                           dtype=np.int64, count=n)
    signature = np.bincount(sig_code, minlength=len(codes))[sig_code] if n else np.zeros(0, dtype=np.int64)
    # Blocks: consecutive pieces with the same container; each piece whitespace-collapsed (str.split's whitespace is
    # the regex \\s's, and it runs in C where a regex substitution costs a fraction of a microsecond a character).
    new = np.ones(conts.size, dtype=bool)
    new[1:] = conts[1:] != conts[:-1]
    block_of = np.cumsum(new) - 1
    nb = int(new.sum())
    pieces = w.pieces
    # A block's text: its pieces' words, one space apart (joined with a space first, so no words run together).
    bounds = [*np.flatnonzero(new).tolist(), len(pieces)]
    texts = [" ".join(" ".join(pieces[a:b]).split()) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    link = np.flatnonzero(at & 1)
    lengths = np.fromiter((len(" ".join(pieces[i].split())) for i in link.tolist()), dtype=np.float64,
                          count=link.size)
    link_chars = np.bincount(block_of[link], weights=lengths, minlength=nb).astype(np.float64)
    return SourceTree(parent_a, end, depth.astype(np.int64), tags,
                      np.asarray(w.child_k, dtype=np.int64), np.asarray(w.bits, dtype=np.int64), inh_c, cue, signature,
                      conts[new], texts, link_chars, title, w.cx)


def _class_counts(texts: list[str]) -> list[np.ndarray]:
    """Per class of :data:`_CLASS_TABLES`, per text: its characters in the class. One encode of the joined texts and
    one lookup of each character's class bits; the few characters in any class (marks, digits) are then placed in
    their texts once and counted per class."""
    m = len(texts)
    if not m:
        return [np.zeros(0) for _ in _CLASS_TABLES]
    code = np.minimum(np.frombuffer("\x00".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32), 0xFFFF)
    bits = _CLASS_BITS[code]
    at = np.flatnonzero(bits)
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=m) + 1)[:-1]
    text, which = np.searchsorted(ends, at, side="right"), bits[at]
    return [np.bincount(text[(which & (1 << k)) != 0], minlength=m).astype(np.float64)
            for k in range(len(_CLASS_TABLES))]


def _range_totals(end: np.ndarray, per_element: np.ndarray) -> np.ndarray:
    """Sum of a per-element value over each element's subtree (pre-order ranges [i, end[i]), one prefix sum)."""
    c = np.zeros(per_element.shape[0] + 1)
    np.cumsum(per_element, out=c[1:])
    return c[end] - c[:-1]


def subtree_sum(tree: SourceTree, per_element: np.ndarray) -> np.ndarray:
    return _range_totals(tree.end, per_element)


def _inherited(own: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Per element, the OR of the bit sets ``own`` of it and its ancestors, by pointer jumping: after round r each
    element holds the OR over itself and its ancestors less than 2**r levels up, and its 2**r-th ancestor is one
    lookup away (the root is its own), so log2(depth) rounds of vectorized lookups (n log n) cover every chain."""
    out = own.copy()
    if not own.any():
        return out
    up = np.where(parent >= 0, parent, np.arange(own.shape[0]))
    for _ in range(int(depth.max()).bit_length()):
        out |= out[up]
        up = up[up]
    return out


def _main_node(tree: SourceTree, sub: np.ndarray, share: float) -> int:
    """The deepest element holding at least ``share`` of the page's total of ``sub`` (per element, a subtree sum:
    paragraph text, kept words); such elements nest, so they are one chain. The root when the total is 0."""
    total = float(sub[0]) if sub.size else 0.0
    if total <= 0:
        return 0
    cand = np.nonzero(sub >= share * total)[0]
    return int(cand[np.argmax(tree.depth[cand])])


FEATURES_VERSION = "source-features-1"


def _neighbours(v: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The value of the block ``k`` before and after each block (-1 past the ends)."""
    prev = np.full(v.shape[0], -1.0)
    nxt = np.full(v.shape[0], -1.0)
    if v.shape[0] > k:
        prev[k:] = v[:-k]
        nxt[:-k] = v[k:]
    return prev, nxt


def _window_mean(v: np.ndarray, half: int, w: np.ndarray | None = None) -> np.ndarray:
    """Mean of ``v`` over the blocks within ``half`` positions (fewer at the ends), weighted by ``w`` if given."""
    w = np.ones(v.shape[0]) if w is None else w
    cv, cw = np.concatenate([[0.0], np.cumsum(v * w)]), np.concatenate([[0.0], np.cumsum(w)])
    i = np.arange(v.shape[0])
    lo, hi = np.maximum(i - half, 0), np.minimum(i + half + 1, v.shape[0])
    return (cv[hi] - cv[lo]) / np.maximum(cw[hi] - cw[lo], 1e-9)


def _title_overlap(texts: list[str], title: str, eligible: np.ndarray) -> np.ndarray:
    """Per text: the share of its distinct lower-cased tokens that are tokens of the title (0 for texts not
    ``eligible``): ``len(set(tokens(t)) & title) / len(set(tokens(t)))``, for all texts at once on token hashes."""
    out = np.zeros(len(texts))
    chosen = np.flatnonzero(eligible)
    if chosen.size == 0:
        return out
    # Lower-cased one by one (lower() may change lengths: the offsets are those of the lowered texts), the title
    # last: one hashing for all (tokens never span the "\x00"; a final sigma reads the same before it as at an end).
    lowered = [*(texts[b].lower() for b in chosen.tolist()), title.lower()]
    h, start = token_hashes("\x00".join(lowered))
    ends = np.cumsum(np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered)) + 1)
    block = np.searchsorted(ends, start, side="right")
    in_title = block == chosen.size
    title_h = np.unique(h[in_title])
    if title_h.size == 0:
        return out
    h, block = h[~in_title], block[~in_title]
    # Tokens come in text order: sorted by hash, stably, equal hashes stay in text order, so each distinct
    # (text, token) pair is a run, counted by its first entry.
    order = np.argsort(h, kind="stable")
    block, h = block[order], h[order]
    first = np.ones(h.size, dtype=bool)
    first[1:] = (block[1:] != block[:-1]) | (h[1:] != h[:-1])
    block, h = block[first], h[first]
    hit = title_h[np.minimum(np.searchsorted(title_h, h), title_h.size - 1)] == h
    distinct = np.bincount(block, minlength=chosen.size)
    hits = np.bincount(block, weights=hit, minlength=chosen.size)
    out[chosen] = hits / np.maximum(distinct, 1)
    return out


def _text_columns(tree: SourceTree) -> dict[str, np.ndarray]:
    """Columns read from each block's own text."""
    texts = tree.block_text
    chars = np.fromiter((len(t) for t in texts), dtype=np.float64, count=len(texts))
    words = count_words_many(texts).astype(np.float64)
    clause, sentence, comma, digit, sep = _class_counts(texts)
    link = np.minimum(tree.block_link_chars, chars) / np.maximum(chars, 1)
    para = ((words >= PARAGRAPH_WORDS) & (link < PARAGRAPH_LINK_DENSITY) & ((clause > 0) | (words >= LONG_WORDS)))
    overlap = _title_overlap(texts, tree.title, words <= 40)
    ends_mark = np.fromiter((t[-1:] in ".!?。！？؟।:" for t in texts), dtype=np.float64, count=len(texts))
    return {"log_chars": np.log1p(chars), "log_words": np.log1p(words), "chars_per_word": chars / np.maximum(words, 1),
            "link_density": link, "clauses_per_word": clause / np.maximum(words, 1),
            "sentences": np.log1p(sentence), "commas_per_word": comma / np.maximum(words, 1),
            "digit_share": digit / np.maximum(chars, 1), "separator_share": sep / np.maximum(chars, 1),
            "paragraph": para.astype(np.float64), "ends_sentence": ends_mark, "title_overlap": overlap,
            "_chars": chars}


def _context_columns(tree: SourceTree, t: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Columns read from the block's container, its ancestors and the page's paragraph text."""
    n, el = tree.parent.shape[0], tree.block_el
    chars = t["_chars"]
    own = np.bincount(el, weights=chars, minlength=n)
    own_link = np.bincount(el, weights=t["link_density"] * chars, minlength=n)
    own_para = np.bincount(el, weights=chars * t["paragraph"], minlength=n)
    sub_chars, sub_link, sub_para = subtree_sum(tree, own), subtree_sum(tree, own_link), subtree_sum(tree, own_para)
    sub_n = (tree.end - np.arange(n)).astype(np.float64)
    total, para_total = max(float(sub_chars[0]), 1.0), max(float(sub_para[0]), 1.0)
    levels = [el]  # the container, its parent, grandparent, great-grandparent: one row each, computed together
    for _ in range(3):
        up = tree.parent[levels[-1]]
        levels.append(np.where(up >= 0, up, levels[-1]))
    node = np.stack(levels)
    chars_at, para_at = sub_chars[node], sub_para[node]
    at_least_1 = np.maximum(chars_at, 1)
    per_level = {"log_chars": np.log1p(chars_at), "chars_share": chars_at / total, "para_share": para_at / para_total,
                 "link_density": sub_link[node] / at_least_1,
                 "chars_per_element": np.log1p(chars_at / sub_n[node]), "para_in_node": para_at / at_least_1}
    out = {f"up{level}_{name}": v[level] for level in range(4) for name, v in per_level.items()}
    for share in (0.5, 0.8, 0.3):
        m = _main_node(tree, sub_para, share)
        inside = (el >= m) & (el < tree.end[m])
        out[f"in_main{int(share * 100)}"] = inside.astype(np.float64)
        out[f"main{int(share * 100)}_chars_share"] = np.full(el.shape[0], sub_chars[m] / total)
        out[f"main{int(share * 100)}_depth_below"] = np.where(inside, tree.depth[el] - tree.depth[m], -1.0)
    out["depth"] = tree.depth[el].astype(np.float64)
    out["log_siblings_alike"] = np.log1p(tree.signature[el].astype(np.float64))
    out["page_log_chars"] = np.full(el.shape[0], np.log1p(total))
    out["page_para_share"] = np.full(el.shape[0], float(sub_para[0]) / total)
    out["page_log_blocks"] = np.full(el.shape[0], np.log1p(el.shape[0]))
    return out


def _bits(values: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """Columns ``names[k]``: bit k of ``values`` (one shift for all bits)."""
    m = ((values[:, None] >> np.arange(len(names))) & 1).astype(np.float64)
    return {name: m[:, k] for k, name in enumerate(names)}


def _markup_columns(tree: SourceTree) -> dict[str, np.ndarray]:
    el = tree.block_el
    out = _bits(tree.inherited[el], [f"in_{t}" for t in ANCESTOR_TAGS] + ["in_hidden"])
    out.update(_bits(tree.inherited_cues[el], [f"cue_in_{c}" for c in _CUES]))
    out.update(_bits(tree.own_cues[el], [f"cue_self_{c}" for c in _CUES]))
    code = _OWN_TAG_CODE.get
    tags = tree.tags
    own = np.fromiter((code(tags[e], -1) for e in el.tolist()), dtype=np.int64, count=el.size)
    is_tag = (own[:, None] == np.arange(len(OWN_TAGS))).astype(np.float64)  # small integers compared, not strings
    out.update({f"tag_{t}": is_tag[:, k] for k, t in enumerate(OWN_TAGS)})
    return out


def _position_columns(chars: np.ndarray, t: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    b = chars.shape[0]
    before = np.concatenate([[0.0], np.cumsum(chars)[:-1]]) if b else np.zeros(0)
    total = max(float(chars.sum()), 1.0)
    para = t["paragraph"]
    para_before = np.concatenate([[0.0], np.cumsum(para * chars)[:-1]]) if b else np.zeros(0)
    para_total = max(float((para * chars).sum()), 1.0)
    out = {"pos_chars": before / total, "pos_blocks": np.arange(b) / max(b, 1),
           "para_before": para_before / para_total,
           "para_after": (para_total - para_before - para * chars) / para_total}
    for half in (1, 3, 8):
        out[f"para_window{half}"] = _window_mean(para, half)
        out[f"link_window{half}"] = _window_mean(t["link_density"], half)
    for k in (1, 2):
        for name in ("log_chars", "link_density", "paragraph"):
            prev, nxt = _neighbours(t[name], k)
            out[f"prev{k}_{name}"], out[f"next{k}_{name}"] = prev, nxt
    return out


def block_features(tree: SourceTree) -> tuple[np.ndarray, list[str]]:
    """(blocks, features) matrix and the column names (a fixed order: the model file records it)."""
    t = _text_columns(tree)
    cols = {**t, **_context_columns(tree, t), **_markup_columns(tree), **_position_columns(t["_chars"], t)}
    cols.pop("_chars")
    names = list(cols)
    if not tree.block_el.size:
        return np.zeros((0, len(names))), names
    # One array of the columns, then one transposing copy (column_stack reshapes and copies column by column).
    return np.ascontiguousarray(np.array([cols[k] for k in names], dtype=np.float64).T), names


def feature_names() -> list[str]:
    return list(_feature_names())


@functools.cache
def _feature_names() -> tuple[str, ...]:
    tree = parse("<html><body><p>x</p></body></html>", 1000)
    return tuple(block_features(tree)[1])


# Second stage (stacking, Wolpert 1992): a block's first-stage score read next to those of its neighbours, the
# subtrees around it, its sibling run and its heading section. A comment list, a card grid or a related-links box
# is a neighbourhood that the first stage scores unevenly; seen whole it can be kept or dropped together.
CONTEXT_LEVELS = (1, 2, 3, 5, 8)  # ancestors above the block's container whose subtrees are summarized
CONTEXT_KEEP = 0.5  # a first-stage score counted as "kept" in the shares below
CONTEXT_MAIN = (0.8, 0.5)  # shares of the kept words whose deepest holder is read as the main container
_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]


@dataclass(frozen=True)
class _Subtrees:
    """Per element, totals over the blocks of its subtree (prefix sums over the pre-order ranges): score x weight,
    weight (at least 1e-9), kept weight, blocks."""

    score: np.ndarray
    weight: np.ndarray
    kept: np.ndarray
    blocks: np.ndarray

    @classmethod
    def of(cls, tree: SourceTree, s: np.ndarray, w: np.ndarray, kept: np.ndarray) -> _Subtrees:
        n, el = tree.parent.shape[0], tree.block_el
        return cls(subtree_sum(tree, np.bincount(el, weights=s * w, minlength=n)),
                   np.maximum(subtree_sum(tree, np.bincount(el, weights=w, minlength=n)), 1e-9),
                   subtree_sum(tree, np.bincount(el, weights=kept * w, minlength=n)),
                   subtree_sum(tree, np.bincount(el, minlength=n).astype(np.float64)))


def _ancestor_columns(tree: SourceTree, sub: _Subtrees) -> dict[str, np.ndarray]:
    """Per level above the container: the word-weighted mean score and kept share of the blocks in that ancestor's
    subtree, and how many blocks it holds."""
    el, sub_sw, sub_w, sub_kw, sub_n = tree.block_el, sub.score, sub.weight, sub.kept, sub.blocks
    out: dict[str, np.ndarray] = {}
    node, level = el, 0
    for target in CONTEXT_LEVELS:
        while level < target:
            up = tree.parent[node]
            node, level = np.where(up >= 0, up, node), level + 1
        out[f"ctx_up{target}_score"] = sub_sw[node] / sub_w[node]
        out[f"ctx_up{target}_kept"] = sub_kw[node] / sub_w[node]
        out[f"ctx_up{target}_log_blocks"] = np.log1p(sub_n[node])
    return out


def _group_mean(group: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per block, the word-weighted mean of ``v`` over the blocks of its group (``group``: small non-negative ids)."""
    return (np.bincount(group, weights=v * w) / np.maximum(np.bincount(group, weights=w), 1e-9))[group]


def _run_columns(tree: SourceTree, s: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """The block's sibling run (containers with one parent and tag: list items, posts, cards) and its heading
    section (the blocks from a heading to the next)."""
    b, el = s.shape[0], tree.block_el
    # Tags as small integers through a dict: a numpy string array would be as wide as the longest tag name.
    codes: dict[str, int] = {}
    tags = itemgetter(*el.tolist())(tree.tags) if b > 1 else (tree.tags[el[0]],)
    tag = np.fromiter((codes.setdefault(t, len(codes)) for t in tags), dtype=np.int64, count=b)
    _, run, size = np.unique(tree.parent[el] * len(codes) + tag, return_inverse=True, return_counts=True)
    head = np.isin(tag, [codes[h] for h in _HEADINGS if h in codes])
    section = np.cumsum(head)
    idx = np.arange(b)
    last_head = np.maximum.accumulate(np.where(head, idx, -1))
    next_head = np.minimum.accumulate(np.where(head, idx, b)[::-1])[::-1]
    next_head = np.concatenate([next_head[1:], [b]])
    return {"ctx_run_score": _group_mean(run, s, w), "ctx_run_log_size": np.log1p(size[run]).astype(np.float64),
            "ctx_section_score": _group_mean(section, s, w), "ctx_is_heading": head.astype(np.float64),
            "ctx_section_heading_score": np.where(last_head >= 0, s[np.maximum(last_head, 0)], -1.0),
            "ctx_next_heading_score": np.where(next_head < b, s[np.minimum(next_head, b - 1)], -1.0)}


def _main_columns(tree: SourceTree, s: np.ndarray, w: np.ndarray, sub: _Subtrees) -> dict[str, np.ndarray]:
    """Per share of ``CONTEXT_MAIN``, the page's main container as the first stage sees it (the deepest element
    holding that share of the kept words, ``_main_node``): whether the block is inside it, how far below it, and
    how it reads (kept share, score, blocks, share of the page's words). The "top candidate" of Readability-style
    extractors, read from the scores."""
    b, el, sub_sw, sub_w, sub_kw, sub_n = s.shape[0], tree.block_el, sub.score, sub.weight, sub.kept, sub.blocks
    total = max(float(w.sum()), 1e-9)
    out: dict[str, np.ndarray] = {}
    for share in CONTEXT_MAIN:
        m, name = _main_node(tree, sub_kw, share), f"ctx_main{round(share * 100)}"
        m_w = float(sub_w[m])
        out |= {f"{name}_inside": ((el >= m) & (el < tree.end[m])).astype(np.float64),
                f"{name}_depth": (tree.depth[el] - tree.depth[m]).astype(np.float64),
                f"{name}_kept": np.full(b, sub_kw[m] / m_w), f"{name}_log_blocks": np.full(b, np.log1p(sub_n[m])),
                f"{name}_score": np.full(b, sub_sw[m] / m_w), f"{name}_words_share": np.full(b, m_w / total)}
    fifth = b - min(5, b)
    out["ctx_score_of_max"] = s / max(float(s.max()), 1e-9)
    out["ctx_score_over_fifth"] = s - float(np.partition(s, fifth)[fifth])
    return out


def _page_columns(s: np.ndarray, w: np.ndarray, kept: np.ndarray) -> dict[str, np.ndarray]:
    """The page's score profile and where the block stands in it (the span from the first to the last kept
    block, the kept words before and after it)."""
    b, idx = s.shape[0], np.arange(s.shape[0])
    total = max(float(w.sum()), 1e-9)
    kept_w = np.concatenate([[0.0], np.cumsum(kept * w)])
    out = {"ctx_page_max": np.full(b, float(s.max())), "ctx_page_score": np.full(b, float((s * w).sum()) / total),
           "ctx_page_kept": np.full(b, kept_w[-1] / total)}
    at = np.flatnonzero(kept)
    if at.size:
        pos = np.searchsorted(at, idx)
        gap = np.minimum(np.abs(idx - at[np.minimum(pos, at.size - 1)]), np.abs(idx - at[np.maximum(pos - 1, 0)]))
        out |= {"ctx_in_span": ((idx >= at[0]) & (idx <= at[-1])).astype(np.float64),
                "ctx_log_gap": np.log1p(gap).astype(np.float64),
                "ctx_kept_before": kept_w[idx] / total, "ctx_kept_after": (kept_w[-1] - kept_w[idx + 1]) / total}
    else:
        out |= {k: np.full(b, -1.0) for k in ("ctx_in_span", "ctx_log_gap", "ctx_kept_before", "ctx_kept_after")}
    rank = np.empty(b)
    rank[np.argsort(-s, kind="stable")] = idx
    out["ctx_log_rank"] = np.log1p(rank)
    return out


def _score_context(tree: SourceTree, X: np.ndarray, s: np.ndarray) -> dict[str, np.ndarray]:
    w = np.sqrt(np.expm1(X[:, _log_words_column()]) + 1.0)  # blocks weigh as in training: by the root of their words
    kept = (s >= CONTEXT_KEEP).astype(np.float64)
    cols: dict[str, np.ndarray] = {"ctx_score": s}
    for k in (1, 2, 3):
        cols[f"ctx_prev{k}_score"], cols[f"ctx_next{k}_score"] = _neighbours(s, k)
    for half in (3, 10):
        cols[f"ctx_window{half}_score"] = _window_mean(s, half, w)
    sub = _Subtrees.of(tree, s, w, kept)
    return (cols | _ancestor_columns(tree, sub) | _run_columns(tree, s, w) | _page_columns(s, w, kept)
            | _main_columns(tree, s, w, sub))


def context_features(tree: SourceTree, X: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The second stage's rows: the block's own columns ``X`` (``block_features``) and the context of the first
    stage's ``scores``, in the order of ``context_feature_names``."""
    s = np.asarray(scores, dtype=np.float64)
    if not s.shape[0]:
        return np.zeros((0, len(context_feature_names())))
    cols = _score_context(tree, X, s)
    ctx = np.array([cols[k] for k in _context_only_names()], dtype=np.float64).T
    return np.ascontiguousarray(np.hstack([X, ctx]))


@functools.cache
def _log_words_column() -> int:
    return feature_names().index("log_words")


@functools.cache
def _context_only_names() -> tuple[str, ...]:
    tree = parse("<html><body><h1>t</h1><p>x</p></body></html>", 1000)
    X, _ = block_features(tree)
    return tuple(_score_context(tree, X, np.full(X.shape[0], 0.5)))


def context_feature_names() -> list[str]:
    return [*feature_names(), *_context_only_names()]
