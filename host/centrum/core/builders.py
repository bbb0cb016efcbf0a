"""Hand-built snapshots for unit tests.

Tests describe a page as a tree of :func:`E` (element) and :func:`T` (text) nodes with explicit boxes, so the
expected answer of an algorithm follows from the paper's rules and the geometry written in the test::

    page = E("html", (0, 0, 1920, 3000), [
        E("body", (0, 0, 1920, 3000), [
            E("div", (100, 100, 800, 600), [T("Hello world.")], cls="content", name="main"),
        ]),
    ])
    built = build(page, viewport=(1920, 1080))
    built.snapshot            # a validated Snapshot
    built.ids["main"]         # node id of the element named "main"
    built.raw                 # the protocol v1 JSON object (for host / native-messaging tests)

Defaults: display from the tag (block or inline, as a browser's UA sheet would), visible when the box has an
area, ``<a>`` gets ``href`` and the LINK flag, ``<img>`` the IMAGE flag, a text node without rectangles gets one
rectangle equal to its parent's box.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .snapshot import FIXED, IMAGE, LINK, STICKY, VISIBLE, Snapshot, parse_snapshot

INLINE_TAGS = {
    "a", "span", "em", "strong", "b", "i", "u", "small", "code", "abbr", "cite", "q", "sub", "sup", "time",
    "label", "img", "br", "input", "button", "select", "textarea", "mark", "s", "var", "kbd", "svg", "video",
    "canvas", "picture", "iframe",
}
HIDDEN_TAGS = {"head", "script", "style", "meta", "link", "title", "noscript", "template"}
DEFAULT_DISPLAY = {"li": "list-item", "table": "table", "tr": "table-row", "td": "table-cell",
                   "th": "table-cell", "tbody": "table-row-group", "thead": "table-header-group",
                   "tfoot": "table-footer-group", "caption": "table-caption"}

Box = tuple[float, float, float, float]


@dataclass
class T:
    text: str
    rects: list[Box] | None = None


@dataclass
class E:
    tag: str
    box: Box = (0, 0, 0, 0)
    children: list[E | T] = field(default_factory=list)
    cls: str | None = None
    id: str | None = None
    name: str | None = None
    display: str | None = None
    position: str = "static"
    visibility: str = "visible"
    opacity: float = 1.0
    font_size: float = 16.0
    visible: bool | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    flags: int = 0


def T_(text: str, *rects: Box) -> T:
    """Shorthand: a text node with explicit rectangles."""
    return T(text, list(rects) or None)


@dataclass
class Built:
    snapshot: Snapshot
    raw: dict[str, Any]
    ids: dict[str, int]


def build(
    root: E,
    viewport: tuple[float, float] = (1920, 1080),
    document: tuple[float, float] | None = None,
    source: str | None = None,
    url: str = "http://127.0.0.1/test",
    title: str = "test",
    lang: str = "en",
    dir: str = "ltr",
) -> Built:
    b = _Builder()
    b.walk(root, -1)
    if document is None:
        boxes = b.el["box"]
        w = max([boxes[k] + boxes[k + 2] for k in range(0, len(boxes), 4)] + [viewport[0]])
        h = max([boxes[k + 1] + boxes[k + 3] for k in range(0, len(boxes), 4)] + [viewport[1]])
        document = (w, h)
    raw: dict[str, Any] = {
        "protocol": 1,
        "page": {
            "url": url, "title": title, "lang": lang, "dir": dir,
            "viewport": list(viewport), "document": list(document), "scroll": [0, 0], "dpr": 1,
            "collector": "testing", "timing": {}, "stylesheets": {"loaded": 0, "failed": 0},
        },
        "enums": b.enums,
        "elements": b.el,
        "attrs": b.attrs,
        "text": b.text,
    }
    if source is not None:
        raw["source"] = source
    return Built(snapshot=parse_snapshot(raw), raw=raw, ids=b.ids)


def _display(node: E, tag: str) -> str:
    return node.display or ("none" if tag in HIDDEN_TAGS else
                            DEFAULT_DISPLAY.get(tag, "inline" if tag in INLINE_TAGS else "block"))


def _flags(node: E, tag: str, visible: bool, attrs: dict[str, str]) -> int:
    flags = node.flags | (VISIBLE if visible else 0)
    if tag == "a" and "href" in attrs:
        flags |= LINK
    if tag in ("img", "svg", "video", "canvas", "picture"):
        flags |= IMAGE
    if node.position == "fixed":
        flags |= FIXED
    if node.position == "sticky":
        flags |= STICKY
    return flags


class _Builder:
    """The snapshot's columns, filled by one pre-order walk of the E/T tree."""

    def __init__(self) -> None:
        self.enums: dict[str, list[str]] = {"tag": [], "display": [], "position": [], "visibility": []}
        self.index: dict[str, dict[str, int]] = {k: {} for k in self.enums}
        self.el: dict[str, list[Any]] = {k: [] for k in ("parent", "tag", "box", "display", "position",
                                                        "visibility", "opacity", "font_size", "flags")}
        self.attrs: dict[str, list[Any]] = {"node": [], "name": [], "value": []}
        self.text: dict[str, list[Any]] = {"owner": [], "seq": [], "text": [], "rect_offsets": [0], "rects": []}
        self.ids: dict[str, int] = {}

    def code(self, kind: str, value: str) -> int:
        table = self.index[kind]
        if value not in table:
            table[value] = len(self.enums[kind])
            self.enums[kind].append(value)
        return table[value]

    def walk(self, node: E, parent: int) -> None:
        el = self.el
        i = len(el["parent"])
        if node.name:
            self.ids[node.name] = i
        tag = node.tag.lower()
        display = _display(node, tag)
        el["parent"].append(parent)
        el["tag"].append(self.code("tag", tag))
        el["box"].extend(float(v) for v in node.box)
        el["display"].append(self.code("display", display))
        el["position"].append(self.code("position", node.position))
        el["visibility"].append(self.code("visibility", node.visibility))
        el["opacity"].append(node.opacity)
        el["font_size"].append(node.font_size)
        visible = node.visible
        if visible is None:
            visible = (node.box[2] > 0 and node.box[3] > 0 and display != "none"
                       and node.visibility == "visible" and node.opacity > 0)
        node_attrs = dict(node.attrs)
        if tag == "a":
            node_attrs.setdefault("href", "#")
        el["flags"].append(_flags(node, tag, visible, node_attrs))
        if node.cls is not None:
            node_attrs["class"] = node.cls
        if node.id is not None:
            node_attrs["id"] = node.id
        for k, v in node_attrs.items():
            self.attrs["node"].append(i)
            self.attrs["name"].append(k)
            self.attrs["value"].append(v)
        for child in node.children:
            if isinstance(child, T):
                self.add_text(child, node, i, visible)
            else:
                self.walk(child, i)

    def add_text(self, child: T, owner: E, i: int, visible: bool) -> None:
        rects = child.rects if child.rects is not None else (
            [owner.box] if visible and owner.box[2] > 0 and owner.box[3] > 0 else [])
        text = self.text
        text["owner"].append(i)
        text["seq"].append(len(self.el["parent"]))
        text["text"].append(child.text)
        for r in rects:
            text["rects"].extend(float(v) for v in r)
        text["rect_offsets"].append(text["rect_offsets"][-1] + len(rects))
