import numpy as np
import pytest

from centrum.core.builders import E, T, build
from centrum.core.snapshot import SnapshotError, parse_snapshot


def page():
    return E("html", (0, 0, 1000, 2000), [
        E("body", (0, 0, 1000, 2000), [
            E("div", (0, 0, 1000, 100), [T("Header"), E("a", (0, 0, 50, 20), [T("Home")], name="home")]),
            E("article", (100, 200, 600, 800), [E("p", (100, 200, 600, 100), [T("Body text here.")])],
              name="art"),
        ]),
    ])


def test_tree_structure_is_pre_order():
    b = build(page())
    s = b.snapshot
    assert s.n == 6
    assert s.tags.tolist() == ["html", "body", "div", "a", "article", "p"]
    assert s.depth.tolist() == [0, 1, 2, 3, 2, 3]
    assert s.subtree_end.tolist() == [6, 6, 4, 4, 6, 6]
    assert s.children(1).tolist() == [2, 4]
    assert s.is_link[b.ids["home"]]
    chars = s.subtree_sum(s.text_per_element(s.text_len.astype(float)))
    assert chars[b.ids["art"]] == len("Body text here.")
    assert chars[0] == len("Header") + len("Home") + len("Body text here.")
    assert s.text_of([b.ids["art"]]) == "Body text here."


def test_text_box_and_area_union_of_rects():
    two_lines = T("two lines", [(0, 0, 100, 20), (0, 20, 50, 20)])
    b = build(E("html", (0, 0, 100, 100), [E("p", (0, 0, 100, 40), [two_lines])]))
    s = b.snapshot
    assert s.text_box.tolist() == [[0, 0, 100, 40]]
    assert s.text_area.tolist() == [100 * 20 + 50 * 20]


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda r: r["elements"]["parent"].__setitem__(2, 5), "elements.parent[2]"),
        (lambda r: r["elements"]["parent"].__setitem__(0, 0), "elements.parent[0]"),
        (lambda r: r["elements"]["box"].__setitem__(3, float("nan")), "elements.box[3]"),
        (lambda r: r["elements"]["box"].__setitem__(2, -5), "elements.box[0]"),
        (lambda r: r["elements"]["tag"].__setitem__(1, 99), "elements.tag[1]"),
        (lambda r: r["elements"]["tag"].__setitem__(1, "div"), "elements.tag[1]"),
        (lambda r: r["elements"]["flags"].pop(), "elements.flags"),
        (lambda r: r["elements"].pop("display"), "elements.display"),
        (lambda r: r["text"]["owner"].__setitem__(0, 77), "text.owner[0]"),
        (lambda r: r["text"]["rects"].pop(), "text.rects"),
        (lambda r: r["page"].__setitem__("viewport", [0, 100]), "page.viewport"),
        (lambda r: r.__setitem__("protocol", 2), "protocol"),
        (lambda r: r["elements"]["opacity"].__setitem__(0, 3), "elements.opacity[0]"),
        (lambda r: r["attrs"]["node"].__setitem__(0, -1), "attrs.node[0]"),
        (lambda r: r.__setitem__("source", 5), "source"),
        (lambda r: r.__setitem__("json_ld", "{}"), "json_ld"),
        (lambda r: r.__setitem__("json_ld", ["{}", 5]), "json_ld"),
        (lambda r: r.__setitem__("json_ld", ["{}"] * 257), "json_ld"),
        (lambda r: r.__setitem__("json_ld", ["x" * (2 * 1024 * 1024), "y" * (2 * 1024 * 1024 + 1)]), "json_ld"),
    ],
)
def test_each_bad_field_is_named(mutate, field):
    raw = build(page()).raw
    mutate(raw)
    with pytest.raises(SnapshotError) as err:
        parse_snapshot(raw)
    assert err.value.field == field


def test_empty_snapshot_is_valid():
    raw = build(page()).raw
    for k in raw["elements"]:
        raw["elements"][k] = []
    raw["attrs"] = {"node": [], "name": [], "value": []}
    raw["text"] = {"owner": [], "seq": [], "text": [], "rect_offsets": [0], "rects": []}
    s = parse_snapshot(raw)
    assert s.n == 0 and s.m == 0
    assert s.depth.shape == (0,) and s.subtree_end.shape == (0,)


def test_deep_nesting_is_linearithmic():
    n = 10_000
    raw = build(page()).raw
    raw["elements"] = {
        "parent": list(range(-1, n - 1)), "tag": [0] * n, "box": [0, 0, 10, 10] * n, "display": [0] * n,
        "position": [0] * n, "visibility": [0] * n, "opacity": [1] * n, "font_size": [16] * n, "flags": [1] * n,
    }
    raw["attrs"] = {"node": [], "name": [], "value": []}
    raw["text"] = {"owner": [n - 1], "seq": [n], "text": ["deep"], "rect_offsets": [0, 1], "rects": [0, 0, 1, 1]}
    s = parse_snapshot(raw)
    assert s.depth[-1] == n - 1
    assert s.subtree_end[0] == n and s.subtree_end[n - 1] == n
    np.testing.assert_array_equal(s.subtree_sum(np.ones(n)), n - np.arange(n))


def test_text_of_breaks_lines_at_blocks_only_and_glues_touching_inline_text():
    b = build(E("html", (0, 0, 1000, 1000), [E("body", (0, 0, 1000, 1000), [
        E("div", (0, 0, 1000, 100), [
            T("By", [(0, 0, 20, 20)]),
            E("a", (25, 0, 90, 20), [T("Maren Holt", [(25, 0, 90, 20)])]),
            T("· 20 November", [(120, 0, 100, 20)]),
        ], name="byline"),
        E("p", (0, 100, 1000, 20), [
            E("b", (0, 100, 30, 20), [T("Hel", [(0, 100, 30, 20)])]),
            T("lo world", [(30, 100, 80, 20)]),
        ]),
        E("div", (0, 0, 0, 0), [T("hidden")], display="none"),
        E("p", (0, 140, 1000, 20), [T("Last  line", [(0, 140, 80, 20)])]),
    ])]))
    s = b.snapshot
    assert s.text_of([0]) == "By Maren Holt · 20 November\nHello world\nLast line"
    assert s.text_of([]) == ""


def test_huge_integers_are_refused_not_wrapped():
    raw = build(page()).raw
    raw["elements"]["flags"][2] = 1e300
    with pytest.raises(SnapshotError) as err:
        parse_snapshot(raw)
    assert err.value.field == "elements.flags[2]"


def test_json_ld_texts_are_kept_up_to_their_limits():
    raw = build(page()).raw
    assert parse_snapshot(raw).json_ld is None
    raw["json_ld"] = ['{"@type": "Article"}'] * 256
    assert parse_snapshot(raw).json_ld == ['{"@type": "Article"}'] * 256
    raw["json_ld"] = ["x" * (4 * 1024 * 1024)]
    assert len(parse_snapshot(raw).json_ld[0]) == 4 * 1024 * 1024
