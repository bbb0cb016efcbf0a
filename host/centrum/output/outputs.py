"""What a user gets from the chosen nodes: clean HTML, GitHub-flavoured Markdown, text and JSON, with metadata.

One walk over the source subtrees of the answer (the collector's serialization, every element carrying its
``data-cx`` node id) builds a *clean tree*: only the elements and attributes of the allow-list shared with the reader
view (``extension/src/allowlist.json``, packaged as ``centrum/assets/allowlist.json``), hidden nodes left out (by the
snapshot's flags), links and images made absolute against the page URL (``<base href>`` respected), lazy images
resolved (``data-src``/``data-srcset``/``srcset``/``<picture>``/``<noscript>``), ARIA headings made headings and
footnote references marked. ``html`` serializes that tree; ``markdown`` (``centrum.output.markdown``) converts it;
``text``
is the snapshot's own text joiner (``Snapshot.text_of``), so it is the text every algorithm and metric sees; ``json``
holds all of them plus metadata, node ids and timings. Every step is linear in the size of the answer (plus one
parse of the page's source).

The Markdown output's golden files are the golden pages' ``expected.md`` (docs/outputs.md says how to refresh them).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from ..core.html import BAD_CHARS
from .clean_tree import ALLOWLIST_PATH, CODE_LANG, FN_BODY, FN_REF, PRIVATE, Content, allowlist, shows_title
from .markdown import convert, document

if TYPE_CHECKING:
    import numpy as np
    from lxml.html import HtmlElement

    from ..core.metadata import Metadata
    from ..core.result import Result
    from ..core.snapshot import Snapshot

FORMATS = ("text", "markdown", "html", "json")
MAX_DEPTH = 200  # deeper kept elements are unwrapped (their text stays): bounds every later recursion
MAX_FOOTNOTES = 1000
# Lazy-loading libraries keep the real address in these attributes until the image scrolls into view, and a data:
# image shorter than PLACEHOLDER_DATA_URI is their blank placeholder: shared with clean.js through the data file.
_IMAGES = json.loads(ALLOWLIST_PATH.read_text(encoding="utf-8"))
LAZY_SRC: tuple[str, ...] = tuple(_IMAGES["lazy_src"])
LAZY_SRCSET: tuple[str, ...] = tuple(_IMAGES["lazy_srcset"])
PLACEHOLDER_DATA_URI: int = int(_IMAGES["placeholder_data_uri"])
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]{1,30})", re.I)


class OutputError(ValueError):
    """An output cannot be made from this input (e.g. html/markdown from a snapshot without a source)."""


# ---- the page's source ----------------------------------------------------------------------------------------------
# An XHTML page's leading `<?xml ... encoding="..."?>`: lxml refuses to parse decoded text that still declares its
# bytes' encoding, and an HTML parser (the browser's too) reads it as a bogus comment, so it goes before the parse.
XML_DECLARATION = re.compile(r"\A\s*<\?xml\b[^>]*>?", re.I)


class SourcePage:
    """The page's source parsed once (lxml), its elements found by node id, and what the snapshot says is shown.

    ``snapshot`` None: plain HTML without a rendering (unit tests, ``from_html``); every element counts as shown.
    """

    def __init__(self, source: str, snapshot: Snapshot | None, url: str, *, raw_html: bool = False) -> None:
        from lxml import etree, html

        self.snapshot = snapshot
        self.url = url
        self.raw_html = raw_html  # parsed from a file, not the live DOM: a <pre>'s first newline is markup
        source = XML_DECLARATION.sub("", BAD_CHARS.sub("\ufffd", source), count=1)
        parser = html.HTMLParser(huge_tree=True, remove_comments=True, remove_pis=True)
        try:
            self.root: HtmlElement = html.document_fromstring(source, parser=parser)
        except (etree.ParserError, ValueError) as e:
            raise OutputError(f"the page source cannot be parsed: {e}") from None
        _unnest_voids(self.root)
        self.by_id: dict[int, HtmlElement] = {}
        n = snapshot.n if snapshot is not None else None
        for k, el in enumerate(self.root.iter()):
            if not isinstance(el.tag, str):
                continue
            if snapshot is None:
                el.set("data-cx", str(k))  # pre-order ids, as the collector would give
                self.by_id[k] = el
                continue
            i = _int(el.get("data-cx"))
            if i is not None and n is not None and 0 <= i < n:
                self.by_id[i] = el
        self._html_ids: dict[str, HtmlElement] | None = None
        base = next((el.get("href") for el in self.root.iter("base") if el.get("href")), None)
        self.base_url = _join(url, base.strip()) if base else url
        self._shown: list[bool] | None = None
        self._own_text: list[bool] | None = None
        if snapshot is not None:
            self._visibility(snapshot)

    def _visibility(self, snap: Snapshot) -> None:
        shown, own_text = seen(snap)
        self._shown = shown.tolist()
        self._own_text = own_text.tolist()
        self._box_area = snap.area.tolist()
        self._display = snap.display.tolist()
        self._visibility_col = snap.visibility.tolist()
        self._opacity = snap.opacity.tolist()

    # ---- lookups ----
    def node_id(self, el: HtmlElement) -> int | None:
        return _int(el.get("data-cx"))

    def shown(self, el: HtmlElement) -> bool:
        if self._shown is None:
            return True
        i = self.node_id(el)
        return True if i is None or i >= len(self._shown) else self._shown[i]

    def own_text_shown(self, el: HtmlElement) -> bool:
        if self._own_text is None:
            return True
        i = self.node_id(el)
        return True if i is None or i >= len(self._own_text) else self._own_text[i]

    def image_shown(self, el: HtmlElement) -> bool:
        """An <img> is kept when painted, or when it only lacks a size because it has not loaded yet (native and
        script lazy loading) while nothing hides it, or when it carries a lazy loader's address at all (fade-in
        loaders keep opacity 0 until the image arrives)."""
        if self._shown is None or any(el.get(a) for a in LAZY_SRC + LAZY_SRCSET):
            return True
        i = self.node_id(el)
        if i is None or i >= len(self._shown):
            return True
        if self._shown[i]:
            return True
        return (self._box_area[i] == 0 and self._display[i] != "none" and self._visibility_col[i] == "visible"
                and self._opacity[i] > 0)

    def styled_visible(self, el: HtmlElement) -> bool:
        """Whether nothing in the element's own style hides it (display, visibility, opacity): what hides it, when
        it is not shown, is its box (a size-0 wrapper that cuts its overflow, as lazy loaders keep a picture's
        place until a script sizes it)."""
        i = self.node_id(el)
        if self._shown is None or i is None or i >= len(self._shown):
            return True
        return self._display[i] != "none" and self._visibility_col[i] == "visible" and self._opacity[i] > 0

    def by_html_id(self, value: str) -> HtmlElement | None:
        if self._html_ids is None:
            self._html_ids = {}
            for el in self.root.iter():
                if isinstance(el.tag, str):
                    for attr in ("id", "name"):
                        v = el.get(attr)
                        if v:
                            self._html_ids.setdefault(v, el)
        return self._html_ids.get(value)

    def inside(self, nodes: set[int], el: HtmlElement) -> bool:
        """``el`` is one of ``nodes`` or below one of them (O(depth))."""
        cur: HtmlElement | None = el
        while cur is not None:
            i = self.node_id(cur)
            if i is not None and i in nodes:
                return True
            cur = cur.getparent()
        return False

    def resolve(self, url: str | None) -> str | None:
        if not url:
            return None
        return _join(self.base_url, url.strip()) or None


def unseen(snap: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    """Per element: nothing in it is seen, its own text draws nothing; the collector's ``unseen`` judgement
    (``SEEN.judge`` in collect.js, the rule the reader view applies to the live page: off the page, clipped, masked,
    filtered, too small, invisible letters), except the disclosure panels the reader shows open
    (``Snapshot.disclosed_in``, the reader's ``disclosed``). All False for a snapshot without it (older
    collectors)."""
    import numpy as np

    from ..core import tree

    gone = np.zeros(snap.n, dtype=bool)
    no_text = np.zeros(snap.n, dtype=bool)
    if snap.unseen_subtree is None or snap.unseen_text is None or not snap.n:
        return gone, no_text
    nothing = np.zeros(snap.n, dtype=bool)
    nothing[snap.unseen_subtree] = True
    nothing[snap.disclosed_in([0])] = False
    gone = tree.covered(snap, nothing)
    no_text[snap.unseen_text] = True
    return gone, no_text | gone


def seen(snap: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    """Per element: whether it is shown, and whether its own text nodes are: what the Markdown and HTML outputs
    keep, from the snapshot alone.

    An element is shown when something in its subtree is painted: a container may have no box of its own (floated
    children, display: contents) and still hold the article; display none, visibility hidden and opacity 0 reach
    every descendant, so such a subtree has nothing painted. The text of a collapsed disclosure panel is part of the
    answer's text (Snapshot.text_disclosed): its elements are shown here as the reader view shows them, open. Then
    :func:`unseen` takes out what the collector judged unseen."""
    import numpy as np

    from ..core.snapshot import VISIBLE

    vis = (snap.flags & VISIBLE) != 0
    contents = snap.display == "contents"
    disclosed = snap.text_per_element(snap.text_disclosed.astype(np.float64)) > 0
    painted = vis | (contents & np.isin(np.arange(snap.n), snap.text_owner)) | disclosed
    gone, no_text = unseen(snap)
    shown = (snap.subtree_sum(painted.astype(np.float64)) > 0) & ~gone
    styled = (snap.display != "none") & (snap.visibility == "visible") & (snap.opacity > 0)
    own_text = (vis | contents | styled | disclosed) & (snap.font_size > 0) & ~no_text
    return shown, own_text


# HTML5 void elements libxml2's HTML parser does not know: it nests what follows them inside them.
LATE_VOIDS = ("wbr", "source", "track", "embed", "keygen")


def _unnest_voids(root: HtmlElement) -> None:
    """Move what lxml nested inside a void element back after it (``a<wbr>b`` parses as ``a<wbr>b</wbr>``), deepest
    first so chains (``<source><track>…``) come apart too; linear in the moved nodes."""
    for el in reversed(list(root.iter(*LATE_VOIDS))):
        if el.text is None and not len(el):
            continue
        tail, children = el.tail, list(el)
        el.tail, el.text = el.text, None
        for child in reversed(children):
            el.addnext(child)  # a moved element takes its tail along
        last = children[-1] if children else el
        last.tail = (last.tail or "") + (tail or "") or None


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _join(base: str, url: str) -> str:
    try:
        return urljoin(base, url)
    except ValueError:  # "http://[broken" and friends
        return ""


def source_page(snapshot: Snapshot, url: str | None = None) -> SourcePage:
    if snapshot.source is None:
        raise OutputError("the snapshot has no source serialization (collect it with source: true); only the "
                          "text and json outputs can be made without it")
    return SourcePage(snapshot.source, snapshot, url or snapshot.page.url)


def from_html(html: str, url: str = "about:blank") -> SourcePage:
    """A page from plain HTML, every element taken as shown (no rendering): for tests and quick conversions."""
    return SourcePage(html, None, url, raw_html=True)


# ---- images ---------------------------------------------------------------------------------------------------------
def parse_srcset(value: str) -> list[tuple[str, float]]:
    """(url, size) candidates of a srcset: size is the width (``800w``), else the density times 1e-6 so widths win
    over densities when both kinds appear, else 0. Follows the HTML standard's tokenizer: a URL is a run of
    non-space characters (commas inside it stay), a trailing comma ends a descriptor-less candidate."""
    out: list[tuple[str, float]] = []
    pos, n = 0, len(value)
    while pos < n:
        while pos < n and (value[pos].isspace() or value[pos] == ","):
            pos += 1
        start = pos
        while pos < n and not value[pos].isspace():
            pos += 1
        url = value[start:pos]
        descriptor = ""
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            end = value.find(",", pos)
            end = n if end < 0 else end
            descriptor = value[pos:end].strip()
            pos = end + 1
        if not url:
            continue
        size = 0.0
        for token in descriptor.split():
            try:
                if token.endswith("w"):
                    size = float(token[:-1])
                elif token.endswith("x"):
                    size = float(token[:-1]) * 1e-6
            except ValueError:
                pass
        out.append((url, size))
    return out


def image_url(page: SourcePage, img: HtmlElement) -> str | None:
    """The absolute address of the picture an <img> stands for: a lazy loader's address first, then the largest
    srcset candidate (its own, a lazy one, or its <picture>'s <source>s), then ``src`` unless it is a tiny data:
    placeholder; None when there is none."""
    for name in LAZY_SRC:
        value = (img.get(name) or "").strip()
        if value and not value.startswith("data:"):
            return page.resolve(value)
    candidates: list[tuple[str, float]] = []
    for name in (*LAZY_SRCSET, "srcset"):
        candidates += parse_srcset(img.get(name) or "")
    parent = img.getparent()
    while parent is not None and parent.tag == "source":
        parent = parent.getparent()  # lxml's parser nests what follows a <source> inside it
    if parent is not None and parent.tag == "picture":
        for source in parent.iter("source"):
            for name in (*LAZY_SRCSET, "srcset"):
                candidates += parse_srcset(source.get(name) or "")
    real = [c for c in candidates if not c[0].startswith("data:")]
    if real:
        return page.resolve(max(real, key=lambda c: c[1])[0])  # max keeps the first of equal sizes
    src = (img.get("src") or "").strip()
    if src and (not src.startswith("data:") or len(src) >= PLACEHOLDER_DATA_URI):
        return page.resolve(src)
    return None


def _longer(el: HtmlElement, limit: int) -> bool:
    """Whether ``el``'s text is longer than ``limit`` characters, read no further than that."""
    n = 0
    for piece in el.itertext():
        n += len(piece)
        if n > limit:
            return True
    return False


# ---- the clean tree -------------------------------------------------------------------------------------------------
class _Cleaner:
    def __init__(self, page: SourcePage) -> None:
        self.page = page
        self.allow = allowlist()
        self.budget = self.allow.max_nodes
        self.images = 0
        self.fn_numbers: dict[int, int] = {}  # id(target element) -> footnote number
        self.fn_targets: list[HtmlElement] = []
        self.fn_ref_ids: set[str] = set()  # ids of references and their wrappers (a footnote's back-links)
        self.in_footnote = False

    # -- attributes --
    def attributes(self, el: HtmlElement, tag: str) -> dict[str, str] | None:
        """Allowed attributes of a kept element; None drops the element (an image without a safe address)."""
        allow = self.allow
        out: dict[str, str] = {}
        if tag == "a":
            href = self.page.resolve(el.get("href"))
            if href and allow.safe_link.match(href):
                out["href"] = href
        elif tag == "img":
            src = image_url(self.page, el)
            if not src or not allow.safe_image.match(src):
                return None
            out["src"] = src
            alt = _text(el.get("alt"))
            if alt:
                out["alt"] = alt
            for name in ("width", "height"):
                v = (el.get(name) or "").strip()
                if v.isdigit() and 0 < int(v) < 100000:
                    out[name] = v
        elif tag in ("td", "th"):
            for name in ("colspan", "rowspan"):
                span = _int((el.get(name) or "").strip())
                if span is not None and 1 < span < 1000:
                    out[name] = str(span)
        elif tag == "time" and el.get("datetime"):
            out["datetime"] = _text(el.get("datetime"))
        elif tag == "details" and el.get("open") is not None:
            out["open"] = ""
        elif tag == "ol" and el.get("start"):
            start = _int(el.get("start", "").strip())
            if start is not None:
                out["start"] = str(start)
        for name in allow.attributes.get("*", ()):
            v = el.get(name)
            if v:
                out[name] = _text(v)
        return out

    def out_tag(self, el: HtmlElement) -> str | None:
        """The clean tag for a source element; None unwraps it. ``role=heading`` becomes h1-h6 (aria-level)."""
        tag = el.tag
        if "heading" in (el.get("role") or "").split() and tag not in ("h1", "h2", "h3", "h4", "h5", "h6"):
            level = _int((el.get("aria-level") or "").strip()) or 2
            return f"h{min(max(level, 1), 6)}"
        return tag if tag in self.allow.keep else None

    # -- footnotes --
    def footnote(self, el: HtmlElement) -> int | None:
        """The footnote number of a reference link: a same-page fragment link to an existing element, marked up as
        a note reference (inside or around <sup>, role=doc-noteref, rel=footnote)."""
        href = (el.get("href") or "").strip()
        if not href.startswith("#") or len(href) < 2:
            return None
        parent = el.getparent()
        marked = ((parent is not None and parent.tag == "sup") or el.find("sup") is not None
                  or "doc-noteref" in (el.get("role") or "").split()
                  or "footnote" in (el.get("rel") or "").lower().split())
        if not marked:
            return None
        target = self.page.by_html_id(href[1:])
        if target is None or target is el or any(a is target for a in el.iterancestors()):
            return None
        for holder in (el, parent):
            if holder is not None and holder.get("id"):
                self.fn_ref_ids.add(holder.get("id"))
        key = id(target)
        if key not in self.fn_numbers:
            if len(self.fn_targets) >= MAX_FOOTNOTES:
                return None
            self.fn_numbers[key] = len(self.fn_targets) + 1
            self.fn_targets.append(target)
        return self.fn_numbers[key]

    def is_backlink(self, el: HtmlElement) -> bool:
        href = (el.get("href") or "").strip()
        return "doc-backlink" in (el.get("role") or "").split() or (href[:1] == "#" and href[1:] in self.fn_ref_ids)

    # -- the walk --
    def clean(self, root: HtmlElement) -> HtmlElement | None:
        """A clean copy of ``root`` (its tag if allowed, else a <div>); None when it is hidden or dropped."""
        from lxml import html

        tag = root.tag if isinstance(root.tag, str) else ""
        if tag in self.allow.drop or not self.page.shown(root):
            return None
        role = self.thread_role(root)
        if role in ("drop", "card", "meta"):  # a chosen signature, user card or date line too (clean.js tree())
            holder = html.Element("div")
            self.thread_item(root, role, holder)
            return holder[0] if len(holder) else None
        out_tag = "blockquote" if role == "quote" else self.out_tag(root) or "div"
        attrs = self.attributes(root, out_tag) if out_tag == root.tag else {}
        if attrs is None:
            return None  # an image without a safe address
        out = html.Element(out_tag, attrs)
        self._mark(root, out)
        self.walk(root, out)
        return out

    # -- threads (allowlist.json "thread"; the reader's clean.js threadRole, threadItem, cardName, threadHolder) --
    def thread_holder(self, el: HtmlElement) -> tuple[HtmlElement, str] | None:
        """The user card, date line, quote box or dropped element (signature, post actions) that holds a chosen
        element, with its role, or None: a block filter may keep a card's pieces apart (its avatar letter or post
        number left out), and the pieces read as the card does, once. A quote box reads whole (its "X said:" line
        with the quoted words, as a quote), unless it lies in a card, date line or dropped element."""
        quote = None
        for anc in el.iterancestors():
            role = self.thread_role(anc)
            if role in ("drop", "card", "meta"):
                return anc, role
            if role == "quote" and quote is None:
                quote = anc
        return None if quote is None else (quote, "quote")

    def thread_role(self, el: HtmlElement) -> str:
        """"drop", "card", "meta", "quote" or "": what a thread's element is to a reader."""
        words = self.allow.thread
        if el.tag == "a" and words.actions.match(el.text_content()):
            return "drop"
        names = f"{el.get('class') or ''} {el.get('id') or ''}".strip()
        if not names:
            return ""
        if words.drop.search(names):
            return "drop"
        if el.tag != "blockquote" and words.quote.search(names):
            return "quote"
        # The text is measured only for a name that calls for it: measuring every element would cost its depth.
        if words.card.search(names):
            return "" if _longer(el, words.max_card_chars) else "card"
        if (words.meta.search(names) and not _longer(el, words.max_meta_chars)
                and not any(e is not el for e in el.iter("h1", "h2", "h3", "h4", "h5", "h6", "p"))):
            return "meta"
        return ""

    def thread_item(self, el: HtmlElement, role: str, parent: HtmlElement) -> None:
        """A user card as its member's name, an author-and-date line as one line of small text (its block pieces
        joined by " · "), each a <p><small>; a dropped element adds nothing."""
        from lxml import html

        words = self.allow.thread
        line = ""
        if role == "card":
            named = next((e for e in el.iter() if e is not el and isinstance(e.tag, str) and e.tag != "img"
                          and words.name.search(f"{e.get('class') or ''} {e.get('id') or ''}")
                          and e.text_content().strip()), None)
            first = named if named is not None else next(
                (e for e in el.iter("a", "b", "strong", "h2", "h3", "h4", "h5", "h6") if e is not el), None)
            name = " ".join(first.text_content().split()) if first is not None else ""
            line = name if len(name) <= words.max_name_chars else ""
        elif role == "meta":
            pieces = html.Element("div")
            self.walk(el, pieces)
            sep = "\0"  # between block pieces; inline pieces run on as text does
            joined = (pieces.text or "") + "".join(
                (c.text_content() if c.tag in words.inline else sep + c.text_content() + sep) + (c.tail or "")
                for c in pieces)
            line = " \u00b7 ".join(p for p in (" ".join(x.split()) for x in joined.split(sep)) if p)
        if line:
            small = html.Element("small")
            small.text = line
            para = html.Element("p")
            para.append(small)
            parent.append(para)

    def _mark(self, src: HtmlElement, out: HtmlElement) -> None:
        n = self.fn_numbers.get(id(src))
        if n is not None and not self.in_footnote:
            out.set(FN_BODY, str(n))
        if out.tag == "pre":
            for holder in (src, src.find("code")):
                m = _LANG_CLASS.search(holder.get("class") or "") if holder is not None else None
                if m:
                    out.set(CODE_LANG, m.group(1).lower())
                    break

    def walk(self, src_root: HtmlElement, out_root: HtmlElement) -> None:
        """Copy ``src_root``'s content into ``out_root`` (iterative: a 5000-deep page cannot overflow the stack)."""
        from lxml import html

        page, allow = self.page, self.allow
        # Work items: ("text", text, out) or ("el", source element, out parent, depth, images-before-parent).
        stack: list[tuple[Any, ...]] = []
        self._push_children(stack, src_root, out_root, 1, self.images)
        while stack:
            item = stack.pop()
            if item[0] == "text":
                _append_text(item[2], item[1])
                continue
            _, el, parent, depth, images_before = item
            tag = el.tag
            if not isinstance(tag, str):
                continue
            self.budget -= 1
            if self.budget < 0:
                return
            if tag == "noscript":
                # The picture a lazy page shows only to script-less browsers: used when the enclosing element got
                # no image of its own.
                if self.images == images_before:
                    self._noscript_images(el, parent)
                continue
            if tag in allow.drop or tag == "template" and el.get("shadowrootmode") is None:
                continue
            if tag == "img":
                if not page.image_shown(el):
                    continue
            elif tag in ("br", "wbr"):
                pass  # no box of their own, yet they break lines
            elif not page.shown(el):
                self._lazy_images(el, parent)
                continue
            if tag == "a" and self.in_footnote and self.is_backlink(el):
                continue
            role = self.thread_role(el)
            if role in ("drop", "card", "meta"):
                self.thread_item(el, role, parent)
                continue
            out_tag = "blockquote" if role == "quote" else self.out_tag(el)
            if tag == "template":
                out_tag = None
            elif depth > MAX_DEPTH and out_tag is not None:
                out_tag = None
                _append_text(parent, " ")  # an unwrapped block must not glue its words to its neighbours'
                stack.append(("text", " ", parent))
            if out_tag is None and id(el) in self.fn_numbers and not self.in_footnote:
                out_tag = "div"  # a footnote's text needs an element to carry its mark
            target = parent
            if out_tag is not None:
                attrs = self.attributes(el, out_tag)  # an ARIA heading keeps the attributes every tag may have
                if attrs is None:
                    continue
                target = html.Element(out_tag, attrs)
                parent.append(target)
                self._mark(el, target)
                if out_tag == "img":
                    self.images += 1
                    continue
                if out_tag == "a" and not self.in_footnote:
                    n = self.footnote(el)
                    if n is not None:
                        target.set(FN_REF, str(n))
            self._push_children(stack, el, target, depth + 1, self.images)

    def _lazy_images(self, el: HtmlElement, parent: HtmlElement) -> None:
        """The lazy pictures (a lazy loader's address) inside ``el``, an element its box hides, not its style: the
        render never ran the script that would size the wrapper, a reader's browser does (issue #44 item 5)."""
        if not self.page.styled_visible(el):
            return
        from lxml import html

        for img in el.iter("img"):
            if self.images >= self.allow.max_lazy_wrapped or not any(img.get(a) for a in LAZY_SRC + LAZY_SRCSET):
                continue
            attrs = self.attributes(img, "img")
            if attrs is not None and self.page.styled_visible(img):
                parent.append(html.Element("img", attrs))
                self.images += 1

    def _push_children(self, stack: list[tuple[Any, ...]], el: HtmlElement, out: HtmlElement, depth: int,
                       images_before: int) -> None:
        children = list(el)
        shadow = next((c for c in children if c.tag == "template" and c.get("shadowrootmode") is not None), None)
        if shadow is not None:
            # A shadow host shows its shadow tree (slotted light children are not placed: as the reader does).
            children = [shadow]
        text_shown = self.page.own_text_shown(el)
        items: list[tuple[Any, ...]] = []
        if text_shown and el.text and shadow is None:
            text = el.text
            if el.tag == "pre" and self.page.raw_html and text.startswith("\n"):
                text = text[1:]  # the HTML parser drops a <pre>'s first newline
            items.append(("text", text, out))
        for child in children:
            items.append(("el", child, out, depth, images_before))
            if text_shown and child.tail and shadow is None:
                items.append(("text", child.tail, out))
        stack.extend(reversed(items))

    def _noscript_images(self, noscript: HtmlElement, parent: HtmlElement) -> None:
        from lxml import html

        imgs = list(noscript.iter("img"))
        if not imgs and noscript.text and "<img" in noscript.text.lower():
            try:
                imgs = [e for frag in html.fragments_fromstring(noscript.text) if not isinstance(frag, str)
                        for e in frag.iter("img")]
            except Exception:  # noqa: BLE001 - lxml raises several types on fragments it cannot parse
                imgs = []
        for img in imgs[:10]:
            attrs = self.attributes(img, "img")
            if attrs is not None:
                parent.append(html.Element("img", attrs))
                self.images += 1


def _text(value: str | None) -> str:
    return " ".join((value or "").split())


def _append_text(parent: HtmlElement, text: str) -> None:
    if not text:
        return
    last = parent[-1] if len(parent) else None
    if last is not None:
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def outermost(page: SourcePage, nodes: list[int]) -> list[int]:
    """The chosen nodes that are not inside another chosen node, in document order."""
    chosen = sorted({int(i) for i in nodes})
    chosen_set = set(chosen)
    out = []
    for i in chosen:
        el = page.by_id.get(i)
        if el is None:
            continue
        parent = el.getparent()
        if parent is not None and page.inside(chosen_set, parent):
            continue
        out.append(i)
    return out


def clean_content(page: SourcePage, nodes: list[int]) -> Content:
    """The clean tree of the chosen nodes (see the module docstring)."""
    cleaner = _Cleaner(page)
    content = Content()
    done: set[int] = set()  # thread items (cards, meta lines) already written for chosen pieces inside them
    for i in outermost(page, nodes):
        el = page.by_id[i]
        holder = cleaner.thread_holder(el)
        if holder is None:
            block = cleaner.clean(el)
        elif id(holder[0]) in done or holder[1] == "drop":
            continue
        else:
            done.add(id(holder[0]))
            block = cleaner.clean(holder[0])
        if block is not None:
            content.blocks.append(block)
    # Footnote texts, wherever the page keeps them (a note may cite another: the list grows while we go).
    cleaner.in_footnote = True
    k = 0
    while k < len(cleaner.fn_targets) and cleaner.budget > 0:
        target = cleaner.fn_targets[k]
        k += 1
        from lxml import html

        body = html.Element("div")
        cleaner.walk(target, body)
        content.footnotes.append((k, body))
    return content


# ---- serializations -------------------------------------------------------------------------------------------------
def content_text(snapshot: Snapshot, result: Result) -> str:
    """The main content's text: an algorithm that states its own text (zoning: exactly its zones' text, DANA
    without a browser) knows better than whole subtrees; otherwise the snapshot's text joiner. When the answer's
    elements hold text the collector judged unseen (:func:`unseen`: off the page, clipped, too small, invisible
    letters...), the text is that of the other text nodes under the answer's elements instead (the subtrees the
    Markdown and HTML are made of too). Only that judgement: the VISIBLE flag's opacity 0 also covers pages a
    script would fade in, which the renderer (scripts off) leaves transparent, and their text is the answer's.
    The algorithms and metrics read their own text: their answers do not depend on this."""
    if not result.nodes or snapshot.m == 0:
        return result.text or ""
    import numpy as np

    from ..core import tree

    _, no_text = unseen(snapshot)
    under = tree.covered(snapshot, result.nodes)[snapshot.text_owner]
    drawn = (np.diff(snapshot.text_rect_offsets) > 0) | snapshot.text_disclosed  # what the joiner writes
    drop = under & no_text[snapshot.text_owner] & drawn & ~snapshot.text_blank
    if not drop.any():
        return result.text if result.text else snapshot.text_of(result.nodes)
    if not result.text or result.text == snapshot.text_of(result.nodes):
        return snapshot.text_of_mask(under & ~drop)
    # The algorithm's own text (its zones, its kept blocks): the unseen text nodes cut out of it, in document order.
    return _cut(result.text, [snapshot.texts[t] for t in np.flatnonzero(drop).tolist()])


def _cut(text: str, pieces: list[str]) -> str:
    """``text`` (the text joiner's lines) without ``pieces`` (text nodes in document order, each cut at its first
    place after the previous cut; one that is not there is skipped), lines normalized again."""
    pos = 0
    for piece in pieces:
        words = piece.split()
        m = re.compile(r"\s+".join(map(re.escape, words))).search(text, pos) if words else None
        if m:
            text = text[: m.start()] + " " + text[m.end():]
            pos = m.start()
    return "\n".join(" ".join(line.split()) for line in text.split("\n") if line.strip())


def _strip_private(el: HtmlElement) -> HtmlElement:
    from copy import deepcopy

    el = deepcopy(el)
    for sub in el.iter():
        for name in PRIVATE:
            if name in sub.attrib:
                del sub.attrib[name]
    return el


def content_html(content: Content) -> str:
    """The clean tree as an HTML fragment (one element per chosen node)."""
    from lxml import html

    return "\n".join(html.tostring(_strip_private(b), encoding="unicode", method="html") for b in content.blocks)


def html_document(content: Content, meta: Metadata) -> str:
    """A standalone HTML document: metadata in <head>, a header (title, byline, date, site) and the clean tree."""
    from lxml import html
    from lxml.html import builder as B

    head = B.HEAD(B.META(charset="utf-8"))
    if meta.title:
        head.append(B.TITLE(meta.title))
    for name, value in (("author", meta.author), ("description", meta.description)):
        if value:
            head.append(B.META(name=name, content=value))
    for prop, value in (("og:site_name", meta.sitename), ("article:published_time", meta.date),
                        ("og:image", meta.image)):
        if value:
            head.append(html.Element("meta", {"property": prop, "content": value}))
    if meta.url and allowlist().safe_link.match(meta.url):
        head.append(B.LINK(rel="canonical", href=meta.url))
    article = html.Element("article")
    header = html.Element("header")
    if shows_title(content, meta.title):
        header.append(B.H1(meta.title or ""))
    facts: list[Any] = []
    if meta.author:
        facts.append(meta.author)
    if meta.date:
        facts.append(B.TIME(meta.date, datetime=meta.date))
    if meta.sitename:
        facts.append(meta.sitename)
    if facts:
        line = html.Element("p")
        for k, fact in enumerate(facts):
            if k:
                _append_text(line, " · ")
            if isinstance(fact, str):
                _append_text(line, fact)
            else:
                line.append(fact)
        header.append(line)
    if len(header):
        article.append(header)
    for block in content.blocks:
        article.append(_strip_private(block))
    attrs = {"lang": meta.language} if meta.language else {}
    if meta.direction:
        attrs["dir"] = meta.direction
    doc = html.Element("html", attrs)
    doc.append(head)
    doc.append(B.BODY(article))
    return "<!DOCTYPE html>\n" + html.tostring(doc, encoding="unicode", method="html") + "\n"


@dataclass
class Outputs:
    """Everything one extraction gives, built lazily from one parse of the source."""

    snapshot: Snapshot
    result: Result
    url: str | None = None  # the page's address when it differs from the snapshot's (HTML handed to the API)
    timing_ms: dict[str, float] = field(default_factory=dict)
    _page: SourcePage | None = None
    _content: Content | None = None
    _meta: Metadata | None = None
    _text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = content_text(self.snapshot, self.result)
        return self._text

    def page(self) -> SourcePage:
        if self._page is None:
            t0 = time.perf_counter()
            self._page = source_page(self.snapshot, self.url)
            self.timing_ms["source_parse"] = (time.perf_counter() - t0) * 1000
        return self._page

    def content(self) -> Content:
        if self._content is None:
            if not self.result.nodes:
                raise OutputError("the html and markdown outputs need node ids from a rendered page (this result "
                                  "has text only)")
            page = self.page()
            t0 = time.perf_counter()
            content = clean_content(page, self.result.nodes)
            if not content.blocks and self.text:
                # The chosen nodes are not in the source (inside a same-origin iframe, which the source does not
                # inline): their text as paragraphs, as the reader view does without nodes.
                _text_paragraphs(content, self.text)
            self._content = content
            self.timing_ms["clean"] = (time.perf_counter() - t0) * 1000
        return self._content

    def metadata(self) -> Metadata:
        if self._meta is None:
            from ..core.metadata import extract_metadata, snapshot_metadata

            t0 = time.perf_counter()
            if self.snapshot.source is None:
                self._meta = snapshot_metadata(self.snapshot, self.text)
                if self.url:
                    self._meta.url = self.url
            else:
                self._meta = extract_metadata(self.page(), self.result.nodes, self.text)
            self.timing_ms["metadata"] = (time.perf_counter() - t0) * 1000
        return self._meta

    def html(self) -> str:
        content = self.content()
        return html_document(content, self.metadata())

    def markdown(self) -> str:
        content = self.content()
        t0 = time.perf_counter()
        out = document(content, self.metadata())
        self.timing_ms["markdown"] = (time.perf_counter() - t0) * 1000
        return out

    def json(self, with_debug: bool = False) -> dict[str, Any]:
        """The result (node ids, candidates, message), metadata, text, html (the clean fragment) and markdown;
        html and markdown are null when the snapshot has no source or the result no nodes."""
        payload = self.result.to_json(with_debug=with_debug)
        payload["metadata"] = self.metadata().to_json()
        payload["text"] = self.text
        try:
            payload["markdown"] = self.markdown()
            payload["html"] = content_html(self.content())
        except OutputError:
            payload["markdown"] = payload["html"] = None
        payload["timing_ms"] = {**payload.get("timing_ms", {}), **self.timing_ms}
        return payload

    def get(self, fmt: str, with_debug: bool = False) -> str | dict[str, Any]:
        if fmt == "text":
            return self.text
        if fmt == "markdown":
            return self.markdown()
        if fmt == "html":
            return self.html()
        if fmt == "json":
            return self.json(with_debug)
        raise ValueError(f"unknown output format {fmt!r} (known: {', '.join(FORMATS)})")


def _text_paragraphs(content: Content, text: str) -> None:
    """Add ``text``'s lines as paragraphs: the content of an answer whose elements are not in the parsed source."""
    from lxml import html

    block = html.Element("div")
    for line in text.split("\n"):
        if line.strip():
            para = html.Element("p")
            para.text = BAD_CHARS.sub("\ufffd", line)
            block.append(para)
    content.blocks.append(block)


def _find_path(root: HtmlElement, path: str) -> HtmlElement | None:
    """The element at a ``tag:k>...`` path (``centrum.annotation.labels``' format, k counting element children)
    under ``root``."""
    el: HtmlElement | None = None
    for step in path.split(">"):
        tag, _, k = step.rpartition(":")
        if el is None:
            el = root if root.tag == tag else None
        else:
            kids = [c for c in el if isinstance(c.tag, str)]
            el = kids[int(k) - 1] if k.isdigit() and 0 < int(k) <= len(kids) else None
            el = el if el is not None and el.tag == tag else None
        if el is None:
            return None
    return el


def source_markdown(page: SourcePage, paths: list[str], text: str, meta: Metadata) -> str:
    """Markdown of an answer made without a browser (``--no-render``): the cleaned elements at its ``tag:k`` paths in
    ``page`` (:func:`from_html`), with the same cleaner and converter as a rendered answer; when a path is not in
    this parse (its parser and the answer's disagree on a malformed page), the answer's lines as paragraphs."""
    found = [_find_path(page.root, p) for p in paths]
    ids = [page.node_id(el) for el in found if el is not None]
    content = Content()
    if found and len(ids) == len(found) and None not in ids:
        content = clean_content(page, [int(i) for i in ids if i is not None])
    if not content.blocks and text:
        content = Content()
        _text_paragraphs(content, text)
    return document(content, meta)


def markdown_of_html(html: str, url: str = "about:blank") -> str:
    """Markdown of a piece of HTML without rendering it (every element counts as shown): the same cleaner and
    converter as a rendered page's answer."""
    page = from_html(html, url)
    body = next(page.root.iter("body"), page.root)
    return convert(clean_content(page, [page.node_id(body) or 0]))
