"""The collector (extension/src/collect.js) in real headless Chromium, on fixture pages served on 127.0.0.1.

Every expected value follows from the fixture's CSS (absolute boxes, fonts, display/visibility rules) or from the
DOM itself (pre-order, parents, node id -> element), never from a previous run of the collector.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from lxml import html as lxml_html

from centrum.core.render import Rendered, Renderer, collector_source
from centrum.core.snapshot import FIXED, IN_FRAME, OPAQUE_FRAME, SHADOW_HOST, STICKY, Snapshot, parse_snapshot

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "host/centrum/snapshot.schema.json").read_text())


def render(renderer: Renderer, base: str, name: str, source: bool = True) -> tuple[Rendered, Snapshot]:
    out = renderer.render(base + "pages/" + name, source=source)
    jsonschema.validate(out.raw, SCHEMA)
    return out, parse_snapshot(out.raw)


def by_id(snap: Snapshot, dom_id: str) -> int:
    hits = np.nonzero(snap.attr("id") == dom_id)[0]
    assert hits.size == 1, f"expected one element with id={dom_id!r}, found {hits.size}"
    return int(hits[0])


def texts_of(snap: Snapshot, owner: int) -> list[str]:
    return [snap.texts[k] for k in np.nonzero(snap.text_owner == owner)[0]]


def rects_of_text(snap: Snapshot, k: int) -> np.ndarray:
    return snap.text_rects[snap.text_rect_offsets[k] : snap.text_rect_offsets[k + 1]]


def inside(inner: np.ndarray, outer: np.ndarray, tol: float = 1.0) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return bool(x >= ox - tol and y >= oy - tol and x + w <= ox + ow + tol and y + h <= oy + oh + tol)


# ---- geometry, styles, flags, attributes ------------------------------------------------------------------------


def test_boxes_match_the_css(renderer: Renderer, fixture_server: str) -> None:
    out, s = render(renderer, fixture_server, "boxes.html")
    assert s.box[by_id(s, "abs")].tolist() == [100, 150, 300, 80]
    # 10.25 / 20.75 rounded to 0.1 px; 50.5 kept.
    assert s.box[by_id(s, "frac")].tolist() == pytest.approx([10.3, 20.8, 50.5, 10], abs=0.051)
    assert s.page.viewport == (1280, 800)
    assert s.page.document[1] == 2010  # #tall ends at 2000 + 10
    assert s.page.lang == "en" and s.page.title == "Boxes" and s.page.url.endswith("/pages/boxes.html")
    assert s.page.collector and "collect_ms" in s.page.timing


def test_flags_and_styles(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "boxes.html")
    banner, stick = by_id(s, "banner"), by_id(s, "stick")
    assert s.flags[banner] & FIXED and s.position[banner] == "fixed"
    assert s.flags[stick] & STICKY and not s.flags[stick] & FIXED
    links = np.nonzero(s.is_link)[0]
    assert [s.attr("id")[i] for i in links] == ["", "iconlink"]
    assert s.parent[links[0]] == by_id(s, "abs")
    assert s.is_image[by_id(s, "pic")] and s.box[by_id(s, "pic")][2:].tolist() == [4, 4]
    # An empty box painted with a background image is an image; a link with an icon and a label is not.
    assert s.is_image[by_id(s, "icon")] and not s.is_image[by_id(s, "iconlink")]
    assert s.is_link[by_id(s, "iconlink")]
    assert s.font_size[by_id(s, "big")] == 32 and s.font_size[by_id(s, "abs")] == 16
    assert s.opacity[by_id(s, "half")] == 0.5 and s.opacity[by_id(s, "halfkid")] == 1
    assert s.visible[by_id(s, "halfkid")]
    head = int(np.nonzero(s.tags == "head")[0][0])
    assert s.display[head] == "none" and not s.visible[head]
    assert s.display[by_id(s, "abs")] == "block" and s.display[links[0]] == "inline"


def test_attributes_collected(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "boxes.html")
    i = by_id(s, "abs")
    assert s.attr("class")[i] == "lead main-content"
    assert s.attr("role")[i] == "main"
    assert s.attr("aria-label")[i] == "abs box"
    assert s.attr("data-article-id")[i] == "7"
    assert "data-tracking" not in s.attrs  # data-* only when the name says content/article/main
    assert s.attr("alt")[by_id(s, "pic")] == "dot"


def test_text_nodes_rects_and_order(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "boxes.html")
    abs_id = by_id(s, "abs")
    first = int(np.nonzero(s.text_owner == abs_id)[0][0])
    assert s.texts[first] == "Known box "
    assert s.text_seq[first] == abs_id + 1  # right after its owner, before the <a>
    para = by_id(s, "para")
    (k,) = np.nonzero(s.text_owner == para)[0]
    rects = rects_of_text(s, int(k))
    assert len(rects) >= 3  # ~95 characters in a 200 px column wrap over several lines
    assert all(inside(r, s.box[para]) for r in rects)
    assert np.all(np.diff(rects[:, 1]) > 0)  # one rectangle per line, top to bottom
    assert 0 < rects[0, 3] <= 20  # glyph box of a 16 px font within the 20 px line
    # Script and style text is code, not text.
    assert not any("pageScriptRan" in t for t in s.texts)
    # Every rect of every text node lies within its owner's box (no overflow on this page).
    for k in range(s.m):
        owner = int(s.text_owner[k])
        if s.visible[owner]:
            assert all(inside(r, s.box[owner]) for r in rects_of_text(s, k)), s.texts[k]


def test_source_serialization(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "boxes.html")
    assert s.source is not None and s.source.startswith("<!DOCTYPE html>")
    assert 'window.pageScriptRan = 1 < 2 && "a" !== "b";' in s.source  # raw text stays raw
    assert "<!-- a comment -->" in s.source
    gif = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
    assert f'<img id="pic" src="{gif}" alt="dot" width="4" height="4" data-cx=' in s.source  # void: no end tag
    assert "</img>" not in s.source
    doc = lxml_html.document_fromstring(s.source)
    found = {int(el.get("data-cx")): el.tag for el in doc.iter() if isinstance(el.tag, str) and el.get("data-cx")}
    assert sorted(found) == list(range(s.n))
    assert all(found[i] == s.tags[i] for i in range(s.n))


# The browser's own serialization of the document, for comparison with the collector's.
NATIVE_SERIALIZATION = """() => { const parts = [];
    for (let n = document.firstChild; n; n = n.nextSibling) {
        if (n.nodeType === 10) parts.push('<!DOCTYPE ' + n.name + '>');
        else if (n.nodeType === 8) parts.push('<!--' + n.data + '-->');
        else if (n.nodeType === 1) parts.push(n.outerHTML);
    }
    return parts.join(''); }"""


@pytest.mark.parametrize("path", ["pages/boxes.html", "pages/hidden.html", "pages/rtl.html", "pages/cjk.html",
                                  "sample/article.html"])
def test_source_equals_the_browsers_serialization(renderer: Renderer, fixture_server: str, path: str) -> None:
    # Without shadow roots and frames, the collector's source minus its data-cx ids is exactly outerHTML:
    # escaping, raw text, void elements, comments, templates, noscript.
    out = renderer.render(fixture_server + path, source=True, extra={"native": NATIVE_SERIALIZATION})
    ours = re.sub(r' data-cx="\d+"', "", out.raw["source"])
    assert ours == out.extra["native"]


def test_snapshot_without_source(renderer: Renderer, fixture_server: str) -> None:
    out, s = render(renderer, fixture_server, "boxes.html", source=False)
    assert "source" not in out.raw and s.source is None


# ---- visibility ----------------------------------------------------------------------------------------------


def test_visibility_rules(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "hidden.html")
    expected = {"shown": True, "none": False, "nonekid": False, "attr": False, "invis": False, "inviskid": False,
                "revis": True, "transparent": False, "transkid": False, "off": False, "empty": False,
                "sronly": False, "rule": True}
    got = {k: bool(s.visible[by_id(s, k)]) for k in expected}
    assert got == expected
    assert s.visibility[by_id(s, "invis")] == "hidden" and s.visibility[by_id(s, "revis")] == "visible"
    assert s.display[by_id(s, "none")] == "none"
    # Text of a display:none subtree is kept (hidden text is information) but has no rectangles.
    (k,) = [k for k in range(s.m) if s.texts[k] == "In display none"]
    assert len(rects_of_text(s, k)) == 0
    assert not any("noscript text" in t or "template text" in t for t in s.texts)


# ---- shadow DOM and frames -------------------------------------------------------------------------------------


def test_open_shadow_root_is_walked(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "shadow.html")
    host, inner, light = by_id(s, "host"), by_id(s, "inner"), by_id(s, "light")
    assert s.flags[host] & SHADOW_HOST
    assert s.parent[inner] == host and s.parent[light] == host
    assert host < inner < light  # shadow children first, then light children
    assert texts_of(s, inner) == ["Inside the shadow root"]
    assert s.visible[inner] and s.visible[light]  # the light child is slotted
    closed = by_id(s, "closedhost")
    assert not s.flags[closed] & SHADOW_HOST and s.subtree_end[closed] == closed + 1
    assert not any("closed content" in t for t in s.texts)
    assert '<template shadowrootmode="open"><style' in (s.source or "")


def test_iframes(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "iframe.html")
    same, cross = by_id(s, "same"), by_id(s, "cross")
    inframe = by_id(s, "inframe")
    assert s.is_ancestor(same, inframe)
    frame_html = int(s.children(same)[0])
    assert s.tags[frame_html] == "html" and s.flags[frame_html] & IN_FRAME
    assert s.flags[inframe] & IN_FRAME and not s.flags[same] & IN_FRAME
    # iframe at (100, 200) with a 5 px border; the div at (20, 30) inside the frame's viewport.
    assert s.box[inframe].tolist() == [125, 235, 100, 50]
    (k,) = [k for k in range(s.m) if s.texts[k] == "Text inside the frame"]
    assert all(inside(r, s.box[inframe]) for r in rects_of_text(s, k))
    assert s.flags[cross] & OPAQUE_FRAME and s.subtree_end[cross] == cross + 1
    assert s.box[cross].tolist() == [600, 200, 410, 310]
    assert any("cross-origin" in w for w in s.page.warnings)


# ---- scripts and languages -------------------------------------------------------------------------------------


def test_rtl_arabic(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "rtl.html")
    assert s.page.lang == "ar" and s.page.dir == "rtl"
    art, h = by_id(s, "art"), by_id(s, "h")
    assert texts_of(s, h) == ["مكتبة جديدة في محطة العبارات القديمة"]
    (k,) = np.nonzero(s.text_owner == h)[0]
    r = rects_of_text(s, int(k))[0]
    # Right-aligned: the heading's line ends at the article's right edge and starts well right of its left edge.
    assert abs((r[0] + r[2]) - (s.box[art][0] + s.box[art][2])) <= 1
    assert r[0] > s.box[art][0] + 10
    assert "الميناء" in s.page.title


def test_cjk(renderer: Renderer, fixture_server: str) -> None:
    _, s = render(renderer, fixture_server, "cjk.html")
    assert s.page.lang == "ja"
    p1 = by_id(s, "p1")
    (k,) = np.nonzero(s.text_owner == p1)[0]
    assert s.texts[int(k)].startswith("北桟橋で十一年間")
    rects = rects_of_text(s, int(k))
    assert len(rects) >= 2  # ~75 characters in a 200 px column wrap (CJK breaks between any two characters)
    assert all(inside(r, s.box[p1]) for r in rects)
    assert s.attr("lang")[by_id(s, "zh")] == "zh"


# ---- hostile page ------------------------------------------------------------------------------------------------


def test_overridden_dom_methods_do_not_fool_the_renderer(renderer: Renderer, fixture_server: str) -> None:
    # The renderer collects in an isolated world, like an extension content script: the page's overrides of
    # getBoundingClientRect / getComputedStyle / Range.getClientRects are invisible there.
    _, s = render(renderer, fixture_server, "override.html")
    box = by_id(s, "box")
    assert s.box[box].tolist() == [40, 60, 320, 90]
    assert s.visible[box] and s.display[box] == "block"
    (k,) = np.nonzero(s.text_owner == box)[0]
    assert len(rects_of_text(s, int(k))) == 1
    assert s.page.warnings == ()


# ---- in the page's own world (pytest-playwright page): node ids map back to elements -----------------------------

COLLECT = collector_source()


def collect_in_page(page: Any, url: str) -> dict[str, Any]:
    page.goto(url)
    page.evaluate(COLLECT)
    return page.evaluate("() => globalThis.centrumCollect({source: true})")


def test_node_ids_map_back_to_elements(page: Any, fixture_server: str) -> None:
    raw = collect_in_page(page, fixture_server + "pages/boxes.html")
    s = parse_snapshot(raw)
    # Recompute, from the DOM itself, tag and parent of centrumNodes[i] and the DOM's own pre-order.
    dom = page.evaluate("""() => {
        const nodes = globalThis.centrumNodes;
        const index = new Map(nodes.map((n, i) => [n, i]));
        const order = [];
        const w = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_ELEMENT);
        do { order.push(index.get(w.currentNode)); } while (w.nextNode());
        return {
            tags: nodes.map(n => n.localName),
            parents: nodes.map(n => n.parentElement ? index.get(n.parentElement) : -1),
            order,
            abs: index.get(document.getElementById("abs")),
            boxes: nodes.map(n => { const r = n.getBoundingClientRect();
                                    return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }),
        };
    }""")
    assert dom["tags"] == s.tags.tolist()
    assert dom["parents"] == s.parent.tolist()
    assert dom["order"] == list(range(s.n))  # pre-order = the DOM's document order
    assert dom["abs"] == by_id(s, "abs")
    assert np.allclose(np.array(dom["boxes"]), s.box, atol=0.051)
    # The page was not written to: no data-cx attribute anywhere in the live DOM.
    assert page.evaluate("() => document.querySelectorAll('[data-cx]').length") == 0


def test_node_ids_across_shadow_and_frames(page: Any, fixture_server: str) -> None:
    for name in ("shadow.html", "iframe.html"):
        raw = collect_in_page(page, fixture_server + "pages/" + name)
        s = parse_snapshot(raw)
        dom = page.evaluate("""() => {
            const nodes = globalThis.centrumNodes;
            const index = new Map(nodes.map((n, i) => [n, i]));
            return nodes.map(n => {
                if (n.parentElement) return index.get(n.parentElement);
                const root = n.getRootNode();
                if (root.host) return index.get(root.host);                       // shadow root child -> host
                const frame = n.ownerDocument.defaultView.frameElement;           // frame's <html> -> <iframe>
                return frame ? index.get(frame) : -1;
            });
        }""")
        assert dom == s.parent.tolist(), name


def test_overrides_in_the_main_world_are_reported(page: Any, fixture_server: str) -> None:
    raw = collect_in_page(page, fixture_server + "pages/override.html")
    warnings = " ".join(raw["page"]["warnings"])
    assert "getBoundingClientRect" in warnings and "getComputedStyle" in warnings
    assert "Range.prototype.getClientRects" in warnings


def test_collector_survives_deep_nesting(page: Any) -> None:
    # 20000 nested divs: the walk is iterative, so no stack overflow; parents form one chain. (Under display:none:
    # Chromium's own layout crashes the tab beyond ~5000 levels, which is not what this tests.)
    page.set_content("<html><body style='display: none'></body></html>")
    page.evaluate("""() => { let e = document.body;
        for (let i = 0; i < 20000; i++) { const d = document.createElement('div'); e.appendChild(d); e = d; }
        e.textContent = 'deep'; }""")
    page.evaluate(COLLECT)
    s = parse_snapshot(page.evaluate("() => globalThis.centrumCollect({})"))
    assert s.n == 20003 and int(s.depth.max()) == 20001
    assert s.texts == ["deep"] and s.text_owner[0] == s.n - 1
