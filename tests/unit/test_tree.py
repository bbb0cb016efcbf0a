"""centrum.core.tree: subtree cover masks, the page's <body>, the text joiner's hidden-text switch."""

import numpy as np

from centrum.core import tree
from centrum.core.builders import E, T, build


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


def _product_page():
    """A product page: a visible summary, then each kind of collapsed disclosure panel, and hidden text that is no
    panel: a form after a button, a popup menu, a closed dialog (its close button is hidden too), a toolbar of
    buttons, a closed menu far from any trigger."""
    hide = {"display": "none"}
    return build(E("html", (0, 0, 1000, 2000), [
        E("body", (0, 0, 1000, 2000), [
            E("main", (0, 0, 800, 1500), [
                E("p", (0, 0, 800, 40), [T("Shoe made of recycled foam.")], name="intro"),
                E("details", (0, 50, 800, 20), [
                    E("summary", (0, 50, 800, 20), [T("Materials")]),
                    E("p", (0, 0, 0, 0), [T("Upper: knit polyester.", [])], name="in_details"),
                    T("Sole: natural rubber.", []),
                ], name="details"),
                E("h3", (0, 100, 800, 20), [
                    E("button", (0, 100, 200, 20), [T("Care")], attrs={"aria-expanded": "false"}),
                ]),
                E("div", (0, 0, 0, 0), [E("p", (0, 0, 0, 0), [T("Wash cold, dry flat.", [])])], name="after_button",
                  **hide),
                E("span", (0, 140, 200, 20), [T("Sizes")],
                  attrs={"role": "button", "aria-expanded": "false", "aria-controls": "size-chart"}),
                E("p", (0, 160, 800, 20), [T("Free returns.")]),
                E("table", (0, 0, 0, 0), [E("td", (0, 0, 0, 0), [T("EU 42 = US 9", [])])], id="size-chart",
                  name="controlled", **hide),
                E("div", (0, 0, 0, 0), [T("Ships in two days.", [])], name="tabpanel", attrs={"role": "tabpanel"},
                  **hide),
                E("button", (0, 200, 100, 20), [T("Ask us")]),
                E("div", (0, 0, 0, 0), [E("textarea", (0, 0, 0, 0)), T("Thanks for your message.", [])],
                  name="after_form", **hide),
                E("button", (0, 240, 100, 20), [T("Share")], attrs={"aria-haspopup": "menu"}),
                E("ul", (0, 0, 0, 0), [E("li", (0, 0, 0, 0), [T("Copy the link", [])])], name="popup", **hide),
                E("div", (0, 0, 0, 0), [
                    E("button", (0, 0, 0, 0), [T("Close", [])]),
                    E("p", (0, 0, 0, 0), [T("Sign up for our newsletter.", [])], name="in_dialog"),
                ], name="dialog", **hide),
                E("button", (0, 280, 100, 20), [T("Play")]),
                E("div", (0, 0, 0, 0), [E("button", (0, 0, 0, 0), [T("Mute the video now", [])]), T("0:00", [])],
                  name="toolbar", **hide),
            ], name="main"),
            E("nav", (0, 0, 0, 0), [T("Menu: home, shop, cart", [])], name="menu", **hide),
        ], name="body"),
    ]))


def test_disclosure_panels_follow_the_markup_of_disclosure_widgets_only():
    b = _product_page()
    s, ids = b.snapshot, b.ids
    panels = tree.disclosure_panels(s)
    for name in ("in_details", "after_button", "controlled", "tabpanel"):
        assert panels[ids[name]], name
    for name in ("after_form", "popup", "dialog", "in_dialog", "toolbar", "menu", "intro", "details", "main"):
        assert not panels[ids[name]], name
    assert not panels[s.tags == "summary"].any()


def test_the_text_joiner_keeps_disclosed_text_and_the_result_lists_its_panels():
    b = _product_page()
    s, ids = b.snapshot, b.ids
    text = s.text_of([ids["main"]])
    for shown in ("Shoe made of recycled foam.", "Materials", "Upper: knit polyester.", "Sole: natural rubber.",
                  "Wash cold, dry flat.", "EU 42 = US 9", "Ships in two days."):
        assert shown in text, shown
    for hidden in ("Thanks for your message.", "Copy the link", "Sign up", "Mute the video"):
        assert hidden not in text, hidden
    assert "Menu" not in s.text_of([ids["body"]])
    # Document order, every line its own block.
    assert text.index("Materials") < text.index("Upper: knit") < text.index("Wash cold") < text.index("EU 42")
    assert s.disclosed_in([ids["main"]]) == sorted(
        [ids["details"], ids["in_details"], ids["after_button"], ids["controlled"], ids["tabpanel"]])
    assert s.disclosed_in([ids["intro"]]) == []
    # A page without any disclosure widget pays one mask and changes nothing.
    plain = _page().snapshot
    assert not plain.text_disclosed.any() and plain.disclosed_in([0]) == []
