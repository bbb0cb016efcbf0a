"""Comment threads and related-link lists found by their shape, not their class names (the ensemble's feature set
v14, read by models trained with ``centrum train --feature-set v14``).

A readers' comment section is a run of sibling blocks of one kind (tag and class), each holding a block of its own
(byline, paragraph), text, and a short line with a date or time or a short control ("Reply", "Like"), not starting
with a heading, after the article, often above a reply form; a related list is a
list whose items are each one link whose text is a title (a phrase, not a menu word). Themes name them in any way
(``class="c-item"``), so markup words (``features.COMMENT_SECTION``) miss them where the shape does not.
A forum thread has the comment shape too: the features say where the shape is and how much paragraph text the page
holds outside it before and after, and the models learn which is the content.

Everything is per element or per text node in O(n + m): one regex pass over the short text nodes joined, sibling
groups by one ``np.unique``, subtree sums over the pre-order arrays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...core.snapshot import Snapshot
from ...core.tree import cover_count, covered

# A line this short can be a comment's byline or date ("Anna K. · 3 March 2023 at 10:12").
SHORT_LINE_CHARS = 48
# A date or time in a short line: a year of 1900-2099, a clock time, a numeric date, a relative age ("3 days ago"),
# CJK date characters. Digits are the only language-independent part of a date; month names are not needed.
# (The leading lookahead lets the regex engine skip to digits: twice as fast as the plain alternation.)
DATE = re.compile(r"(?=\d)(?<!\d)(?:(?:19|20)\d\d(?!\d)|\d{1,2}:\d\d(?!\d)|\d{1,4}[./-]\d{1,2}[./-]\d{1,4}(?!\d)"
                  r"|\d+\s*\w{1,12}\s+ago\b|\d\s*[年月日号時时분일])")
# A control: a link or button with a word or two ("Reply", "Like", "Antworten", "Ответить", "回复").
CONTROL_CHARS = 16
# An item holds at least this many characters outside links (the comment's own text).
ITEM_TEXT_CHARS = 40
# A title link: one link holding at least this share of its item's text, of at least this many characters.
TITLE_LINK_SHARE = 0.8
TITLE_CHARS = 16
# A table's rows and cells repeat with numbers in them (a ranking: "3.1-3.9", "2023"): a table's structure, no thread.
TABLE_PARTS = ("table", "thead", "tbody", "tfoot", "tr", "td", "th")
TITLE_LIST_ITEMS = 3  # ... in a list of at least this many such items,
TITLE_LIST_SHARE = 0.6  # ... that are at least this share of the list's children holding text.


@dataclass
class Shapes:
    """Per element and per text node: where the comment shape and the title-list shape are."""

    item: np.ndarray  # per element: a comment-shaped item
    item_t: np.ndarray  # per text node: inside a comment-shaped item (0/1)
    control_t: np.ndarray  # per text node: inside an item that holds a short control (0/1)
    group_t: np.ndarray  # per text node: log1p(items in the sibling run of its item), 0 outside items
    titles_t: np.ndarray  # per text node: inside a title link list (0/1)
    form_at: int  # pre-order index of the page's last <textarea> (-1: none): a reply form after the blocks


def _dates(snap: Snapshot, short_t: np.ndarray) -> np.ndarray:
    """Per text node: a short rendered text holding a date or time (one regex pass over them joined)."""
    out = np.zeros(snap.m, dtype=bool)
    idx = np.nonzero(short_t)[0]
    if idx.size == 0:
        return out
    texts = snap.texts
    joined = "\n".join(map(texts.__getitem__, idx.tolist()))
    starts = np.zeros(idx.size, dtype=np.int64)
    np.cumsum(snap.text_len[idx][:-1] + 1, out=starts[1:])
    hits = np.fromiter((m.start() for m in DATE.finditer(joined)), dtype=np.int64)
    if hits.size:
        out[idx[np.searchsorted(starts, hits, side="right") - 1]] = True
    return out


def _first_text(snap: Snapshot, shown: np.ndarray) -> np.ndarray:
    """Per element: the first shown text node of its subtree in document order (``snap.m`` when none), as a minimum
    over the subtree taken one depth level at a time from the deepest (O(n) over all levels)."""
    n, m = snap.n, snap.m
    out = np.full(n, m, dtype=np.int64)
    idx = np.nonzero(shown)[0]
    owners, at = np.unique(snap.text_owner[idx], return_index=True)  # idx is sorted: each owner's first text
    out[owners] = idx[at]
    depth = snap.depth
    order = np.argsort(-depth, kind="stable")
    levels = np.unique(depth[order], return_index=True)[1]
    parent = snap.parent
    for s, e in zip(levels[::-1].tolist(), [*levels[::-1][1:].tolist(), n], strict=True):
        nodes = order[s:e]
        nodes = nodes[parent[nodes] >= 0]
        np.minimum.at(out, parent[nodes], out[nodes])
    return out


def _sibling_groups(snap: Snapshot, class_code: np.ndarray) -> np.ndarray:
    """Per element: the index of its run of siblings with the same tag and class (parent, tag, class)."""
    classes = int(class_code.max()) + 1
    span = (int(snap.tag_code.max()) + 1) * classes  # parent, tag and class in one int64 (n * span < 2**63)
    key = (snap.parent.astype(np.int64) + 1) * span + snap.tag_code.astype(np.int64) * classes + class_code
    _, inv = np.unique(key, return_inverse=True)
    return inv.reshape(-1)


def shapes(snap: Snapshot, rendered: np.ndarray, chars: np.ndarray, link_chars: np.ndarray, in_link: np.ndarray,
           class_code: np.ndarray) -> Shapes:
    """The comment and title-list shapes of a page (``rendered``, ``chars``, ``link_chars``, ``in_link``,
    ``class_code``: the ensemble's page arrays)."""
    n, m = snap.n, snap.m
    z_t = np.zeros(m)
    if n == 0 or m == 0:
        return Shapes(np.zeros(n, dtype=bool), z_t, z_t, z_t, z_t, -1)
    shown = rendered & ~snap.text_blank
    date_el = snap.subtree_sum(snap.text_per_element(_dates(snap, shown & (snap.text_len <= SHORT_LINE_CHARS))
                                                     .astype(np.float64))) > 0
    tags = snap.tags
    control = (snap.tag_in(("a", "button")) | (snap.attr("role") == "button")) & (chars > 0) & \
        (chars <= CONTROL_CHARS)
    has_control = snap.subtree_sum(control.astype(np.float64)) > 0
    blocks = snap.subtree_sum(snap.is_block.astype(np.float64))
    group = _sibling_groups(snap, class_code)
    # A block holding another (a byline or a paragraph, not a paragraph's inline links), text of its own, a date or a
    # control, and a first line that is no heading (an article's sections start with theirs, a live blog's entries
    # with their time); two of a kind in one sibling run at least. A short first line alone (the author's name) is
    # also how a how-to's steps start: not enough (on 120 WCXB pages it made article sections items).
    first = _first_text(snap, shown)
    heading = covered(snap, snap.tag_in(("h1", "h2", "h3", "h4", "h5", "h6")))
    headed = (first < m) & heading[snap.text_owner[np.minimum(first, m - 1)]]
    maybe = snap.is_block & (date_el | has_control) & ~headed & (chars - link_chars >= ITEM_TEXT_CHARS) & \
        (blocks >= 2) & (snap.parent >= 0) & ~snap.tag_in(TABLE_PARTS)
    per_group = np.bincount(group, weights=maybe.astype(np.float64))
    item = maybe & (per_group[group] >= 2)
    owner = snap.text_owner
    item_t = covered(snap, item)[owner].astype(np.float64)
    control_t = covered(snap, item & has_control)[owner].astype(np.float64)
    sizes = cover_count(snap, np.nonzero(item)[0], weights=np.log1p(per_group[group][item]))
    titles = _title_lists(snap, chars, link_chars, in_link)
    areas = np.nonzero(tags == "textarea")[0]
    return Shapes(item, item_t, control_t, sizes[owner], covered(snap, titles)[owner].astype(np.float64),
                  int(areas[-1]) if areas.size else -1)


def _title_lists(snap: Snapshot, chars: np.ndarray, link_chars: np.ndarray, in_link: np.ndarray) -> np.ndarray:
    """Per element: a list of title links (each of at least TITLE_LIST_ITEMS children holding text is one link whose
    text is a title, TITLE_LIST_SHARE of them at least)."""
    n = snap.n
    links = snap.subtree_sum(snap.is_link.astype(np.float64))
    one = (links == 1) & (chars >= TITLE_CHARS) & (link_chars >= TITLE_LINK_SHARE * chars) & ~(in_link & ~snap.is_link)
    par = snap.parent
    has = par >= 0
    kids = np.bincount(par[has & (chars > 0)], minlength=n)[:n]
    titled = np.bincount(par[has & one], minlength=n)[:n]
    return (titled >= TITLE_LIST_ITEMS) & (titled >= TITLE_LIST_SHARE * kids)
