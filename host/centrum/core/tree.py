"""The tree and text toolkit every algorithm shares: subtree cover masks, the page's main ``<body>``, the text joiner.

A snapshot lists elements in DOM pre-order, so the subtree of ``v`` is the contiguous range
``[v, subtree_end[v])``; "which elements lie inside these subtrees" is one difference array and one prefix sum,
O(n + k) for k roots, whatever their nesting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from .flags import IN_FRAME

Roots = Sequence[int] | np.ndarray


class SnapshotView(Protocol):
    """The columns of a snapshot the toolkit reads (``centrum.core.snapshot.Snapshot`` has them): the snapshot's
    methods use this toolkit, so it names what it needs instead of importing the snapshot."""

    n: int
    m: int
    parent: np.ndarray
    subtree_end: np.ndarray
    tags: np.ndarray
    flags: np.ndarray
    attrs: dict[str, dict[int, str]]
    display: np.ndarray
    visibility: np.ndarray
    visible: np.ndarray
    block_container: np.ndarray
    breaks_before: np.ndarray
    text_owner: np.ndarray
    text_seq: np.ndarray
    texts: list[str]
    text_blank: np.ndarray
    text_len: np.ndarray
    text_disclosed: np.ndarray
    text_per_element: np.ndarray
    text_rect_offsets: np.ndarray
    text_rects: np.ndarray

    def subtree_sum(self, values: np.ndarray) -> np.ndarray: ...

    def tag_in(self, names: Sequence[str]) -> np.ndarray: ...


def _ends(tree: SnapshotView | np.ndarray) -> np.ndarray:
    return tree if isinstance(tree, np.ndarray) else tree.subtree_end


def cover_count(tree: SnapshotView | np.ndarray, roots: Roots, weights: np.ndarray | None = None) -> np.ndarray:
    """Per element: how many of ``roots`` (ids, or a bool mask over the elements) are it or its ancestors; with
    ``weights`` (one per root), the sum of their weights instead. Ids outside the tree are ignored.

    ``tree`` is a snapshot or its ``subtree_end`` array.
    """
    subtree_end = _ends(tree)
    n = subtree_end.shape[0]
    r = np.asarray(roots)
    if r.dtype == bool:
        r = np.flatnonzero(r)
    r = r.astype(np.int64, copy=False).reshape(-1)
    ok = (r >= 0) & (r < n)
    w = None if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)[ok]
    r = r[ok]
    diff = np.bincount(r, weights=w, minlength=n + 1) - np.bincount(subtree_end[r], weights=w, minlength=n + 1)
    out = np.cumsum(diff[:n])
    return out if weights is not None else out.astype(np.int64)


def covered(tree: SnapshotView | np.ndarray, roots: Roots) -> np.ndarray:
    """Bool mask of the elements inside the subtree of any of ``roots`` (ids or a bool mask)."""
    return cover_count(tree, roots) > 0


def main_body(snapshot: SnapshotView) -> int | None:
    """The page's ``<body>``: among the top document's (not a same-origin iframe's; any when all are framed), the
    one holding the largest subtree, since broken markup can leave a stray empty ``<body>`` beside the real one.
    None without any (a frameset, a non-HTML document)."""
    bodies = np.flatnonzero(snapshot.tags == "body")
    if bodies.size == 0:
        return None
    top = bodies[(snapshot.flags[bodies] & IN_FRAME) == 0]
    top = top if top.size else bodies
    return int(top[np.argmax(snapshot.subtree_end[top] - top)])


# What opens a disclosure widget a reader can click: a shown <button>, <summary>, role=button or aria-expanded element
# (WAI-ARIA Authoring Practices, "Disclosure", "Accordion", "Tabs"), except one that says it opens a popup
# (aria-haspopup: a menu, a listbox, a dialog) or that is open already. A trigger's holder (a heading around the
# button) stays small.
TRIGGER_HOLDER_MAX = 8  # elements in the subtree of the panel's preceding sibling
ACTION_TEXT_MAX = 0.5  # a panel whose text is mostly in buttons and links is a toolbar or a menu, not content
FORM_TAGS = ("input", "select", "textarea", "form")  # a panel holding a form is a dialog


def _has_word(values: dict[int, str], word: str) -> list[int]:
    return [i for i, v in values.items() if word in v.lower().split()]


def disclosure_panels(snapshot: SnapshotView) -> np.ndarray:
    """Per element: the root of a collapsed disclosure widget's panel, the part a reader opens with one click: a
    child of a ``<details>`` other than its ``<summary>``, the element a trigger's ``aria-controls`` names, a
    ``role=tabpanel``, and the element right after a small sibling that holds a trigger (see the constants above).
    The panel sits in the shown page (its parent is displayed), holds no form and is not mostly buttons and links,
    so closed dialogs, popup menus and player controls stay out. Markup only, no class or word lists, so it reads
    pages in every language the same way. O(n) plus a sort of the parent column."""
    n = snapshot.n
    panel = np.zeros(n, dtype=bool)
    if n == 0:
        return panel
    tags = snapshot.tags
    par = snapshot.parent
    has_par = par >= 0
    up = np.maximum(par, 0)
    attrs = snapshot.attrs
    trigger = (tags == "button") | (tags == "summary")
    trigger[_has_word(attrs.get("role") or {}, "button")] = True
    expanded = attrs.get("aria-expanded") or {}
    trigger[list(expanded)] = True
    trigger[[i for i, v in expanded.items() if v.strip().lower() == "true"]] = False
    popup = attrs.get("aria-haspopup") or {}
    trigger[[i for i, v in popup.items() if v.strip().lower() not in ("", "false")]] = False
    trigger &= snapshot.visible
    panel |= has_par & (tags == "details")[up] & (tags != "summary")
    named = {t for i, v in (attrs.get("aria-controls") or {}).items() if trigger[i] for t in v.split()}
    if named:
        panel[[i for i, v in (attrs.get("id") or {}).items() if v in named]] = True
    panel[_has_word(attrs.get("role") or {}, "tabpanel")] = True
    size = snapshot.subtree_end - np.arange(n)
    holds = (snapshot.subtree_sum(trigger.astype(np.float64)) > 0) & (size <= TRIGGER_HOLDER_MAX)
    # Previous element sibling: siblings are consecutive once elements are sorted by parent (stable: document order).
    order = np.argsort(par, kind="stable")
    same = par[order[1:]] == par[order[:-1]]
    panel[order[1:][same & holds[order[:-1]]]] = True
    shown = ~covered(snapshot, snapshot.display == "none") & (snapshot.visibility == "visible")
    panel &= has_par & shown[up]
    if not panel.any():
        return panel
    panel &= snapshot.subtree_sum(snapshot.tag_in(FORM_TAGS).astype(np.float64)) == 0
    action = (tags == "button") | (tags == "a")
    action[_has_word(attrs.get("role") or {}, "button")] = True
    chars = np.where(snapshot.text_blank, 0, snapshot.text_len).astype(np.float64)
    in_action = covered(snapshot, action)[snapshot.text_owner]
    total = snapshot.subtree_sum(snapshot.text_per_element(chars))
    acted = snapshot.subtree_sum(snapshot.text_per_element(chars * in_action))
    return panel & ~(acted > ACTION_TEXT_MAX * np.maximum(total, 1))


def is_block_display(display: str) -> bool:
    """A CSS ``display`` value that starts a new line of text."""
    return not display.startswith("inline") and display not in ("contents", "ruby", "none")


def text_of_mask(snapshot: SnapshotView, keep: np.ndarray, separator: str = "\n", hidden: bool = False) -> str:
    """Rendered text of the text nodes with ``keep`` set, in document order: the one text joiner.

    Blank text nodes are left out, and so are those without rectangles (not rendered) unless ``hidden`` or inside
    a collapsed disclosure panel (``Snapshot.text_disclosed``: a reader gets that text with one click). Lines
    break where the block container changes or a block element or ``<br>`` starts or ends between two text nodes;
    within a line, neighbours are joined with a space unless they touch on the rendered line (``<b>Hel</b>lo``),
    since the collector drops whitespace-only text nodes. Separators are computed vectorized; the join is C-level
    split/join.
    """
    if snapshot.m == 0:
        return ""
    has_rect = np.diff(snapshot.text_rect_offsets) > 0
    idx = np.nonzero(keep & (has_rect | hidden | snapshot.text_disclosed) & ~snapshot.text_blank)[0]
    if idx.size == 0:
        return ""
    container = snapshot.block_container[snapshot.text_owner[idx]]
    seq = snapshot.text_seq[idx]
    brk = np.zeros(idx.size, dtype=bool)
    breaks = snapshot.breaks_before
    brk[1:] = (container[1:] != container[:-1]) | (breaks[seq[1:]] > breaks[seq[:-1]])
    glue = np.zeros(idx.size, dtype=bool)
    glue[1:] = _touching(snapshot, idx, has_rect)
    parts = list(map(snapshot.texts.__getitem__, idx.tolist()))
    for k in np.nonzero(brk)[0].tolist():
        parts[k] = "\x02" + parts[k]  # \x02: a line break marker that no whitespace collapse touches
    # Glued neighbours (touching on their line, no whitespace at the seam) join without a space. Separators and
    # texts interleave in one list, joined at C speed.
    pieces = [" "] * (2 * idx.size)
    pieces[0] = ""
    pieces[1::2] = parts
    for k in np.nonzero(glue & ~brk)[0].tolist():
        if not parts[k][:1].isspace() and not parts[k - 1][-1:].isspace():
            pieces[2 * k] = ""
    joined = "".join(pieces)
    del pieces
    # Newlines inside the texts themselves also end lines.
    joined = joined.replace("\x02", separator) if separator else joined.replace("\x02", " ")
    lines = joined.split(separator) if separator else [joined]
    return separator.join(" ".join(line.split()) for line in lines if line.strip())


def _touching(snapshot: SnapshotView, idx: np.ndarray, has_rect: np.ndarray) -> np.ndarray:
    """For each consecutive pair of text nodes ``idx``: the last rectangle of the first touches the first rectangle
    of the second on the same rendered line (never for a node without rectangles)."""
    offs = snapshot.text_rect_offsets
    rects = snapshot.text_rects
    if rects.shape[0] == 0:
        return np.zeros(idx.size - 1, dtype=bool)
    both = has_rect[idx[1:]] & has_rect[idx[:-1]]
    last = rects[np.clip(offs[idx[:-1] + 1] - 1, 0, rects.shape[0] - 1)]
    first = rects[np.clip(offs[idx[1:]], 0, rects.shape[0] - 1)]
    same_line = np.abs(first[:, 1] - last[:, 1]) < 0.5 * np.maximum(last[:, 3], 1)
    gap = np.minimum(np.abs(first[:, 0] - (last[:, 0] + last[:, 2])), np.abs((first[:, 0] + first[:, 2]) - last[:, 0]))
    return both & same_line & (gap <= 1.0)
