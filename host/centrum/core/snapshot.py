"""Snapshot protocol v1: parse and validate a collector snapshot into numpy arrays.

The collector (``extension/src/collect.js``) sends a *columnar* JSON object (see ``host/PROTOCOL.md`` and
``snapshot.schema.json``). Elements are in DOM pre-order, so an element's index is its node id, every parent
index is smaller than its child's, and the subtree of ``i`` is the contiguous range ``[i, end[i])``. That last
property is what lets every algorithm aggregate over subtrees with prefix sums instead of per-node loops.

Every malformed field raises :class:`SnapshotError` naming the field (``elements.parent[17]``), so the host can
answer the extension with a precise message instead of dying.
"""

from __future__ import annotations

import binascii
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from . import limits, tree

# Bits of ``elements.flags`` (PROTOCOL.md, "Element flags"), re-exported for the algorithms.
from .flags import FIXED, IMAGE, IN_FRAME, LINK, OPAQUE_FRAME, SHADOW_HOST, STICKY, VISIBLE  # noqa: F401

PROTOCOL_VERSION = 1

# Hard limits (PROTOCOL.md "Limits"): a snapshot beyond these is refused, on the array length before any column is
# converted, with a clear error instead of exhausting memory.
MAX_ELEMENTS = limits.ELEMENTS
MAX_TEXT_NODES = limits.TEXT_NODES


class SnapshotError(ValueError):
    """A snapshot that does not follow protocol v1. ``field`` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    lang: str
    dir: str
    viewport: tuple[float, float]  # (w0, h0), CSS px
    document: tuple[float, float]  # (w1, h1), CSS px
    scroll: tuple[float, float]
    dpr: float
    collector: str
    timing: dict[str, float] = field(default_factory=dict)
    stylesheets: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(eq=False)
class Snapshot:
    """A validated snapshot. Arrays are indexed by element id (``n``) or text-node id (``m``)."""

    page: Page
    parent: np.ndarray  # int64 (n,), -1 for the root
    tag_names: list[str]  # enum table; lower-case tag names
    tag_code: np.ndarray  # int64 (n,) index into tag_names
    box: np.ndarray  # float64 (n, 4): x, y, w, h in document coordinates
    display: np.ndarray  # str (n,) computed display ("block", "inline", "none", ...)
    position: np.ndarray  # str (n,) computed position
    visibility: np.ndarray  # str (n,) computed visibility
    opacity: np.ndarray  # float64 (n,) computed opacity of the element itself
    font_size: np.ndarray  # float64 (n,) px
    flags: np.ndarray  # int64 (n,) bit set, see module constants
    attrs: dict[str, dict[int, str]]  # attribute name -> {node id: value}
    text_owner: np.ndarray  # int64 (m,) element that owns the text node
    text_seq: np.ndarray  # int64 (m,) number of elements before the text node in document order
    texts: list[str]  # (m,) text content
    text_rect_offsets: np.ndarray  # int64 (m+1,) CSR offsets into text_rects
    text_rects: np.ndarray  # float64 (k, 4) rendered line rectangles, document coordinates
    source: str | None = None  # collector serialization with data-cx node ids
    # The texts of the page's ld+json scripts, sent by a press that does not collect the source (PROTOCOL.md
    # "json_ld"); the source holds the same texts when it is sent.
    json_ld: list[str] | None = None
    # The collector's judgement of what a reader does not see (PROTOCOL.md "unseen"; None from collectors before
    # 1.4.0): ids of elements whose subtree shows nothing, and of elements whose own text draws nothing. Read by
    # the outputs only (centrum.output.outputs), never by an algorithm, so answers do not depend on it.
    unseen_subtree: np.ndarray | None = None  # int64, ascending
    unseen_text: np.ndarray | None = None  # int64, ascending

    # ---- sizes -------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self.parent.shape[0])

    @property
    def m(self) -> int:
        return len(self.texts)

    # ---- element columns -----------------------------------------------------------------------
    @cached_property
    def tags(self) -> np.ndarray:
        """Tag name per element as a numpy str array, so ``snap.tags == "a"`` is vectorized."""
        names = np.array(self.tag_names + [""], dtype=object)
        return names[self.tag_code].astype(str) if self.n else np.zeros(0, dtype=str)

    def tag_in(self, names: Iterable[str]) -> np.ndarray:
        """Per element: its tag is one of ``names`` (lower-case), as ``np.isin(self.tags, names)`` gives it, by a
        lookup over the page's few distinct tag names instead of a string comparison per element."""
        table = np.isin(np.array([*self.tag_names, ""], dtype=str), list(names))
        return table[self.tag_code] if self.n else np.zeros(0, dtype=bool)

    @property
    def visible(self) -> np.ndarray:
        return (self.flags & VISIBLE) != 0

    @property
    def is_link(self) -> np.ndarray:
        return (self.flags & LINK) != 0

    @property
    def is_image(self) -> np.ndarray:
        return (self.flags & IMAGE) != 0

    @property
    def is_fixed(self) -> np.ndarray:
        return (self.flags & FIXED) != 0

    @property
    def area(self) -> np.ndarray:
        return self.box[:, 2] * self.box[:, 3]

    def attr(self, name: str) -> np.ndarray:
        """Values of attribute ``name`` per element ('' where absent), as an object array."""
        out = np.full(self.n, "", dtype=object)
        values = self.attrs.get(name)
        if values:
            idx = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
            out[idx] = list(values.values())
        return out

    # ---- tree structure (all O(n) or O(n log n), vectorized) --------------------------------------
    @cached_property
    def depth(self) -> np.ndarray:
        """Depth of each element (root = 0), by pointer doubling: O(n log n) vectorized."""
        # Doubling on (jump, steps): steps[i] = distance to jump[i].
        jump = self.parent.copy()
        steps = (jump >= 0).astype(np.int64)
        while True:
            has = jump >= 0
            nxt = np.where(has, jump, 0)
            further = has & (jump[nxt] >= 0)
            if not further.any():
                break
            steps = np.where(further, steps + steps[nxt], steps)
            jump = np.where(further, jump[nxt], jump)
        return steps

    @cached_property
    def subtree_end(self) -> np.ndarray:
        """``end[i]``: the subtree of ``i`` is ``[i, end[i])`` in pre-order."""
        n = self.n
        size = np.ones(n, dtype=np.int64)
        if n == 0:
            return size
        depth = self.depth
        order = np.argsort(-depth, kind="stable")
        d_sorted = depth[order]
        # Process one depth level at a time, deepest first: each level adds into its parents.
        bounds = np.flatnonzero(np.diff(d_sorted)) + 1
        for chunk in np.split(order, bounds):
            p = self.parent[chunk]
            ok = p >= 0
            np.add.at(size, p[ok], size[chunk[ok]])
        return np.arange(n, dtype=np.int64) + size

    @cached_property
    def children_offsets(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR children lists: children of ``i`` are ``kids[off[i]:off[i+1]]`` in document order."""
        n = self.n
        p = self.parent
        has = p >= 0
        kids = np.nonzero(has)[0]
        order = np.argsort(p[kids], kind="stable")
        kids = kids[order]
        counts = np.bincount(p[has], minlength=n) if n else np.zeros(0, dtype=np.int64)
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=off[1:])
        return off, kids

    def children(self, i: int) -> np.ndarray:
        off, kids = self.children_offsets
        return kids[off[i] : off[i + 1]]

    @property
    def n_children(self) -> np.ndarray:
        off, _ = self.children_offsets
        return np.diff(off)

    def subtree_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of a per-element value over each element's subtree (itself included), O(n)."""
        c = np.zeros(self.n + 1, dtype=np.float64)
        np.cumsum(values, out=c[1:])
        return c[self.subtree_end] - c[: self.n]

    def text_per_element(self, values: np.ndarray) -> np.ndarray:
        """Aggregate a per-text-node value onto its owner element."""
        return np.bincount(self.text_owner, weights=values, minlength=self.n)[: self.n]

    def is_ancestor(self, a: int, d: int) -> bool:
        """True when ``a`` is ``d`` or an ancestor of ``d``."""
        return a <= d < int(self.subtree_end[a])

    def ancestors(self, i: int) -> list[int]:
        """``i`` and its ancestors up to the root (O(depth))."""
        out = []
        while i >= 0:
            out.append(i)
            i = int(self.parent[i])
        return out

    # ---- text nodes ---------------------------------------------------------------------------
    @cached_property
    def text_box(self) -> np.ndarray:
        """Union bounding box (x, y, w, h) of each text node's rectangles; zeros when it has none."""
        m = self.m
        out = np.zeros((m, 4), dtype=np.float64)
        if m == 0 or self.text_rects.shape[0] == 0:
            return out
        r = self.text_rects
        x0, y0 = r[:, 0], r[:, 1]
        x1, y1 = r[:, 0] + r[:, 2], r[:, 1] + r[:, 3]
        counts = np.diff(self.text_rect_offsets)
        nz = np.nonzero(counts)[0]
        starts = self.text_rect_offsets[nz]
        out[nz, 0] = np.minimum.reduceat(x0, starts)
        out[nz, 1] = np.minimum.reduceat(y0, starts)
        out[nz, 2] = np.maximum.reduceat(x1, starts) - out[nz, 0]
        out[nz, 3] = np.maximum.reduceat(y1, starts) - out[nz, 1]
        return out

    @cached_property
    def text_area(self) -> np.ndarray:
        """Rendered area of each text node: sum of its line rectangles."""
        a = self.text_rects[:, 2] * self.text_rects[:, 3]
        c = np.zeros(a.shape[0] + 1)
        np.cumsum(a, out=c[1:])
        return c[self.text_rect_offsets[1:]] - c[self.text_rect_offsets[:-1]]

    @cached_property
    def text_words(self) -> np.ndarray:
        """Script-fair token count of each text node (``centrum.core.textmetrics``), computed once per snapshot."""
        from .textmetrics import count_words_many

        return count_words_many(self.texts)

    @cached_property
    def text_len(self) -> np.ndarray:
        return np.fromiter(map(len, self.texts), dtype=np.int64, count=self.m)

    @cached_property
    def is_block(self) -> np.ndarray:
        """Block-level display per element, decided once per distinct display value (a handful per page)."""
        values, inverse = np.unique(self.display, return_inverse=True)
        if self.n == 0:
            return np.zeros(0, dtype=bool)
        return np.array([tree.is_block_display(str(v)) for v in values], dtype=bool)[inverse.reshape(-1)]

    @cached_property
    def block_container(self) -> np.ndarray:
        """Nearest block-level ancestor (itself included) of each element; -1 above the root. Pointer doubling."""
        step = np.where(self.is_block, np.arange(self.n), self.parent)
        while True:
            ok = step >= 0
            nxt = step.copy()
            nxt[ok] = step[step[ok]]
            if np.array_equal(nxt, step):
                return step
            step = nxt

    @cached_property
    def breaks_before(self) -> np.ndarray:
        """Prefix count of elements that start a new line (block-level or ``<br>``), indexed by pre-order."""
        starts = self.is_block | (self.tags == "br")
        c = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(starts, out=c[1:])
        return c

    @cached_property
    def text_blank(self) -> np.ndarray:
        """Per text node: empty or whitespace only (never part of an extracted text; ``not t.strip()``): the one
        blank test of every algorithm, by C-level maps (no Python frame per text node)."""
        return np.fromiter(map(str.isspace, self.texts), dtype=bool, count=self.m) | (self.text_len == 0)

    @cached_property
    def disclosure_panels(self) -> np.ndarray:
        """Per element: the root of a disclosure widget's panel (:func:`centrum.core.tree.disclosure_panels`)."""
        return tree.disclosure_panels(self)

    @cached_property
    def text_disclosed(self) -> np.ndarray:
        """Per text node: not rendered, inside a collapsed disclosure panel
        (:func:`centrum.core.tree.disclosure_panels`,
        or directly in a ``<details>``). The text joiner keeps it: a reader opens the panel with one click, and
        product pages keep their description and specifications there."""
        if self.m == 0:
            return np.zeros(0, dtype=bool)
        inside = tree.covered(self, self.disclosure_panels) | (self.tags == "details")
        has_rect = np.diff(self.text_rect_offsets) > 0
        return inside[self.text_owner] & ~has_rect & ~self.text_blank

    def disclosed_in(self, nodes: list[int] | np.ndarray) -> list[int]:
        """The disclosure panels under ``nodes`` that hold disclosed text, and the ``<details>`` there that hold any
        text, in document order: the answer's text includes theirs, so the reader view shows them open. (Chromium
        lays out a closed ``<details>``'s content, so its text has rectangles and counts as rendered anyway.) So are
        the panels the collector judged unseen (collapsed by their styles) that hold text."""
        if self.m == 0 or len(nodes) == 0:
            return []
        details = self.tags == "details"
        # A panel collapsed by its styles (height 0 with overflow hidden: the collector's ``unseen`` judgement) holds
        # rendered text, yet a reader opens it with one click as well.
        collapsed = np.zeros(self.n, dtype=bool)
        if self.unseen_subtree is not None:
            collapsed[self.unseen_subtree] = True
            collapsed &= self.disclosure_panels
        if not details.any() and not self.text_disclosed.any() and not collapsed.any():
            return []
        has = self.subtree_sum(self.text_per_element(self.text_disclosed.astype(np.float64))) > 0
        has_any = self.subtree_sum(self.text_per_element((~self.text_blank).astype(np.float64))) > 0
        shown = (self.disclosure_panels & has) | ((details | collapsed) & has_any)
        return [int(i) for i in np.flatnonzero(shown & tree.covered(self, nodes))]

    def text_of(self, nodes: list[int] | np.ndarray, separator: str = "\n") -> str:
        """Rendered text under the given elements in document order (:func:`centrum.core.tree.text_of_mask`)."""
        if self.m == 0 or len(nodes) == 0:
            return ""
        return tree.text_of_mask(self, tree.covered(self, nodes)[self.text_owner], separator)

    def text_of_mask(self, keep: np.ndarray, separator: str = "\n") -> str:
        """Rendered text of the text nodes with ``keep`` set (:func:`centrum.core.tree.text_of_mask`)."""
        return tree.text_of_mask(self, keep, separator)


# ---- parsing --------------------------------------------------------------------------------------


def _require(obj: dict[str, Any], key: str, where: str) -> Any:
    if not isinstance(obj, dict):
        raise SnapshotError(where, f"expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise SnapshotError(f"{where}.{key}" if where else key, "missing")
    return obj[key]


# Packed columns (PROTOCOL.md "Packed columns"): at most five varint bytes per value, so that a decoded number and
# the running sum of a delta column stay exact in int64.
_VARINT_BYTES = 5
_SCALES = (1, 10, 1000)


def _packed(value: dict[str, Any], name: str) -> tuple[np.ndarray, int]:
    """Decode a packed column ``{"varint": base64, "count": n, "scale"?: s, "delta"?: true}`` into its integers
    (before the division by ``scale``) and the scale."""
    unknown = set(value) - {"varint", "count", "scale", "delta"}
    if unknown:
        raise SnapshotError(name, f"unknown packed-column field(s) {sorted(unknown)[:5]}")
    data, count = value.get("varint"), value.get("count")
    scale, delta = value.get("scale", 1), value.get("delta", False)
    if not isinstance(data, str):
        raise SnapshotError(f"{name}.varint", "expected a base64 string")
    if type(count) is not int or count < 0:
        raise SnapshotError(f"{name}.count", f"expected a non-negative integer, got {count!r}")
    if type(scale) is not int or scale not in _SCALES:
        raise SnapshotError(f"{name}.scale", f"expected one of {list(_SCALES)}, got {scale!r}")
    if not isinstance(delta, bool):
        raise SnapshotError(f"{name}.delta", "expected true or false")
    try:
        raw = np.frombuffer(binascii.a2b_base64(data.encode("ascii"), strict_mode=True), dtype=np.uint8)
    except (binascii.Error, UnicodeEncodeError, ValueError) as e:
        raise SnapshotError(f"{name}.varint", f"not base64: {e}") from None
    ints = _varints(raw, name)
    if ints.shape[0] != count:
        raise SnapshotError(name, f"count says {count} values, the data holds {ints.shape[0]}")
    return (np.cumsum(ints) if delta else ints), scale


def _varints(raw: np.ndarray, name: str) -> np.ndarray:
    """Zigzag LEB128 varints to int64, vectorized over the values (not the bytes): a byte below 128 ends a value,
    each byte adds 7 bits; the first byte of every value is gathered, then the second of those that have one, and so
    on (at most :data:`_VARINT_BYTES` passes, each over fewer values). A per-byte shift array and its reduction cost
    several int64 temporaries the size of the data, which grew faster than the page (cache misses)."""
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    if raw[-1] >= 128:
        raise SnapshotError(f"{name}.varint", "the last value is cut off")
    end = np.flatnonzero(raw < 128)
    start = np.empty_like(end)
    start[0] = 0
    start[1:] = end[:-1] + 1
    length = end - start + 1
    longest = int(length.max())
    if longest > _VARINT_BYTES:
        k = int(np.argmax(length > _VARINT_BYTES))
        raise SnapshotError(f"{name}[{k}]", f"a value longer than {_VARINT_BYTES} bytes")
    low = raw & 127
    u = low[start].astype(np.int64)
    for j in range(1, longest):
        more = np.flatnonzero(length > j)
        u[more] |= low[start[more] + j].astype(np.int64) << (7 * j)
    return (u >> 1) ^ -(u & 1)


# Scale and delta of each packed column, as collect.js packs them.
PACKED_COLUMNS: dict[str, dict[str, tuple[int, bool]]] = {
    "elements": {"parent": (1, True), "tag": (1, False), "box": (10, False), "display": (1, False),
                 "position": (1, False), "visibility": (1, False), "opacity": (1000, False),
                 "font_size": (10, False), "flags": (1, False)},
    "attrs": {"node": (1, True)},
    "text": {"owner": (1, True), "seq": (1, True), "rect_offsets": (1, True), "rects": (10, False)},
    "unseen": {"subtree": (1, True), "text": (1, True)},
}


def pack_column(values: Any, scale: int = 1, delta: bool = False) -> dict[str, Any]:
    """The packed form of a number list (the collector's encoder, for tools and tests)."""
    ints = np.rint(np.asarray(values, dtype=np.float64) * scale).astype(np.int64)
    if delta and ints.size:
        ints = np.diff(ints, prepend=0)
    zig = (ints << 1) ^ (ints >> 63)
    out = bytearray()
    for z in zig.tolist():
        while z >= 128:
            out.append((z & 127) | 128)
            z >>= 7
        out.append(z)
    column: dict[str, Any] = {"varint": binascii.b2a_base64(bytes(out), newline=False).decode("ascii"),
                              "count": int(ints.size)}
    if scale != 1:
        column["scale"] = scale
    if delta:
        column["delta"] = True
    return column


def pack_snapshot(raw: dict[str, Any]) -> dict[str, Any]:
    """A decoded snapshot with its number-list columns packed (already packed ones are kept)."""
    out = dict(raw)
    for section, columns in PACKED_COLUMNS.items():
        if not isinstance(raw.get(section), dict):
            continue
        part = dict(raw[section])
        for name, (scale, delta) in columns.items():
            if isinstance(part.get(name), list):
                part[name] = pack_column(part[name], scale, delta)
        out[section] = part
    return out


def _num_array(value: Any, name: str, dtype: type, length: int | None = None) -> np.ndarray:
    if isinstance(value, dict):
        ints, scale = _packed(value, name)
        if length is not None and ints.shape[0] != length:
            raise SnapshotError(name, f"expected {length} entries, got {ints.shape[0]}")
        if dtype is int:
            if scale != 1:
                raise SnapshotError(f"{name}.scale", "an integer column is not scaled")
            return ints
        return ints / scale if scale != 1 else ints.astype(np.float64)
    if not isinstance(value, list):
        raise SnapshotError(name, f"expected an array, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise SnapshotError(name, f"expected {length} entries, got {len(value)}")
    try:
        # Let numpy infer the type first: asking for float64 directly would accept "12" and true as numbers.
        inferred = np.asarray(value)
        # set(map(type)) runs at C speed; it catches a bool that numpy would silently widen among ints.
        if value and (inferred.dtype.kind not in "iuf" or bool in set(map(type, value))):
            raise TypeError
        arr = inferred.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        for k, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise SnapshotError(f"{name}[{k}]", f"expected a number, got {type(v).__name__}") from None
        raise SnapshotError(name, "expected numbers") from None
    if arr.ndim != 1:
        raise SnapshotError(name, "expected a flat array of numbers")
    bad = ~np.isfinite(arr)
    if bad.any():
        k = int(np.argmax(bad))
        raise SnapshotError(f"{name}[{k}]", f"not a finite number ({value[k]!r})")
    if dtype is int:
        if (arr != np.round(arr)).any():
            k = int(np.argmax(arr != np.round(arr)))
            raise SnapshotError(f"{name}[{k}]", f"expected an integer, got {value[k]!r}")
        huge = np.abs(arr) > 2**53  # beyond exact float integers; casting would wrap silently
        if huge.any():
            k = int(np.argmax(huge))
            raise SnapshotError(f"{name}[{k}]", f"integer out of range: {value[k]!r}")
        return arr.astype(np.int64)
    return arr


def _str_list(value: Any, name: str, length: int | None = None) -> list[str]:
    if not isinstance(value, list):
        raise SnapshotError(name, f"expected an array, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise SnapshotError(name, f"expected {length} entries, got {len(value)}")
    if set(map(type, value)) <= {str}:  # C speed; the loop below only names the first bad entry
        return value
    for k, v in enumerate(value):
        if not isinstance(v, str):
            raise SnapshotError(f"{name}[{k}]", f"expected a string, got {type(v).__name__}")
    return value


def _enum_column(codes: np.ndarray, table: list[str], name: str) -> np.ndarray:
    if codes.size and (codes.min() < 0 or codes.max() >= len(table)):
        k = int(np.argmax((codes < 0) | (codes >= len(table))))
        raise SnapshotError(f"{name}[{k}]", f"enum index {int(codes[k])} outside table of {len(table)}")
    if not table:
        return np.zeros(codes.shape[0], dtype=str)
    return np.array(table, dtype=str)[codes]


def _pair(value: Any, name: str) -> tuple[float, float]:
    if not isinstance(value, list):
        raise SnapshotError(name, f"expected an array, got {type(value).__name__}")
    arr = _num_array(value, name, float, 2)
    return float(arr[0]), float(arr[1])


def _parse_page(raw: Any) -> Page:
    if not isinstance(raw, dict):
        raise SnapshotError("page", "expected an object")
    viewport = _pair(_require(raw, "viewport", "page"), "page.viewport")
    if viewport[0] <= 0 or viewport[1] <= 0:
        raise SnapshotError("page.viewport", f"must be positive, got {list(viewport)}")
    document = _pair(_require(raw, "document", "page"), "page.document")
    if document[0] < 0 or document[1] < 0:
        raise SnapshotError("page.document", f"must not be negative, got {list(document)}")
    strings = {}
    for key in ("url", "title", "lang", "dir", "collector"):
        v = raw.get(key, "")
        if not isinstance(v, str):
            raise SnapshotError(f"page.{key}", f"expected a string, got {type(v).__name__}")
        strings[key] = v
    scroll = _pair(raw.get("scroll", [0, 0]), "page.scroll")
    dpr = raw.get("dpr", 1)
    if isinstance(dpr, bool) or not isinstance(dpr, int | float) or not math.isfinite(dpr) or dpr <= 0:
        raise SnapshotError("page.dpr", f"expected a positive number, got {dpr!r}")
    timing = _finite_numbers(raw.get("timing", {}), "page.timing")
    stylesheets = _finite_numbers(raw.get("stylesheets", {}), "page.stylesheets")
    warnings = raw.get("warnings", [])
    warnings = tuple(_str_list(warnings, "page.warnings"))
    return Page(
        url=strings["url"],
        title=strings["title"],
        lang=strings["lang"],
        dir=strings["dir"] or "ltr",
        viewport=viewport,
        document=document,
        scroll=scroll,
        dpr=float(dpr),
        collector=strings["collector"],
        timing=timing,
        stylesheets={k: int(v) for k, v in stylesheets.items()},
        warnings=warnings,
    )


def _finite_numbers(value: Any, name: str) -> dict[str, float]:
    """An object's number-valued entries (others are ignored: informational fields); NaN, infinities and numbers
    beyond float (1e400 decodes to inf, a 400-digit integer overflows) name their field."""
    if not isinstance(value, dict):
        raise SnapshotError(name, "expected an object")
    out: dict[str, float] = {}
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            continue
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            raise SnapshotError(f"{name}.{k}", f"not a finite number ({str(v)[:40]})")
        out[str(k)] = f
    return out


def parse_snapshot(raw: Any) -> Snapshot:
    """Validate a decoded snapshot object and return a :class:`Snapshot` (raises :class:`SnapshotError`)."""
    if not isinstance(raw, dict):
        raise SnapshotError("snapshot", f"expected an object, got {type(raw).__name__}")
    version = raw.get("protocol")
    if version != PROTOCOL_VERSION:
        raise SnapshotError("protocol", f"unsupported protocol version {version!r} (this host speaks 1)")
    _check_sizes(raw)
    page = _parse_page(_require(raw, "page", ""))
    enums = _require(raw, "enums", "")
    if not isinstance(enums, dict):
        raise SnapshotError("enums", "expected an object")
    tables = {k: _str_list(_require(enums, k, "enums"), f"enums.{k}") for k in
              ("tag", "display", "position", "visibility")}
    columns = _parse_elements(_require(raw, "elements", ""), tables)
    n = columns["parent"].shape[0]
    attrs = _parse_attrs(raw.get("attrs", {"node": [], "name": [], "value": []}), n)
    text = _parse_text(raw.get("text", {"owner": [], "seq": [], "text": [], "rect_offsets": [0], "rects": []}), n)
    source = raw.get("source")
    if source is not None and not isinstance(source, str):
        raise SnapshotError("source", f"expected a string, got {type(source).__name__}")
    unseen = _parse_unseen(raw.get("unseen"), n)
    return Snapshot(page=page, tag_names=[t.lower() for t in tables["tag"]], attrs=attrs, source=source,
                    json_ld=_parse_json_ld(raw.get("json_ld")), **columns, **text, **unseen)


def _parse_json_ld(value: Any) -> list[str] | None:
    """The optional ``json_ld`` list: strings, at most ``json_ld_scripts`` of them and ``json_ld_chars`` characters in
    all (PROTOCOL.md "Limits")."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise SnapshotError("json_ld", "expected a list of strings")
    if len(value) > limits.JSON_LD_SCRIPTS:  # counted before any item is looked at
        raise SnapshotError("json_ld", f"{len(value)} scripts exceed the limit json_ld_scripts "
                                       f"({limits.JSON_LD_SCRIPTS})")
    if not all(isinstance(v, str) for v in value):
        raise SnapshotError("json_ld", "expected a list of strings")
    chars = sum(len(v) for v in value)
    if chars > limits.JSON_LD_CHARS:
        raise SnapshotError("json_ld", f"{chars} characters exceed the limit json_ld_chars ({limits.JSON_LD_CHARS})")
    return value


def _check_sizes(raw: dict[str, Any]) -> None:
    """The element and text-node limits, on the array length (or packed count) before any column is converted
    (every other column's length is checked against these)."""
    for section, column, limit, what in (("elements", "parent", MAX_ELEMENTS, "elements"),
                                         ("text", "owner", MAX_TEXT_NODES, "text nodes")):
        part = raw.get(section)
        values = part.get(column) if isinstance(part, dict) else None
        size = len(values) if isinstance(values, list) else values.get("count") if isinstance(values, dict) else None
        if type(size) is int and size > limit:
            raise SnapshotError(f"{section}.{column}", f"{size} {what} exceed the limit of {limit}")


def _parse_parent(el: dict[str, Any]) -> np.ndarray:
    parent = _num_array(_require(el, "parent", "elements"), "elements.parent", int)
    n = parent.shape[0]
    if n:
        if parent[0] != -1:
            raise SnapshotError("elements.parent[0]", "the root must have parent -1")
        idx = np.arange(n)
        bad = (parent[1:] < 0) | (parent[1:] >= idx[1:])
        if bad.any():
            k = int(np.argmax(bad)) + 1
            raise SnapshotError(
                f"elements.parent[{k}]",
                f"parent {int(parent[k])} must be an earlier element (pre-order, no cycles, one root)",
            )
    return parent


def _first_bad(bad: np.ndarray, name: str, message: str) -> None:
    if bad.any():
        k = int(np.argmax(bad))
        raise SnapshotError(f"{name}[{k}]", message.format(k=k))


def _parse_elements(el: Any, tables: dict[str, list[str]]) -> dict[str, np.ndarray]:
    if not isinstance(el, dict):
        raise SnapshotError("elements", "expected an object")
    parent = _parse_parent(el)
    n = parent.shape[0]

    def col(name: str, kind: type) -> np.ndarray:
        return _num_array(_require(el, name, "elements"), f"elements.{name}", kind, n)

    tag_code = col("tag", int)
    _enum_column(tag_code, tables["tag"], "elements.tag")
    display = _enum_column(col("display", int), tables["display"], "elements.display")
    position = _enum_column(col("position", int), tables["position"], "elements.position")
    visibility = _enum_column(col("visibility", int), tables["visibility"], "elements.visibility")
    box = _num_array(_require(el, "box", "elements"), "elements.box", float, 4 * n).reshape(n, 4)
    neg = (box[:, 2] < 0) | (box[:, 3] < 0)
    if neg.any():
        k = int(np.argmax(neg))
        raise SnapshotError(f"elements.box[{k}]", f"negative width or height {box[k].tolist()}")
    opacity = col("opacity", float)
    if ((opacity < 0) | (opacity > 1)).any():
        k = int(np.argmax((opacity < 0) | (opacity > 1)))
        raise SnapshotError(f"elements.opacity[{k}]", f"must be within [0, 1], got {opacity[k]}")
    font_size = col("font_size", float)
    _first_bad(font_size < 0, "elements.font_size", "must not be negative")
    flags = col("flags", int)
    _first_bad(flags < 0, "elements.flags", "must not be negative")
    return {"parent": parent, "tag_code": tag_code, "box": box, "display": display, "position": position,
            "visibility": visibility, "opacity": opacity, "font_size": font_size, "flags": flags}


def _parse_attrs(raw_attrs: Any, n: int) -> dict[str, dict[int, str]]:
    if not isinstance(raw_attrs, dict):
        raise SnapshotError("attrs", "expected an object")
    a_node = _num_array(_require(raw_attrs, "node", "attrs"), "attrs.node", int)
    a_name = _str_list(_require(raw_attrs, "name", "attrs"), "attrs.name", a_node.shape[0])
    a_value = _str_list(_require(raw_attrs, "value", "attrs"), "attrs.value", a_node.shape[0])
    if a_node.size and (a_node.min() < 0 or a_node.max() >= n):
        k = int(np.argmax((a_node < 0) | (a_node >= n)))
        raise SnapshotError(f"attrs.node[{k}]", f"element {int(a_node[k])} does not exist (n={n})")
    # Grouped by lower-cased name in order of first appearance, each group in attribute order: the dicts (keys, their
    # order, a repeated attribute's last value) are those of one loop over the attributes, built at C speed.
    lowered: dict[str, int] = {}
    code_of = {nm: lowered.setdefault(nm.lower(), len(lowered)) for nm in dict.fromkeys(a_name)}
    codes = np.fromiter(map(code_of.__getitem__, a_name), dtype=np.int64, count=len(a_name))
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(lowered) + 1))
    nodes = a_node[order].tolist()
    values = np.array(a_value, dtype=object)[order].tolist() if a_value else []
    return {nm: dict(zip(nodes[bounds[c]:bounds[c + 1]], values[bounds[c]:bounds[c + 1]], strict=True))
            for nm, c in lowered.items()}


def later_unseen(raw: Any, n: int) -> dict[str, np.ndarray | None]:
    """The ``unseen`` section of a later full collection of a page whose snapshot (``n`` elements) was collected
    without it (the press profile, extension/src/pack.js), as ``unseen_subtree`` and ``unseen_text``: its ids below
    ``n``. The page's elements keep their ids in the later walk (pre-order; what the view added since, its
    <centrum-ui> host, comes after them)."""
    parts = _parse_unseen(raw, MAX_ELEMENTS)
    return {k: v[v < n] if v is not None else None for k, v in parts.items()}


def _parse_unseen(raw: Any, n: int) -> dict[str, np.ndarray | None]:
    """The optional ``unseen`` section: two lists of element ids (absent: both None)."""
    if raw is None:
        return {"unseen_subtree": None, "unseen_text": None}
    if not isinstance(raw, dict):
        raise SnapshotError("unseen", "expected an object")
    out: dict[str, np.ndarray | None] = {}
    for key in ("subtree", "text"):
        ids = _num_array(_require(raw, key, "unseen"), f"unseen.{key}", int)
        if ids.shape[0] > n:
            raise SnapshotError(f"unseen.{key}", f"{ids.shape[0]} ids for {n} elements")
        _first_bad((ids < 0) | (ids >= n), f"unseen.{key}", f"not an element id (n={n})")
        out[f"unseen_{key}"] = ids
    return out


def _parse_text(tx: Any, n: int) -> dict[str, Any]:
    if not isinstance(tx, dict):
        raise SnapshotError("text", "expected an object")
    owner = _num_array(_require(tx, "owner", "text"), "text.owner", int)
    m = owner.shape[0]
    if m and (owner.min() < 0 or owner.max() >= n):
        k = int(np.argmax((owner < 0) | (owner >= n)))
        raise SnapshotError(f"text.owner[{k}]", f"element {int(owner[k])} does not exist (n={n})")
    seq = _num_array(_require(tx, "seq", "text"), "text.seq", int, m)
    if m and ((seq <= owner) | (seq > n)).any():
        k = int(np.argmax((seq <= owner) | (seq > n)))
        raise SnapshotError(f"text.seq[{k}]", f"{int(seq[k])} must be after its owner {int(owner[k])}")
    texts = _str_list(_require(tx, "text", "text"), "text.text", m)
    offsets = _num_array(_require(tx, "rect_offsets", "text"), "text.rect_offsets", int, m + 1)
    if offsets[0] != 0 or (np.diff(offsets) < 0).any():
        raise SnapshotError("text.rect_offsets", "must start at 0 and never decrease")
    rects_flat = _num_array(_require(tx, "rects", "text"), "text.rects", float)
    if rects_flat.shape[0] != 4 * int(offsets[-1]):
        raise SnapshotError(
            "text.rects", f"expected {4 * int(offsets[-1])} numbers (4 per rectangle), got {rects_flat.shape[0]}"
        )
    rects = rects_flat.reshape(-1, 4)
    if rects.size:
        _first_bad((rects[:, 2] < 0) | (rects[:, 3] < 0), "text.rects", "negative width or height")
    return {"text_owner": owner, "text_seq": seq, "texts": texts, "text_rect_offsets": offsets, "text_rects": rects}
