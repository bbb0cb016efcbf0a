"""Source-only page arrays and block features: the page's HTML parsed with lxml, without a browser or geometry.

:func:`parse` walks the tree once (``etree.iterwalk``) into pre-order element arrays (parent, tag, subtree end,
class/id cues and tags inherited from the ancestors) and *blocks*: runs of text with the same block-level container,
the lines a reader would see. :func:`block_features` turns them into one feature row per block, every column computed
for all blocks at once with numpy (prefix sums over the pre-order subtree ranges, one table lookup per character
class over the joined block texts), so a page costs one Python pass over its elements plus vectorized work.
Features are script-fair (``centrum.core.textmetrics`` words, sentence and clause marks of many scripts) and markup
words
are the ensemble's cue groups (``ensemble.features``), so the two extractors read class and id alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core.textmetrics import count_words_many, tokens
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
ANCESTOR_TAGS = ("article", "main", "nav", "footer", "header", "aside", "form", "li", "table", "blockquote",
                 "figure", "a", "h1", "h2", "h3", "ul", "ol", "section", "p")
_CUES = {"positive": POSITIVE, "negative": NEGATIVE, **CUE_GROUPS}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden")
_WS = re.compile(r"\s+")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*>")
_UNDECODABLE = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ufffd]")
_CLAUSE = char_table(".!?。！？؟।,，、;；:：")
_SENTENCE = char_table(".!?。！？؟।")
_COMMA = char_table(",，、،")
_DIGIT = char_table("0123456789")
_SEPARATOR = char_table("|»«·•›‹/©®")


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
    inherited: dict[str, np.ndarray]  # name -> (n,) bool: the element or an ancestor has the tag / cue
    own_cue: dict[str, np.ndarray]  # cue -> (n,) bool: on the element itself
    signature: np.ndarray  # (n,) siblings with the same tag and class (the element included)
    block_el: np.ndarray  # (b,) container element of each block
    block_text: list[str]  # (b,) whitespace-collapsed text
    block_link_chars: np.ndarray  # (b,) characters inside <a href>
    title: str
    cx: list[str | None]  # (n,) the data-cx attribute (a snapshot's node id) when the source has one


def _cue_flags(attr: str, cache: dict[str, tuple[bool, ...]]) -> tuple[bool, ...]:
    hit = cache.get(attr)
    if hit is None:
        hit = tuple(bool(p.search(attr)) for p in _CUES.values()) if attr else (False,) * len(_CUES)
        cache[attr] = hit
    return hit


class _Walk:
    """State of the one pass over the tree (kept apart so each step stays short)."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.end: list[int] = []
        self.depth: list[int] = []
        self.tags: list[str] = []
        self.child_k: list[int] = []
        self.cues: list[tuple[bool, ...]] = []
        self.inh_tags: list[int] = []  # bit set over ANCESTOR_TAGS + hidden + link
        self.inh_cues: list[int] = []  # bit set over _CUES
        self.container: list[int] = []
        self.sig: list[tuple[int, str, str]] = []
        self.cx: list[str | None] = []  # data-cx of a collector serialization (node ids), None in plain HTML
        self.stack: list[tuple[object, int]] = []
        self.kids: list[int] = [0]  # element children seen so far, per open element (+1 for the document)
        self.pieces: list[tuple[int, str, bool]] = []  # (container, text, in link)
        self.cue_cache: dict[str, tuple[bool, ...]] = {}

    def text(self, owner: int, value: str | None) -> None:
        if value and not value.isspace():
            link = bool(self.inh_tags[owner] >> (len(ANCESTOR_TAGS) + 1) & 1)
            self.pieces.append((self.container[owner], value, link))

    def start(self, el: object, tag: str) -> None:
        i = len(self.parent)
        p = self.stack[-1][1] if self.stack else -1
        self.kids[-1] += 1
        get = el.get  # type: ignore[attr-defined]
        attr = f"{get('class') or ''} {get('id') or ''}".lower().strip()
        cues = _cue_flags(attr, self.cue_cache)
        bits = sum(1 << k for k, t in enumerate(ANCESTOR_TAGS) if t == tag)
        if get("hidden") is not None or get("aria-hidden") == "true" or _HIDDEN_STYLE.search(get("style") or ""):
            bits |= 1 << len(ANCESTOR_TAGS)
        if tag == "a" and get("href") is not None:
            bits |= 1 << (len(ANCESTOR_TAGS) + 1)
        cue_bits = sum(1 << k for k, c in enumerate(cues) if c)
        self.parent.append(p)
        self.end.append(i + 1)
        self.depth.append(len(self.stack))
        self.tags.append(tag)
        self.child_k.append(self.kids[-1])
        self.cues.append(cues)
        self.inh_tags.append(bits | (self.inh_tags[p] if p >= 0 else 0))
        self.inh_cues.append(cue_bits | (self.inh_cues[p] if p >= 0 else 0))
        self.container.append(i if tag in BLOCK or p < 0 else self.container[p])
        self.sig.append((p, tag, get("class") or ""))
        self.cx.append(get("data-cx"))
        self.stack.append((el, i))
        self.kids.append(0)
        self.text(i, el.text)  # type: ignore[attr-defined]

    def finish(self, el: object) -> None:
        if self.stack and self.stack[-1][0] is el:
            _, i = self.stack.pop()
            self.kids.pop()
            self.end[i] = len(self.parent)
        elif self.stack:
            self.kids[-1] += 1  # a skipped element still takes its place among the element children
        if self.stack:
            self.text(self.stack[-1][1], el.tail)  # type: ignore[attr-defined]


def parse(html: str, max_chars: int) -> SourceTree:
    """The page's elements and blocks; :class:`SourceError` for an empty, oversized or unparsable page."""
    from lxml import etree
    from lxml import html as lhtml

    from ..core.html import BAD_CHARS

    if len(html) > max_chars:
        raise SourceError(f"the page has {len(html)} characters, over the limit of {max_chars}")
    if not html.strip():
        raise SourceError("the page is empty")
    # Bytes that are not text (an image saved as .html, a page in an encoding nothing declared) decode to
    # replacement and control characters, which HTML text never holds; a page made mostly of them has no text.
    bad = len(_UNDECODABLE.findall(html))
    if bad > UNDECODABLE_SHARE * len(html):
        raise SourceError(f"the page is not text in a known encoding: {100 * bad / len(html):.0f} % of its characters "
                          "could not be decoded")
    parser = lhtml.HTMLParser(huge_tree=True, remove_comments=True, remove_pis=True)
    try:
        # lxml refuses a str that still declares its encoding (XHTML's <?xml ... encoding=...?>): it is decoded.
        root = lhtml.document_fromstring(_XML_DECL.sub("", BAD_CHARS.sub("\ufffd", html), count=1), parser=parser)
    except (etree.ParserError, ValueError) as e:
        raise SourceError(f"the page cannot be parsed: {e}") from None
    title_el = root.find(".//title")
    title = _WS.sub(" ", title_el.text_content()).strip() if title_el is not None else ""
    w = _Walk()
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, el in walker:
        tag = el.tag if isinstance(el.tag, str) else ""
        if event == "start":
            if not tag or tag.lower() in SKIP:
                walker.skip_subtree()
                continue
            w.start(el, tag.lower())
        else:
            w.finish(el)
    return _arrays(w, title)


def _arrays(w: _Walk, title: str) -> SourceTree:
    n = len(w.parent)
    inh_t = np.asarray(w.inh_tags, dtype=np.int64)
    inh_c = np.asarray(w.inh_cues, dtype=np.int64)
    inherited = {f"in_{t}": (inh_t >> k & 1).astype(bool) for k, t in enumerate(ANCESTOR_TAGS)}
    inherited["in_hidden"] = (inh_t >> len(ANCESTOR_TAGS) & 1).astype(bool)
    inherited.update({f"cue_in_{c}": (inh_c >> k & 1).astype(bool) for k, c in enumerate(_CUES)})
    cue_arr = np.asarray(w.cues, dtype=bool).reshape(n, len(_CUES))
    own_cue = {c: cue_arr[:, k] for k, c in enumerate(_CUES)}
    # Siblings sharing tag and class: repeated items (lists of teasers, comments) rather than one article.
    codes: dict[tuple[int, str, str], int] = {}
    sig_code = np.fromiter((codes.setdefault(s, len(codes)) for s in w.sig), dtype=np.int64, count=n)
    signature = np.bincount(sig_code, minlength=len(codes))[sig_code] if n else np.zeros(0, dtype=np.int64)
    # Blocks: consecutive pieces with the same container.
    conts = np.fromiter((p[0] for p in w.pieces), dtype=np.int64, count=len(w.pieces))
    new = np.ones(conts.size, dtype=bool)
    new[1:] = conts[1:] != conts[:-1]
    block_of = np.cumsum(new) - 1
    nb = int(new.sum())
    texts: list[list[str]] = [[] for _ in range(nb)]
    link_chars = np.zeros(nb)
    for b, (_, t, link) in zip(block_of.tolist(), w.pieces, strict=True):
        s = _WS.sub(" ", t).strip()
        if s:
            texts[b].append(s)
            if link:
                link_chars[b] += len(s)
    return SourceTree(np.asarray(w.parent, dtype=np.int64), np.asarray(w.end, dtype=np.int64),
                      np.asarray(w.depth, dtype=np.int64), w.tags, np.asarray(w.child_k, dtype=np.int64),
                      inherited, own_cue, signature, conts[new], [" ".join(x) for x in texts], link_chars, title,
                      w.cx)


def _class_counts(texts: list[str], tables: list[np.ndarray]) -> list[np.ndarray]:
    """Per table, per text: characters in the class (one encode of the joined texts, one lookup per class)."""
    if not texts:
        return [np.zeros(0) for _ in tables]
    joined = "\x00".join(texts)
    code = np.minimum(np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), 0xFFFF)
    ends = np.cumsum(np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts)))[:-1]
    return [np.bincount(np.searchsorted(ends, np.nonzero(t[code])[0], side="right"), minlength=len(texts))
            .astype(np.float64) for t in tables]


def subtree_sum(tree: SourceTree, per_element: np.ndarray) -> np.ndarray:
    """Sum of a per-element value over each element's subtree (pre-order ranges, one prefix sum)."""
    c = np.zeros(per_element.shape[0] + 1)
    np.cumsum(per_element, out=c[1:])
    return c[tree.end] - c[:-1]


def _main_node(tree: SourceTree, para_sub: np.ndarray, share: float) -> int:
    """The deepest element holding at least ``share`` of the page's paragraph text (they nest: one chain)."""
    total = float(para_sub[0]) if para_sub.size else 0.0
    if total <= 0:
        return 0
    cand = np.nonzero(para_sub >= share * total)[0]
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


def _window_mean(v: np.ndarray, half: int) -> np.ndarray:
    """Mean of ``v`` over the blocks within ``half`` positions (fewer at the ends)."""
    c = np.concatenate([[0.0], np.cumsum(v)])
    i = np.arange(v.shape[0])
    lo, hi = np.maximum(i - half, 0), np.minimum(i + half + 1, v.shape[0])
    return (c[hi] - c[lo]) / np.maximum(hi - lo, 1)


def _text_columns(tree: SourceTree) -> dict[str, np.ndarray]:
    """Columns read from each block's own text."""
    texts = tree.block_text
    chars = np.fromiter((len(t) for t in texts), dtype=np.float64, count=len(texts))
    words = count_words_many(texts).astype(np.float64)
    clause, sentence, comma, digit, sep = _class_counts(texts, [_CLAUSE, _SENTENCE, _COMMA, _DIGIT, _SEPARATOR])
    link = np.minimum(tree.block_link_chars, chars) / np.maximum(chars, 1)
    para = ((words >= PARAGRAPH_WORDS) & (link < PARAGRAPH_LINK_DENSITY) & ((clause > 0) | (words >= LONG_WORDS)))
    title = set(tokens(tree.title.lower()))
    overlap = np.zeros(len(texts))
    if title:
        for b in np.nonzero(words <= 40)[0].tolist():
            tk = set(tokens(texts[b].lower()))
            overlap[b] = len(tk & title) / max(len(tk), 1)
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
    out: dict[str, np.ndarray] = {}
    node = el
    for level in range(4):  # the container, its parent, grandparent, great-grandparent
        out[f"up{level}_log_chars"] = np.log1p(sub_chars[node])
        out[f"up{level}_chars_share"] = sub_chars[node] / total
        out[f"up{level}_para_share"] = sub_para[node] / para_total
        out[f"up{level}_link_density"] = sub_link[node] / np.maximum(sub_chars[node], 1)
        out[f"up{level}_chars_per_element"] = np.log1p(sub_chars[node] / sub_n[node])
        out[f"up{level}_para_in_node"] = sub_para[node] / np.maximum(sub_chars[node], 1)
        node = np.where(tree.parent[node] >= 0, tree.parent[node], node)
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


def _markup_columns(tree: SourceTree) -> dict[str, np.ndarray]:
    el = tree.block_el
    out = {name: flag[el].astype(np.float64) for name, flag in tree.inherited.items()}
    out.update({f"cue_self_{c}": flag[el].astype(np.float64) for c, flag in tree.own_cue.items()})
    tags = np.asarray(tree.tags, dtype=object)[el] if el.size else np.zeros(0, dtype=object)
    for t in OWN_TAGS:
        out[f"tag_{t}"] = (tags == t).astype(np.float64)
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
    X = np.column_stack([cols[k] for k in names]) if tree.block_el.size else np.zeros((0, len(names)))
    return X.astype(np.float64), names


def feature_names() -> list[str]:
    tree = parse("<html><body><p>x</p></body></html>", 1000)
    return block_features(tree)[1]
