"""centrum.tree: subtree cover masks, the page's <body>, the text joiner's hidden-text switch."""

import numpy as np

from centrum import tree
from centrum.testing import E, T, build


def _page():
    return build(E("html", (0, 0, 1000, 1000), [
        E("head", (0, 0, 0, 0), [E("body", (0, 0, 0, 0), name="stray")]),
        E("body", (0, 0, 1000, 1000), [
            E("div", (0, 0, 1000, 100), [E("p", (0, 0, 1000, 20), [T("One")], name="p1")], name="d1"),
            E("div", (0, 100, 1000, 100), [T("Two")], name="d2"),
            E("div", (0, 0, 0, 0), [T("Hidden", [])], name="d3"),
        ], name="body"),
    ]))


def test_cover_counts_nested_roots_and_ignores_ids_outside_the_tree():
    b = _page()
    s, ids = b.snapshot, b.ids
    count = tree.cover_count(s, [ids["d1"], ids["p1"], -1, s.n + 5])
    assert count[ids["d1"]] == 1 and count[ids["p1"]] == 2 and count[ids["d2"]] == 0
    mask = np.zeros(s.n, dtype=bool)
    mask[ids["d2"]] = True
    assert tree.covered(s, mask).sum() == 1 and tree.covered(s.subtree_end, [ids["body"]])[ids["p1"]]
    weighted = tree.cover_count(s, [ids["d1"], ids["d2"]], weights=np.array([3.0, 5.0]))
    assert weighted[ids["p1"]] == 3.0 and weighted[ids["d2"]] == 5.0 and weighted[ids["body"]] == 0.0
    assert not tree.covered(s, []).any()


def test_main_body_is_the_largest_top_document_body():
    b = _page()
    assert tree.main_body(b.snapshot) == b.ids["body"]
    assert tree.main_body(build(E("html", (0, 0, 10, 10), [E("div", (0, 0, 10, 10))])).snapshot) is None


def test_text_of_mask_leaves_unrendered_text_out_unless_asked():
    s = _page().snapshot
    keep = np.ones(s.m, dtype=bool)
    assert tree.text_of_mask(s, keep) == "One\nTwo"
    assert tree.text_of_mask(s, keep, hidden=True) == "One\nTwo\nHidden"
    assert tree.text_of_mask(s, keep, separator="") == "One Two"
