"""Candidates and features of the ensemble (see :mod:`centrum.algorithms.ensemble`).

A *candidate* is a set of disjoint subtrees (usually one node; a run of siblings when an algorithm answered so).
Every per-element quantity is computed once per page as a vectorized subtree sum over the pre-order arrays, and a
candidate's value is the sum over its nodes (``np.add.reduceat`` over the flattened node lists), so the cost is
O(n + total candidate size) whatever the number of candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...core.metadata import declared_text, ld_json_texts
from ...core.result import Result
from ...core.snapshot import IMAGE, Snapshot
from ...core.textmetrics import tokens
from ...core.tree import cover_count, main_body
from ...core.tree import covered as _inside
from .. import BASE_ALGORITHMS
from .shapes import Shapes, shapes

# Algorithms whose proposals the ensemble reads, in a fixed order (feature names depend on it).
# Proposers of candidates: the base algorithms and Arc90 Readability's content scoring (computed here from the page
# arrays, see :func:`arc90_proposal`), each with the same answered/exact/precision/recall/rank features.
PROPOSERS: tuple[str, ...] = (*BASE_ALGORITHMS, "arc90")

# Class/id cues in the spirit of Readability's (Arc90) regular expressions: language-independent markup words.
# Matched on lower-cased values without re.I (3x faster in CPython's re on alternations).
POSITIVE = re.compile(r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|prose")
NEGATIVE = re.compile(r"comment|meta|foot|footer|footnote|masthead|promo|related|scroll|shoutbox|sidebar|sponsor|"
                      r"shopping|tags|tool|widget|nav|menu|share|social|banner|breadcrumb|pagination|cookie|"
                      r"subscribe|newsletter|popup|modal|advert|\bads?\b|ad-|teaser|recommend")
# Stronger subset used to trim inside the chosen node (a "meta" or "tool" class inside an article is often fine).
STRONG_NEGATIVE = re.compile(r"comment|share|social|related|breadcrumb|\bnav|menu|footer|sidebar|advert|newsletter|"
                             r"subscribe|cookie|pagination|\btags?\b|recommend|promo|sponsor")
# A comment section: the readers' comments that follow an article are not its main content (Readability.js and
# trafilatura leave them out, as dragnet's and scrapinghub-aeb's gold do). Not the forum words (reply, post, message,
# discussion): a thread's posts and replies are its content; nor "commentary", an essay. An element whose class or id
# also names a thread (THREAD) holds a thread's posts, even when its engine calls them comments.
COMMENT_SECTION = re.compile(r"comment(?!ar)|disqus")
THREAD = re.compile(r"discussion|forum|topic")
# Finer markup-word groups (what each class/id says the element is): per candidate, whether its own nodes carry
# the cue and the share of its text inside elements that do. Matched on lower-cased class and id values.
CUE_GROUPS: dict[str, re.Pattern[str]] = {k: re.compile(v) for k, v in {
    "body": r"(?:article|post|entry|story|blog|main|page|news)[-_]?(?:body|content|text|entry|main)|articlebody|"
            r"hentry|h-entry|\bcontent\b|\bpost\b|\barticle\b|\bentry\b|\bstory\b",
    "comment": r"comment|disqus|respond|repl(?:y|ies)|discussion",
    "sidebar": r"sidebar|side-bar|widget|\baside\b|\brail\b|sidenav|secondary",
    "nav": r"nav|menu|breadcrumb|pagination|pager|\btabs?\b",
    "footer": r"foot|copyright|legal",
    "header": r"header|masthead|banner|branding|logo",
    "share": r"share|social|follow|tweet|facebook|print",
    "related": r"related|recommend|more-?stories|popular|trending|read-?more|promo|teaser|\bads?\b|advert",
    "meta": r"byline|author|\bdate\b|time|dateline|\bmeta\b|tags?\b|categor",
}.items()}
# A paragraph-like block (justext/trafilatura's notion of good text, script-fair): enough words, few link
# characters, at least one sentence or clause mark of any script.
PARAGRAPH_WORDS = 12
LONG_WORDS = 30  # a long block counts whatever its punctuation (scripts and styles without marks)
PARAGRAPH_LINK_DENSITY = 0.25


def char_table(chars: str) -> np.ndarray:
    """Lookup table over the BMP marking ``chars`` (all in the BMP; U+FFFF must not be one of them)."""
    table = np.zeros(0x10000, dtype=bool)
    table[[ord(c) for c in chars]] = True
    return table


CHAR_COUNT_CHUNK = 1 << 20  # characters per run of char_counts


def char_counts(snap: Snapshot, text_nodes: np.ndarray,
                classes: Sequence[tuple[np.ndarray, Callable[[str], bool] | None]]) -> list[np.ndarray]:
    """Per character class, per entry of ``text_nodes``: how many of its characters are in the class. A class is a
    BMP lookup table (:func:`char_table`) and an optional test for the rare code points above the BMP. One C-level
    encode of the joined texts and a table lookup per class (Python loops over regex matches were a hot spot)."""
    texts = snap.texts
    out = [np.zeros(text_nodes.size, dtype=np.int64) for _ in classes]
    if text_nodes.size == 0:
        return out
    # In runs of about CHAR_COUNT_CHUNK characters: the code points take 4 bytes each and their copies several
    # times that, which on a 100k-element page was the host's peak memory.
    lengths = snap.text_len[text_nodes] + 1
    total = np.cumsum(lengths)
    i = 0
    while i < text_nodes.size:
        before = int(total[i - 1]) if i else 0
        j = max(int(np.searchsorted(total, before + CHAR_COUNT_CHUNK, side="right")), i + 1)
        run = text_nodes[i:j]
        joined = "\x00".join(map(texts.__getitem__, run.tolist()))
        code = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        node_ends = np.cumsum(lengths[i:j])[:-1]  # where each next text node starts in `joined`
        bmp = np.minimum(code, 0xFFFF)
        astral = np.nonzero(code > 0xFFFF)[0]
        for k, (table, above_bmp) in enumerate(classes):
            pos = np.nonzero(table[bmp])[0]
            if above_bmp is not None and astral.size:
                pos = np.concatenate([pos, astral[[above_bmp(chr(int(c))) for c in code[astral]]]])
            out[k][i:j] = np.bincount(np.searchsorted(node_ends, pos, side="right"), minlength=run.size)
        i = j
    return out


_CLAUSE_MARK = char_table(".!?。！？؟।,，、;；:：")
_COMMA = char_table(",，、،")
ARC90_MIN_CHARS = 25
_TAGS = ("body", "main", "article", "section", "div", "td", "table", "ul", "p", "form", "header", "aside")
_MEDIA = ("img", "picture", "video", "audio", "figure", "svg", "canvas", "iframe", "table")


@dataclass
class PageArrays:
    """Per-element aggregates shared by candidate features, trimming and labels."""

    chars: np.ndarray  # rendered text characters in the subtree
    words: np.ndarray  # script-fair words (centrum.core.textmetrics) in the subtree
    link_chars: np.ndarray  # rendered characters inside <a href>
    text_area: np.ndarray  # rendered text-line area
    link_area: np.ndarray
    images: np.ndarray  # image elements in the subtree
    size: np.ndarray  # elements in the subtree
    rendered: np.ndarray  # per text node: has at least one line rectangle
    in_link: np.ndarray  # per element: is or is inside a link
    body: int
    text_chars: np.ndarray  # per text node: rendered characters
    pos_cue: np.ndarray  # per element: class/id matches POSITIVE
    neg_cue: np.ndarray  # NEGATIVE
    strong_cue: np.ndarray  # STRONG_NEGATIVE
    comment_section: np.ndarray  # COMMENT_SECTION and not THREAD
    cues: dict[str, np.ndarray]  # per element: class/id matches CUE_GROUPS[k]
    class_code: np.ndarray  # per element: small int per distinct class value (0: none)
    para_t: np.ndarray  # per text node: rendered characters when its block is paragraph-like, else 0
    para_chars: np.ndarray  # per element: paragraph-like characters in the subtree
    long_chars: np.ndarray  # per element: characters of long low-link blocks in the subtree
    para_blocks: np.ndarray  # per element: paragraph-like block containers in the subtree
    arc90: np.ndarray  # per element: Readability's (Arc90) content score, 0 when it scores none
    decl_t: np.ndarray  # per text node: rendered characters found in the text the page declares (JSON-LD), else 0
    decl_chars: np.ndarray  # per element: such characters in the subtree
    decl_len: int  # characters of the declared text (0: the page declares none)
    shapes: Shapes  # comment-shaped items and title link lists (feature set v14)


def _text_chars_under(snap: Snapshot, text_chars: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Per element: rendered characters in its subtree that also lie inside the subtree of one of ``roots``."""
    if snap.m == 0:
        return np.zeros(snap.n)
    under = _inside(snap, roots)
    return snap.subtree_sum(snap.text_per_element(text_chars * under[snap.text_owner]))


# A text node this short is too common to say it belongs to the declared text ("Read more", a price, a date).
DECLARED_MIN_CHARS = 12
# Characters of declared text scanned per page at most, over all the nodes' tests (the largest seen on the shared
# sets is about a tenth of it).
DECLARED_SCAN_BUDGET = 200_000_000


def declared_chars(snap: Snapshot, rendered: np.ndarray) -> tuple[np.ndarray, int]:
    """(per text node: its rendered characters when its text occurs in what the page declares as its content in
    JSON-LD (metadata.declared_text), else 0; the declared text's length). A shop whose description sits in its
    Product object, a news page that repeats its body in articleBody: the declared text says where the content is
    without a word list. One substring test in C per rendered text node, each a scan of the declared text: their
    total is capped by DECLARED_SCAN_BUDGET (nodes past it stay unmarked), so a page declaring a huge text over many
    nodes costs a bounded amount; pages that declare nothing pay nothing."""
    # The scripts as the page source holds them, or as a press without the source sends them (the same texts).
    declared = declared_text(ld_json_texts(snap.source) if snap.source is not None else snap.json_ld or [])
    out = np.zeros(snap.m)
    if not declared:
        return out, 0
    texts = snap.texts
    tests_left = max(1, DECLARED_SCAN_BUDGET // len(declared))
    for t in np.nonzero(rendered & (snap.text_len >= DECLARED_MIN_CHARS))[0].tolist():
        piece = " ".join(texts[t].split()).casefold()
        if len(piece) < DECLARED_MIN_CHARS:
            continue
        if tests_left == 0:
            break
        tests_left -= 1
        if piece in declared:
            out[t] = len(texts[t])
    return out, len(declared)


def page_arrays(snap: Snapshot) -> PageArrays:
    n = snap.n
    tags = snap.tags
    body = main_body(snap) or 0
    in_link = _inside(snap, np.nonzero(snap.is_link)[0])
    area = snap.text_area
    rendered = area > 0
    tchars = np.where(rendered, snap.text_len, 0).astype(np.float64)
    # Words only for rendered text (hidden templates can be large and never count); the snapshot's shared counts.
    words_t = np.where(rendered, snap.text_words, 0).astype(np.float64) if snap.m else np.zeros(0)
    tl = in_link[snap.text_owner] if snap.m else np.zeros(0, dtype=bool)

    def agg(v: np.ndarray) -> np.ndarray:
        return snap.subtree_sum(snap.text_per_element(v)) if snap.m else np.zeros(n)

    pos, neg, strong, comment_section, cues, class_code = markup_cues(snap)
    para_t, long_t, para_block, arc90 = paragraphs(snap, rendered, tchars, tl)
    chars = agg(tchars)
    link_chars = agg(tchars * tl)
    decl_t, decl_len = declared_chars(snap, rendered)
    # Readability's final candidate score: class weight (+-25) and tag prior, scaled by 1 - link density.
    tag_prior = np.select([tags == "div", snap.tag_in(("pre", "td", "blockquote")),
                           snap.tag_in(("address", "ol", "ul", "dl", "dd", "dt", "li", "form")),
                           snap.tag_in(("h1", "h2", "h3", "h4", "h5", "h6", "th"))], [5.0, 3.0, -3.0, -5.0], 0.0)
    arc90 = np.where(arc90 > 0, (arc90 + tag_prior + 25.0 * pos - 25.0 * neg)
                     * (1 - np.where(chars > 0, link_chars / np.maximum(chars, 1.0), 0.0)), 0.0)
    return PageArrays(
        chars=chars, words=agg(words_t), link_chars=link_chars, text_area=agg(area),
        link_area=agg(area * tl), images=snap.subtree_sum(((snap.flags & IMAGE) != 0).astype(np.float64)),
        size=(snap.subtree_end - np.arange(n)).astype(np.float64), rendered=rendered, in_link=in_link, body=body,
        text_chars=tchars, pos_cue=pos, neg_cue=neg, strong_cue=strong, comment_section=comment_section,
        cues=cues, class_code=class_code,
        para_t=para_t, para_chars=agg(para_t), long_chars=agg(long_t),
        para_blocks=snap.subtree_sum(para_block.astype(np.float64)), arc90=arc90,
        decl_t=decl_t, decl_chars=agg(decl_t), decl_len=decl_len,
        shapes=shapes(snap, rendered, chars, link_chars, in_link, class_code))


def paragraphs(snap: Snapshot, rendered: np.ndarray, tchars: np.ndarray, in_link_t: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(per text node: characters if its block is paragraph-like, ... if it is long and low-link; per element:
    is a paragraph-like block container, its Arc90 score :func:`_arc90`). Blocks are the text's block containers
    (the lines ``text_of`` breaks); clause marks and commas are counted by :func:`char_counts`."""
    n, m = snap.n, snap.m
    zero_t = np.zeros(m)
    if m == 0:
        return zero_t, zero_t.copy(), np.zeros(n, dtype=bool), np.zeros(n)
    tn = np.nonzero(rendered & ~snap.text_blank)[0]
    if tn.size == 0:
        return zero_t, zero_t.copy(), np.zeros(n, dtype=bool), np.zeros(n)
    cont = snap.block_container[snap.text_owner[tn]]
    cont = np.where(cont >= 0, cont, n)  # text with no block-level ancestor: one virtual block n
    tch = tchars[tn]
    chars = np.bincount(cont, weights=tch, minlength=n + 1)
    links = np.bincount(cont, weights=tch * in_link_t[tn], minlength=n + 1)
    words = np.bincount(cont, weights=snap.text_words[tn], minlength=n + 1)
    clause_marks, commas = char_counts(snap, tn, [(_CLAUSE_MARK, None), (_COMMA, None)])
    marks = np.bincount(cont, weights=clause_marks, minlength=n + 1)
    block_commas = np.bincount(cont, weights=commas, minlength=n + 1)
    low_link = links < PARAGRAPH_LINK_DENSITY * np.maximum(chars, 1.0)
    para = (words >= PARAGRAPH_WORDS) & low_link & (marks >= 1)
    long_ = (words >= LONG_WORDS) & low_link
    para_t, long_t = zero_t, zero_t.copy()
    para_t[tn] = tch * para[cont]
    long_t[tn] = tch * long_[cont]
    return para_t, long_t, para[:n], _arc90(snap, chars[:n], block_commas[:n])


def _arc90(snap: Snapshot, block_chars: np.ndarray, block_commas: np.ndarray) -> np.ndarray:
    """Per element, the content score of Arc90's Readability (as in Readability.js ``_grabArticle``), before the
    link-density scaling and class weights: every block of at least 25 characters scores 1 + commas +
    min(characters // 100, 3) and gives it to its parent, half of it to its grandparent and score / (3 x level)
    to the ancestors above (levels 2-4)."""
    n = snap.n
    acc = np.zeros(n)
    cur = np.nonzero(block_chars >= ARC90_MIN_CHARS)[0]
    score = 1.0 + block_commas[cur] + np.minimum(block_chars[cur] // 100, 3)
    par = snap.parent
    for level in range(5):
        anc = par[cur]
        ok = anc >= 0
        ok[ok] = par[anc[ok]] >= 0  # the root (<html>, whose parent is the document) is never scored
        cur, score = anc[ok], score[ok]
        np.add.at(acc, cur, score / (1 if level == 0 else 2 if level == 1 else level * 3))
    return acc


def normalize(snap: Snapshot, nodes: Sequence[int]) -> tuple[int, ...]:
    """Sorted node ids without those inside another listed node's subtree (so sums never count twice)."""
    out: list[int] = []
    end = -1
    for i in sorted({int(x) for x in nodes if 0 <= int(x) < snap.n}):
        if i >= end:
            out.append(i)
            end = int(snap.subtree_end[i])
    return tuple(out)


def _lca(snap: Snapshot, nodes: Sequence[int]) -> int:
    first = nodes[0]
    last_end = max(int(snap.subtree_end[x]) for x in nodes)
    a = first
    while a >= 0 and int(snap.subtree_end[a]) < last_end:
        a = int(snap.parent[a])
    return max(a, 0)


@dataclass
class Proposals:
    """What the base algorithms said about one page."""

    answers: dict[str, tuple[int, ...]]  # algorithm -> normalized answer nodes (empty: no answer)
    ranked: dict[str, list[tuple[int, ...]]]  # algorithm -> its candidates' node sets, best first


_SENTENCE_END = re.compile(r"\.( |$)")  # Readability's test for a short paragraph that ends a sentence


def _root_of_texts(snap: Snapshot, roots: np.ndarray) -> np.ndarray:
    """Per text node: 1 + the index in ``roots`` (disjoint subtrees) of the one holding it, 0 outside them: O(n + m)."""
    return cover_count(snap, roots, weights=np.arange(1, roots.size + 1)).astype(np.int64)[snap.text_owner]


def _texts_under(snap: Snapshot, roots: np.ndarray, label: np.ndarray | None = None) -> list[str]:
    """Per root of disjoint subtrees ``roots``: its text nodes' texts joined by a space (``label``: their
    :func:`_root_of_texts` when the caller has it)."""
    if roots.size == 0 or snap.m == 0:
        return [""] * roots.size
    owner_label = _root_of_texts(snap, roots) if label is None else label
    parts: list[list[str]] = [[] for _ in range(roots.size)]
    texts = snap.texts
    for t in np.nonzero(owner_label > 0)[0].tolist():
        parts[int(owner_label[t]) - 1].append(texts[t])
    return [" ".join(p) for p in parts]


def arc90_proposal(snap: Snapshot, arrays: PageArrays, k: int) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """(answer, ranked candidates) of Arc90 Readability's selection on the content scores :attr:`PageArrays.arc90`:
    the top-scoring element with the siblings Readability appends to it (``_grabArticle``: a sibling scoring at
    least max(10, 0.2 x top), counting a 0.2 x top bonus when it shares the top's class; or a ``<p>`` of > 80
    characters under 25 % link density, or a shorter link-free one holding a sentence end), then the next best
    elements. O(n) with one partial sort of the k best."""
    sc = arrays.arc90
    if sc.size == 0 or float(sc.max()) <= 0:
        return (), []
    best = np.argpartition(-sc, min(k, sc.size - 1))[: k + 1] if sc.size > k + 1 else np.arange(sc.size)
    best = best[np.argsort(-sc[best], kind="stable")]
    best = [int(i) for i in best if sc[i] > 0][:k]
    top = best[0]
    answer: tuple[int, ...] = (top,)
    par = int(snap.parent[top])
    if par >= 0:
        off, kids = snap.children_offsets
        sib = kids[off[par]:off[par + 1]]
        top_score = float(sc[top])
        cc = arrays.class_code
        bonus = np.where((cc[sib] == cc[top]) & (cc[top] != 0), 0.2 * top_score, 0.0)
        append = (sc[sib] + bonus >= max(10.0, 0.2 * top_score)) | (sib == top)
        ch = arrays.chars[sib]
        ld = np.where(ch > 0, arrays.link_chars[sib] / np.maximum(ch, 1.0), 0.0)
        para = snap.tags[sib] == "p"
        append |= para & (ch > 80) & (ld < 0.25)
        short = np.nonzero(para & ~append & (ch > 0) & (ch <= 80) & (ld == 0))[0]
        for j, text in zip(short.tolist(), _texts_under(snap, sib[short]), strict=True):
            append[j] = _SENTENCE_END.search(text) is not None
        answer = normalize(snap, sib[append].tolist())
    return answer, [answer, *((i,) for i in best if (i,) != answer)][:k]


def proposals(snap: Snapshot, results: dict[str, Result], per_algorithm: int, arrays: PageArrays) -> Proposals:
    """Every proposer's answer and runners-up (at most ``per_algorithm``): the base algorithms' Results and the
    Arc90 selection on ``arrays``."""
    answers: dict[str, tuple[int, ...]] = {}
    ranked: dict[str, list[tuple[int, ...]]] = {}
    answers["arc90"], ranked["arc90"] = arc90_proposal(snap, arrays, per_algorithm)
    for name in BASE_ALGORITHMS:
        r = results.get(name)
        answers[name] = normalize(snap, r.nodes) if r is not None else ()
        seen: list[tuple[int, ...]] = []
        if r is not None:
            for c in r.candidates:
                key = normalize(snap, c.nodes)
                if key and key not in seen:
                    seen.append(key)
                if len(seen) >= per_algorithm:
                    break
        ranked[name] = seen
    return Proposals({a: answers[a] for a in PROPOSERS}, {a: ranked[a] for a in PROPOSERS})


def gather(snap: Snapshot, prop: Proposals, arrays: PageArrays, cap: int) -> list[tuple[int, ...]]:
    """Candidate node sets: answers, runners-up, their ancestors up to <body> and text-heavy children; capped."""
    out: dict[tuple[int, ...], None] = {}
    body = arrays.body
    chars = arrays.chars

    def add(key: tuple[int, ...]) -> None:
        if key and key not in out and chars[list(key)].sum() > 0:
            out[key] = None

    singles: list[int] = []
    for name in PROPOSERS:  # answers first: they survive any cap
        key = prop.answers[name]
        add(key)
        if key:
            singles.append(key[0] if len(key) == 1 else _lca(snap, key))
    depth_rank = max((len(v) for v in prop.ranked.values()), default=0)
    for k in range(depth_rank):  # runners-up round-robin over algorithms, best first
        for name in PROPOSERS:
            if k < len(prop.ranked[name]):
                key = prop.ranked[name][k]
                add(key)
                singles.append(key[0] if len(key) == 1 else _lca(snap, key))
    off, kids = snap.children_offsets
    for s in list(dict.fromkeys(singles)):
        if len(out) >= cap:
            break
        # Children holding a quarter of the text: the answer is often one level below a proposal.
        ch = kids[off[s]:off[s + 1]]
        if ch.size and chars[s] > 0:
            for c in ch[chars[ch] >= 0.25 * chars[s]]:
                add((int(c),))
        a = s
        while a >= 0 and len(out) < cap:
            add((a,))
            if a == body:
                break
            a = int(snap.parent[a])
    keys = list(out)[:cap]
    if not keys and snap.n:
        keys = [(body,)]
    return keys


def feature_names(feature_set: str | None = None) -> list[str]:
    """The candidate features of ``feature_set`` (default: the latest, what :func:`features` computes); an older set
    is a prefix of a newer one, so its models read the leading columns."""
    names = ["log_chars", "chars_share", "log_words", "words_share", "link_char_density", "link_area_density",
             "text_area_density", "area_share", "width_vw", "height_vh", "top_vh", "left_vw", "center_dx_vw",
             "doc_center_dy", "depth_below_body", "log_children", "log_size", "log_images", "chars_per_element",
             "n_nodes", "pos_cue", "neg_cue", "neg_ancestor", "chars_rel_max", "fixed"]
    names += [f"tag_{t}" for t in _TAGS] + ["tag_set", "tag_other"]
    for a in PROPOSERS:
        names += [f"{a}_answered", f"{a}_exact", f"{a}_precision", f"{a}_recall", f"{a}_rank"]
    names += ["votes_exact", "mean_precision", "mean_recall", "min_recall"]
    names += CONTEXT_FEATURES + [f"cue_{k}_{w}" for k in CUE_GROUPS for w in ("self", "share")] + ["cue_body_recall"]
    names += DECLARED_FEATURES + DOC_TITLE_FEATURES
    return names + SHAPE_FEATURES if feature_set_index(feature_set) >= 1 else names


# Feature-set versions, oldest first: v13 is every feature up to the document-title ones (what ensemble-v11 and -v13
# read), v14 adds the shape features of both models (:mod:`.shapes`). `centrum train --feature-set`.
FEATURE_SETS = ("v13", "v14")
LATEST_FEATURE_SET = FEATURE_SETS[-1]


def feature_set_index(feature_set: str | None) -> int:
    if feature_set is None:
        return len(FEATURE_SETS) - 1
    if feature_set not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {feature_set!r} (known: {', '.join(FEATURE_SETS)})")
    return FEATURE_SETS.index(feature_set)


# Comment threads and title lists by shape (v14): the candidate's share of text in comment-shaped items, how many such
# items it holds, its share of paragraph text outside them, and its share of text in title link lists.
SHAPE_FEATURES = ["shape_item_share", "shape_items_log", "shape_para_outside", "shape_titles_share"]


# What the page declares as its content (v7), last so that a model trained before them reads the leading columns:
# the candidate's share of the page's declared-and-shown characters, their share of its own, and the page's totals.
DECLARED_FEATURES = ["decl_recall", "decl_precision", "log_decl_shown", "log_decl_len"]

# The document's own name for its content (v9): shown headings or texts whose words are a run of the <title>'s
# words (or hold them all), as readers match an article's heading against the title. A blog's post is often shorter
# than its sidebars; its heading repeats the title and the sidebars' do not. The best share of the title matched
# inside the candidate, where the candidate starts below the best match on the page, and that match's share.
DOC_TITLE_FEATURES = ["doctitle_in", "doctitle_dy", "doctitle_cover"]


# Context of a candidate on its page (v3): paragraph-like text it holds and leaves out (before/after it, in its
# parent), how its text splits among its children, where it starts relative to the page title (largest font in the
# first two screens) and how repetitive its children are (comment lists, link lists); how it compares with
# the element Arc90's Readability scores highest.
CONTEXT_FEATURES = ["para_recall", "para_precision", "log_para_chars", "long_recall", "long_precision",
                    "parent_share", "parent_para_gain", "parent_link_extra", "top_child_share", "child_para_share",
                    "para_rel_max", "log_para_blocks", "para_before", "para_after", "has_title", "title_dy",
                    "title_font_rel", "rep_log", "rep_share", "arc90_rel", "arc90_top_recall", "arc90_top_precision"]


def markup_cues(snap: Snapshot) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray],
                                         np.ndarray]:
    """(positive, negative, strong negative, comment section (COMMENT_SECTION and not THREAD, on class or id), {group:
    flag}) class/id cues per element, and a code per distinct class value: one pass per distinct lower-cased value."""
    pats = (POSITIVE, NEGATIVE, STRONG_NEGATIVE, COMMENT_SECTION, THREAD, *CUE_GROUPS.values())
    out = [np.zeros(snap.n, dtype=bool) for _ in pats]
    class_code = np.zeros(snap.n, dtype=np.int64)
    distinct = list(dict.fromkeys([*(snap.attrs.get("class") or {}).values(), *(snap.attrs.get("id") or {}).values()]))
    where = {v: i for i, v in enumerate(distinct)}
    matched = _matches(distinct, pats)
    for name in ("class", "id"):
        values = snap.attrs.get(name)
        if not values:
            continue
        idx = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
        fa = matched[np.fromiter(map(where.__getitem__, values.values()), dtype=np.int64, count=len(values))]
        for k in range(len(pats)):
            out[k][idx[fa[:, k]]] = True
        if name == "class":
            codes: dict[str, int] = {"": 0}  # class="" is no class
            class_code[idx] = np.fromiter((codes.setdefault(v, len(codes)) for v in values.values()),
                                          dtype=np.int64, count=len(values))
    return out[0], out[1], out[2], out[3] & ~out[4], dict(zip(CUE_GROUPS, out[5:], strict=True)), class_code


def _matches(values: list[str], pats: Sequence[re.Pattern[str]]) -> np.ndarray:
    """(values, patterns) bool: ``bool(p.search(v.lower()))``, by one scan of each pattern over the lower-cased values
    joined with NUL (a page has thousands of distinct class values; a search per value and pattern was the features'
    hot spot). No pattern matches NUL, so no match spans two values, and NUL, like a string's ends, is no word
    character for ``\\b``; values holding a NUL are searched one by one."""
    out = np.zeros((len(values), len(pats)), dtype=bool)
    lows = list(map(str.lower, values))
    joined = "\x00".join(lows)
    if joined.count("\x00") != max(len(lows) - 1, 0):
        for i, low in enumerate(lows):
            out[i] = [p.search(low) is not None for p in pats]
        return out
    starts = np.zeros(len(lows), dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lows), dtype=np.int64, count=len(lows))[:-1] + 1, out=starts[1:])
    for k, p in enumerate(pats):
        hits = np.fromiter((m.start() for m in p.finditer(joined)), dtype=np.int64)
        out[np.searchsorted(starts, hits, side="right") - 1, k] = True
    return out


@dataclass
class _Flat:
    """The candidates' nodes flattened in one array, so that a candidate's value is one ``reduceat`` segment."""

    flat: np.ndarray  # every candidate's nodes, candidate after candidate
    starts: np.ndarray  # (k,) index into flat of each candidate's first node
    lens: np.ndarray  # (k,) nodes per candidate

    @property
    def first(self) -> np.ndarray:
        return self.flat[self.starts]

    def sum(self, v: np.ndarray) -> np.ndarray:
        """Per candidate: the sum of the per-element values ``v`` over its nodes."""
        return np.add.reduceat(v[self.flat], self.starts)


def _flatten(cands: list[tuple[int, ...]]) -> _Flat:
    k = len(cands)
    lens = np.fromiter((len(c) for c in cands), dtype=np.int64, count=k)
    flat = np.fromiter((x for c in cands for x in c), dtype=np.int64, count=int(lens.sum()))
    starts = np.zeros(k, dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    return _Flat(flat, starts, lens)


def features(snap: Snapshot, cands: list[tuple[int, ...]], prop: Proposals, arrays: PageArrays) -> np.ndarray:
    """(len(cands), len(feature_names())) float64 matrix."""
    k = len(cands)
    names = feature_names()
    X = np.zeros((k, len(names)), dtype=np.float64)
    if k == 0:
        return X
    fl = _flatten(cands)
    chars = fl.sum(arrays.chars)
    cols, y0 = _size_and_geometry(snap, arrays, fl, chars)
    for name, v in cols.items():
        X[:, names.index(name)] = v
    _tag_and_cue_features(snap, arrays, fl, X, names)
    _agreement(snap, cands, prop, arrays, fl, chars, X, names)
    for name, v in _context(snap, arrays, fl, chars, y0).items():
        X[:, names.index(name)] = v
    for name, v in _shape_features(snap, arrays, fl, chars).items():
        X[:, names.index(name)] = v
    return np.nan_to_num(X, nan=0.0, posinf=0.0, neginf=0.0)


def _size_and_geometry(snap: Snapshot, A: PageArrays, fl: _Flat, chars: np.ndarray
                       ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(the size, density, box and depth columns, each candidate's top): the box of a multi-node candidate is the
    union of its nodes' boxes."""
    csum, lens, starts, first = fl.sum, fl.lens, fl.starts, fl.first
    body = A.body
    words = csum(A.words)
    link_chars, tarea, larea = csum(A.link_chars), csum(A.text_area), csum(A.link_area)
    box = snap.box[fl.flat]
    x0 = np.minimum.reduceat(box[:, 0], starts)
    y0 = np.minimum.reduceat(box[:, 1], starts)
    x1 = np.maximum.reduceat(box[:, 0] + box[:, 2], starts)
    y1 = np.maximum.reduceat(box[:, 1] + box[:, 3], starts)
    w, h = np.maximum(x1 - x0, 0), np.maximum(y1 - y0, 0)
    vw, vh = (max(float(v), 1.0) for v in snap.page.viewport)
    dw, dh = (max(float(v), 1.0) for v in snap.page.document)
    page_chars = max(float(A.chars[body]), 1.0)
    page_words = max(float(A.words[body]), 1.0)
    depth = snap.depth
    # A hostile page's box can be a few subnormal pixels wide: the density then overflows to inf, which the clip
    # bounds; that is not worth a warning.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cols = {
            "log_chars": np.log1p(chars), "chars_share": chars / page_chars, "log_words": np.log1p(words),
            "words_share": words / page_words, "link_char_density": np.where(chars > 0, link_chars / chars, 1.0),
            "link_area_density": np.where(tarea > 0, larea / tarea, 1.0),
            "text_area_density": np.where(w * h > 0, np.minimum(tarea / (w * h), 2.0), 0.0),
            "area_share": np.minimum(w * h / (dw * dh), 1.0), "width_vw": w / vw, "height_vh": h / vh,
            "top_vh": y0 / vh, "left_vw": x0 / vw, "center_dx_vw": np.abs((x0 + x1) / 2 - vw / 2) / vw,
            "doc_center_dy": np.abs((y0 + y1) / 2 - dh / 2) / dh,
            "depth_below_body": depth[first] - depth[body], "log_children": np.log1p(csum(snap.n_children)),
            "log_size": np.log1p(csum(A.size)), "log_images": np.log1p(csum(A.images)),
            "chars_per_element": chars / np.maximum(csum(A.size), 1.0), "n_nodes": lens.astype(np.float64),
            "chars_rel_max": chars / max(float(chars.max()), 1.0),
            "fixed": snap.is_fixed[first].astype(np.float64),
        }
    return cols, y0


def _tag_and_cue_features(snap: Snapshot, A: PageArrays, fl: _Flat, X: np.ndarray, names: list[str]) -> None:
    """Tag one-hot (a multi-node candidate is a "set"); class/id cues on the candidate's nodes, and negative cues
    on an ancestor between it and <body>."""
    lens, flat, starts, first = fl.lens, fl.flat, fl.starts, fl.first
    tags = snap.tags[first]
    for t in _TAGS:
        X[:, names.index(f"tag_{t}")] = (tags == t) & (lens == 1)
    X[:, names.index("tag_set")] = lens > 1
    X[:, names.index("tag_other")] = ~np.isin(tags, _TAGS) & (lens == 1)
    pos_el, neg_el = A.pos_cue, A.neg_cue
    X[:, names.index("pos_cue")] = np.logical_or.reduceat(pos_el[flat], starts)
    X[:, names.index("neg_cue")] = np.logical_or.reduceat(neg_el[flat], starts)
    depth = snap.depth
    below = neg_el & (depth > depth[A.body])
    in_neg = _inside(snap, np.nonzero(below)[0])
    par = snap.parent[first]
    X[:, names.index("neg_ancestor")] = np.where(par >= 0, in_neg[np.maximum(par, 0)], False)


def _agreement(snap: Snapshot, cands: list[tuple[int, ...]], prop: Proposals, A: PageArrays, fl: _Flat,
               chars: np.ndarray, X: np.ndarray, names: list[str]) -> None:
    """Agreement with every algorithm: exact match, text precision/recall of the candidate against its answer,
    rank among its candidates, and the votes and means over the algorithms that answered."""
    keyset = {c: j for j, c in enumerate(cands)}
    precs, recs = [], []
    tch = A.text_chars
    for a in PROPOSERS:
        ans = prop.answers[a]
        X[:, names.index(f"{a}_answered")] = 1.0 if ans else 0.0
        if ans:
            ic = fl.sum(_text_chars_under(snap, tch, np.asarray(ans, dtype=np.int64)))
            ans_chars = max(float(A.chars[list(ans)].sum()), 1.0)
            p = np.where(chars > 0, ic / np.maximum(chars, 1.0), 0.0)
            r = ic / ans_chars
            X[:, names.index(f"{a}_precision")] = p
            X[:, names.index(f"{a}_recall")] = r
            precs.append(p)
            recs.append(r)
            j = keyset.get(ans)
            if j is not None:
                X[j, names.index(f"{a}_exact")] = 1.0
        for rank, key in enumerate(prop.ranked[a]):
            j = keyset.get(key)
            if j is not None:
                col = names.index(f"{a}_rank")
                X[j, col] = max(X[j, col], 1.0 / (1 + rank))
    X[:, names.index("votes_exact")] = X[:, [names.index(f"{a}_exact") for a in PROPOSERS]].sum(axis=1)
    if precs:
        X[:, names.index("mean_precision")] = np.mean(precs, axis=0)
        X[:, names.index("mean_recall")] = np.mean(recs, axis=0)
        X[:, names.index("min_recall")] = np.min(recs, axis=0)


def _context(snap: Snapshot, A: PageArrays, fl: _Flat, chars: np.ndarray, top: np.ndarray) -> dict[str, np.ndarray]:
    """The CONTEXT_FEATURES and cue group columns (see :func:`features`); O(n + m + total candidate size)."""
    para = fl.sum(A.para_chars)
    out = _paragraph_context(snap, A, fl, chars, para)
    out.update(_order_and_title(snap, A, fl, para, top))
    out.update(_arc90_context(snap, A, fl, chars))
    out.update(_repetition(snap, A, fl))
    out.update(_cue_groups(snap, A, fl, chars))
    decl = fl.sum(A.decl_chars)
    page_decl = float(A.decl_chars[A.body]) if snap.n else 0.0
    out["decl_recall"] = decl / max(page_decl, 1.0)
    out["decl_precision"] = decl / np.maximum(chars, 1.0)
    out["log_decl_shown"] = np.full(chars.size, np.log1p(page_decl))
    out["log_decl_len"] = np.full(chars.size, np.log1p(A.decl_len))
    out.update(_doc_title(snap, A, fl, top))
    return out


DOC_TITLE_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
DOC_TITLE_POOL = 256  # texts, and headings, tokenized per page at most
DOC_TITLE_MATCHES = 8  # matching elements looked for inside each candidate, best covers first


def _doc_title(snap: Snapshot, A: PageArrays, fl: _Flat, top: np.ndarray) -> dict[str, np.ndarray]:
    """DOC_TITLE_FEATURES from the shown text nodes and headings whose tokens, whatever their case, match the
    document title's (a run of them, or all of them with at most half as many again); a match covers its share of
    the title (of the text when it holds the whole title). None when nothing matches."""
    k = fl.starts.size
    none = {"doctitle_in": np.full(k, -1.0), "doctitle_dy": np.full(k, 10.0), "doctitle_cover": np.zeros(k)}
    title = tokens((snap.page.title or "").casefold())
    if len(title) < 2 or not snap.m:
        return none
    sep = "\x1f"
    title_s = sep + sep.join(title) + sep
    # A match holds at most 1.5x the title's tokens: a length bound before any tokenizing. Of what passes, only the
    # DOC_TITLE_POOL largest-font texts and headings are tokenized (a page's heading repeating its title is set
    # at least as large as its body text), so the cost stays bounded on a page of thousands of short texts.
    shown = A.rendered & ~snap.text_blank
    ok = np.nonzero(shown & (A.text_chars >= 2) & (A.text_chars <= 3 * len(snap.page.title) + 16))[0]
    fs = snap.font_size[snap.text_owner[ok]]
    ok = ok[np.argsort(-fs, kind="stable")[:DOC_TITLE_POOL]]
    pool: list[tuple[int, str]] = [(int(snap.text_owner[i]), snap.texts[i]) for i in ok.tolist()]
    heads = np.nonzero(snap.tag_in(DOC_TITLE_HEADINGS))[0] if snap.n else np.zeros(0, dtype=np.int64)
    heads = heads[np.argsort(-snap.font_size[heads], kind="stable")[:DOC_TITLE_POOL]]
    if heads.size:
        # Outermost headings (a heading inside another is part of its text), each with 2..64 text nodes of which one
        # is shown, with their texts joined by _texts_under.
        heads = np.sort(heads)
        heads = heads[cover_count(snap, heads)[heads] == 1]
        label = _root_of_texts(snap, heads)
        count = np.bincount(label, minlength=heads.size + 1)[1:]
        seen = np.bincount(label, weights=shown, minlength=heads.size + 1)[1:]
        keep = ((count > 1) & (count <= 64) & (seen > 0)).tolist()
        pool.extend((h, t) for h, t, k in zip(heads.tolist(), _texts_under(snap, heads, label), keep, strict=True)
                    if k)
    matches: dict[int, float] = {}  # element -> best cover of a text of it that matches
    for owner, text in pool:
        tk = tokens(text.casefold())
        if len(tk) < 2:
            continue
        if sep + sep.join(tk) + sep in title_s:
            cover = len(tk) / len(title)
        elif len(tk) <= 1.5 * len(title) and title_s in sep + sep.join(tk) + sep:
            cover = len(title) / len(tk)
        else:
            continue
        matches[owner] = max(cover, matches.get(owner, 0.0))
    if not matches:
        return none
    # The best match, the later one on a tie: a site's name comes before its post's heading, and a title often
    # holds both ("Blog: Post" as much as "Post | Blog").
    best = max(matches, key=lambda o: (matches[o], o))
    flat, starts = fl.flat, fl.starts
    cover_in = np.zeros(k)
    for owner, cover in sorted(matches.items(), key=lambda kv: -kv[1])[:DOC_TITLE_MATCHES]:
        inside = np.logical_or.reduceat((owner >= flat) & (owner < snap.subtree_end[flat]), starts)
        cover_in = np.where(inside, np.maximum(cover_in, cover), cover_in)
    vh = max(float(snap.page.viewport[1]), 1.0)
    bottom = float(snap.box[best, 1] + snap.box[best, 3])
    return {"doctitle_in": cover_in, "doctitle_dy": np.clip((top - bottom) / vh, -5.0, 10.0),
            "doctitle_cover": np.full(k, matches[best])}


def _paragraph_context(snap: Snapshot, A: PageArrays, fl: _Flat, chars: np.ndarray, para: np.ndarray
                       ) -> dict[str, np.ndarray]:
    """Paragraph-like text the candidate holds and leaves out (in its parent), and how its text splits among its
    children."""
    csum = fl.sum
    n, body = snap.n, A.body
    first = fl.first
    single = fl.lens == 1
    long_, links = csum(A.long_chars), csum(A.link_chars)
    page_para, page_long = max(float(A.para_chars[body]), 1.0), max(float(A.long_chars[body]), 1.0)
    par = np.maximum(snap.parent[first], 0)
    # Largest child's characters and paragraph characters per element (one scatter-max over the parent array).
    p = snap.parent
    has = p >= 0
    max_child, max_child_para = np.zeros(n), np.zeros(n)
    np.maximum.at(max_child, p[has], A.chars[has])
    np.maximum.at(max_child_para, p[has], A.para_chars[has])
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["para_recall"] = para / page_para
        out["para_precision"] = np.where(chars > 0, para / np.maximum(chars, 1.0), 0.0)
        out["log_para_chars"] = np.log1p(para)
        out["long_recall"] = long_ / page_long
        out["long_precision"] = np.where(chars > 0, long_ / np.maximum(chars, 1.0), 0.0)
        out["parent_share"] = np.where(A.chars[par] > 0, chars / np.maximum(A.chars[par], 1.0), 1.0)
        out["parent_para_gain"] = (A.para_chars[par] - para) / page_para
        extra = A.chars[par] - chars
        out["parent_link_extra"] = np.where(extra > 0, (A.link_chars[par] - links) / np.maximum(extra, 1.0), -1.0)
        out["top_child_share"] = np.where(single & (chars > 0), max_child[first] / np.maximum(chars, 1.0), 1.0)
        out["child_para_share"] = np.where(single & (para > 0), max_child_para[first] / np.maximum(para, 1.0), 1.0)
        out["para_rel_max"] = para / max(float(para.max()), 1.0)
        out["log_para_blocks"] = np.log1p(csum(A.para_blocks))
    return out


def _order_and_title(snap: Snapshot, A: PageArrays, fl: _Flat, para: np.ndarray, top: np.ndarray
                     ) -> dict[str, np.ndarray]:
    """Paragraph characters before and after the candidate in document order, and where it starts relative to the
    page title (none of them when the page shows no text)."""
    k, flat, starts, first = fl.starts.size, fl.flat, fl.starts, fl.first
    out: dict[str, np.ndarray] = {}
    # text_seq: elements before the text node in document order.
    shown = A.rendered & ~snap.text_blank if snap.m else np.zeros(0, dtype=bool)
    if not shown.any():
        return out
    order = np.argsort(snap.text_seq, kind="stable")
    cum = np.concatenate([[0.0], np.cumsum(A.para_t[order])])
    total = max(float(cum[-1]), 1.0)
    before = cum[np.searchsorted(snap.text_seq[order], first, side="right")]
    out["para_before"] = before / total
    out["para_after"] = np.maximum(total - before - para, 0.0) / total if cum[-1] > 0 else np.zeros(k)
    # Page title: the largest-font shown text (2+ words, not a link) in the first two screens.
    vh = max(float(snap.page.viewport[1]), 1.0)
    fs = snap.font_size[snap.text_owner]
    title = shown & (snap.text_box[:, 1] < 2 * vh) & (snap.text_words >= 2) & ~A.in_link[snap.text_owner]
    if title.any():
        t = int(np.nonzero(title)[0][int(np.argmax(fs[title]))])
        owner = int(snap.text_owner[t])
        out["has_title"] = np.logical_or.reduceat((owner >= flat) & (owner < snap.subtree_end[flat]), starts)
        out["title_dy"] = np.clip((top - float(snap.text_box[t, 1] + snap.text_box[t, 3])) / vh, -5.0, 10.0)
        out["title_font_rel"] = np.full(k, float(fs[t]) / max(float(np.median(fs[shown])), 1.0))
    else:
        out["has_title"], out["title_dy"] = np.full(k, -1.0), np.full(k, 10.0)
    return out


def _arc90_context(snap: Snapshot, A: PageArrays, fl: _Flat, chars: np.ndarray) -> dict[str, np.ndarray]:
    """Arc90 Readability's top candidate: the candidate's best score relative to it, and text agreement with it
    (none when Arc90 scores no element)."""
    top_score = float(A.arc90.max()) if snap.n else 0.0
    if not top_score > 0:
        return {}
    top_el = int(np.argmax(A.arc90))
    ic = fl.sum(_text_chars_under(snap, A.text_chars, np.array([top_el])))
    return {"arc90_rel": np.maximum.reduceat(A.arc90[fl.flat], fl.starts) / top_score,
            "arc90_top_recall": ic / max(float(A.chars[top_el]), 1.0),
            "arc90_top_precision": np.where(chars > 0, ic / np.maximum(chars, 1.0), 0.0)}


def _repetition(snap: Snapshot, A: PageArrays, fl: _Flat) -> dict[str, np.ndarray]:
    """Repetition: the most children of one element sharing tag and class value (comment lists, link lists)."""
    n = snap.n
    p = snap.parent
    has = p >= 0
    key = snap.tag_code.astype(np.int64) * (int(A.class_code.max()) + 1) + A.class_code
    span = int(key.max()) + 1 if n else 1
    groups, counts = np.unique(p[has].astype(np.int64) * span + key[has], return_counts=True)
    max_rep = np.zeros(n)
    np.maximum.at(max_rep, groups // span, counts)
    rep = np.maximum.reduceat(max_rep[fl.flat], fl.starts)
    return {"rep_log": np.log1p(rep),
            "rep_share": rep / np.maximum(fl.sum(snap.n_children.astype(np.float64)), 1.0)}


def _shape_features(snap: Snapshot, A: PageArrays, fl: _Flat, chars: np.ndarray) -> dict[str, np.ndarray]:
    """Comment-shaped items and title lists (v14), per candidate (:mod:`.shapes`)."""
    sh = A.shapes
    if snap.m == 0:
        return {}

    def agg(v: np.ndarray) -> np.ndarray:
        return fl.sum(snap.subtree_sum(snap.text_per_element(v)))

    para = fl.sum(A.para_chars)
    return {"shape_item_share": np.where(chars > 0, agg(A.text_chars * sh.item_t) / np.maximum(chars, 1.0), 0.0),
            "shape_items_log": np.log1p(fl.sum(snap.subtree_sum(sh.item.astype(np.float64)))),
            "shape_para_outside": np.where(para > 0, agg(A.para_t * (1.0 - sh.item_t)) / np.maximum(para, 1.0), -1.0),
            "shape_titles_share": np.where(chars > 0, agg(A.text_chars * sh.titles_t) / np.maximum(chars, 1.0), 0.0)}


def _cue_groups(snap: Snapshot, A: PageArrays, fl: _Flat, chars: np.ndarray) -> dict[str, np.ndarray]:
    """Cue groups: on the candidate's own nodes, and the share of its text inside cued elements."""
    k, body = fl.starts.size, A.body
    out: dict[str, np.ndarray] = {}
    for name, flag in A.cues.items():
        out[f"cue_{name}_self"] = np.logical_or.reduceat(flag[fl.flat], fl.starts)
        cued = _text_chars_under(snap, A.text_chars, np.nonzero(flag)[0])
        out[f"cue_{name}_share"] = np.where(chars > 0, fl.sum(cued) / np.maximum(chars, 1.0), 0.0)
        if name == "body":
            out["cue_body_recall"] = fl.sum(cued) / float(cued[body]) if cued[body] > 0 else np.full(k, -1.0)
    return out
