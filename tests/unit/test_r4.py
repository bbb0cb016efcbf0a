"""R4 ranking (Alarte & Silva 2020): each rule of the paper on a hand-built page whose answer follows by hand."""

from __future__ import annotations

import json
import math

import pytest

from centrum import algorithms
from centrum.algorithms import r4
from centrum.core.builders import E, T, build

W = (0, 0, 1000, 3000)


def page(*body_children: E) -> E:
    return E("html", W, [E("body", W, list(body_children))])


def words(k: int, word: str = "w") -> T:
    return T(" ".join([word] * k))


def ratios(result, node: int) -> list[float]:
    for row in result.debug["ratios"]["rows"]:
        if row["node"] == node:
            return row["raw"]
    raise AssertionError(f"node {node} was not rated")


def deep_filler() -> E:
    """A sidebar five rated levels deep, so that the body-children rule (depth < BODY's children) stays off."""
    return E("aside", (0, 0, 200, 500), [E("div", (0, 0, 200, 500), [E("div", (0, 0, 200, 500), [
        E("div", (0, 0, 200, 500), [E("p", (0, 0, 200, 20), [T("side note")])])])])])


# ---- the four ratios (section 3.2) ---------------------------------------------------------------------------


def test_word_ratio_divides_each_text_leaf_by_its_distance_and_skips_link_text():
    b = build(page(E("div", (0, 0, 800, 900), [
        words(3),                                                          # distance 1: 3 / 1
        E("p", (0, 0, 800, 100), [words(4)], name="p"),                    # distance 2: 4 / 2
        E("p", (0, 100, 800, 100), [E("span", (0, 100, 80, 20), [words(6)])]),  # distance 3: 6 / 3
        E("p", (0, 200, 800, 100), [E("a", (0, 200, 80, 20), [words(9)])]),     # inside a link: not counted
    ], name="div"), deep_filler()))
    r = r4.run(b.snapshot)
    assert ratios(r, b.ids["div"])[0] == pytest.approx(3 + 4 / 2 + 6 / 3)
    assert ratios(r, b.ids["p"])[0] == pytest.approx(4.0)


def test_hyperlink_ratio_is_one_over_links_or_one_without_links():
    links = [E("a", (0, i * 20, 100, 20), [T(f"link {i}")]) for i in range(4)]
    b = build(page(
        E("div", (0, 0, 500, 100), [E("p", (0, 0, 500, 100), links)], name="links"),
        E("div", (0, 100, 500, 100), [E("p", (0, 100, 500, 100), [words(5)])], name="plain"),
        deep_filler(),
    ))
    r = r4.run(b.snapshot)
    assert ratios(r, b.ids["links"])[1] == pytest.approx(1 / 4)
    assert ratios(r, b.ids["plain"])[1] == 1.0


def test_children_ratio_needs_more_than_two_child_nodes_text_nodes_included():
    p = lambda: E("p", (0, 0, 100, 20), [words(2)])  # noqa: E731
    b = build(page(
        E("div", (0, 0, 500, 100), [p(), p(), p()], name="three"),
        E("div", (0, 100, 500, 100), [p(), p()], name="two"),
        E("div", (0, 200, 500, 100), [p(), words(3), p()], name="mixed"),
        deep_filler(),
    ))
    r = r4.run(b.snapshot)
    assert ratios(r, b.ids["three"])[2] == 1.0
    assert ratios(r, b.ids["two"])[2] == 0.0
    assert ratios(r, b.ids["mixed"])[2] == 1.0


def test_position_ratio_is_one_in_the_upper_half_then_max_depth_over_depth_minus_one():
    # Rated depths from BODY: d1=1 ... p=5 (the span is not a rated tag, so it adds no level); max depth 5.
    b = build(page(E("div", W, [E("div", W, [E("span", W, [E("div", W, [E("div", W, [
        E("p", (0, 0, 100, 20), [words(2)], name="p")], name="d4")], name="d3")])], name="d2")], name="d1")))
    r = r4.run(b.snapshot, r4.Config(body_children_rule=False))
    assert r.debug["ratios"]["max_depth"] == 5
    got = [ratios(r, b.ids[k])[3] for k in ("d1", "d2", "d3", "d4", "p")]
    assert got == pytest.approx([1.0, 1.0, 5 / 3 - 1, 5 / 4 - 1, 0.0], abs=1e-4)  # debug rounds to 4 places
    # Counting plain DOM levels instead: the span is a level, max depth 6.
    r = r4.run(b.snapshot, r4.Config(body_children_rule=False, rated_depth=False))
    assert [ratios(r, b.ids[k])[3] for k in ("d3", "p")] == pytest.approx([6 / 4 - 1, 0.0], abs=1e-4)


def test_excluded_tags_and_leaves_are_not_rated():
    b = build(page(
        E("nav", (0, 0, 100, 100), [E("a", (0, 0, 50, 20), [T("home")], name="a")], name="nav"),
        E("h1", (0, 100, 500, 40), [T("Title")], name="h1"),
        E("div", (0, 200, 500, 100), [E("p", (0, 200, 500, 100), [words(5)])], name="div"),
        E("div", (0, 300, 500, 100), [], name="leaf"),
        deep_filler(),
    ))
    rated = {row["node"] for row in r4.run(b.snapshot).debug["ratios"]["rows"]}
    assert b.ids["div"] in rated
    assert not rated & {b.ids[k] for k in ("nav", "a", "h1", "leaf")}
    assert b.snapshot.parent[b.ids["div"]] not in rated  # BODY itself is never rated


# ---- standardization and the c-SET (section 3.3) --------------------------------------------------------------


def test_cset_is_the_c_points_farthest_from_the_centroid_of_the_standardized_ratios():
    # Four rated <p>: word ratios 1, 1, 1, 5; the other three ratios are constant (z = 0). Mean 2, std sqrt(3):
    # z = -1/sqrt(3) three times and sqrt(3) once, so the distances to the centroid (0) are 0.577 and 1.732.
    b = build(page(*[E("p", (0, i * 20, 500, 20), [words(5 if i == 3 else 1)], name=f"p{i}") for i in range(4)]))
    r = r4.run(b.snapshot, r4.Config(c=2, body_children_rule=False))
    rows = {row["node"]: row for row in r.debug["ratios"]["rows"]}
    assert rows[b.ids["p3"]]["distance"] == pytest.approx(math.sqrt(3), abs=1e-3)
    assert rows[b.ids["p0"]]["distance"] == pytest.approx(1 / math.sqrt(3), abs=1e-3)
    assert rows[b.ids["p3"]]["z"][1:] == [0.0, 0.0, 0.0]
    # c = 2: the outlier, then the first of the three equally distant points in document order.
    assert [e["node"] for e in r.debug["cset"]] == [b.ids["p3"], b.ids["p0"]]
    assert [c.label.split()[0] for c in r.candidates[1:3]] == ["c-SET", "c-SET"]


# ---- reduce (Algorithm 3) and select (Algorithm 4) -------------------------------------------------------------


def test_reduction_drops_a_node_whose_cset_ancestor_has_exactly_the_same_text():
    b = build(page(E("div", W, [
        E("div", W, [E("p", W, [words(30)], name="p1"), E("p", W, [words(20)], name="p2")], name="inner"),
    ], name="outer"), E("div", W, [E("p", W, [T("other text")], name="other")], name="sibling")))
    s = b.snapshot
    ids = b.ids
    kept, dropped = r4.reduce_cset(s, [ids["outer"], ids["inner"], ids["p1"], ids["other"], ids["sibling"]])
    # inner has outer's text exactly; p1 has less text than its ancestors; other has sibling's text.
    assert kept == [ids["outer"], ids["p1"], ids["sibling"]]
    assert {d["node"]: d["ancestor"] for d in dropped} == {ids["inner"]: ids["outer"], ids["other"]: ids["sibling"]}


def test_selection_takes_best_words_per_tag_with_its_cset_siblings():
    b = build(page(E("div", W, [
        E("div", W, [E("p", W, [words(40)]), E("p", W, [words(40)])], name="a"),   # 80 words / 3 tags
        E("div", W, [E("p", W, [words(10)])], name="b"),                           # 10 / 2
        E("div", W, [E("p", W, [words(9)])], name="not_in_cset"),
    ]), E("div", W, [E("p", W, [words(30)])], name="far")))                        # 30 / 2, other parent
    s, ids = b.snapshot, b.ids
    ratio = s.subtree_sum(s.text_per_element(s.text_words.astype(float))) / (
        s.subtree_end - range(s.n))
    best, chosen = r4.select(s, [ids["far"], ids["a"], ids["b"]], ratio)
    assert best == [ids["a"]]
    assert chosen == [ids["a"], ids["b"]]  # b is a c-SET sibling of a; far is not a sibling; c-SET order kept


def test_selection_ties_select_all_and_nested_picks_collapse():
    b = build(page(
        E("div", W, [E("p", W, [words(20)])], name="x"),
        E("section", W, [E("div", W, [E("p", W, [words(20)])], name="y")]),
        E("div", W, [E("p", W, [words(3)])], name="z"),
    ))
    s, ids = b.snapshot, b.ids
    ratio = s.subtree_sum(s.text_per_element(s.text_words.astype(float))) / (
        s.subtree_end - range(s.n))
    best, chosen = r4.select(s, [ids["z"], ids["x"], ids["y"]], ratio)
    # x and y tie at 20 words / 2 tags; z is x's sibling (same parent BODY) so it comes along.
    assert sorted(best) == sorted([ids["x"], ids["y"]])
    assert chosen == [ids["z"], ids["x"], ids["y"]]


def test_end_to_end_article_wins_over_menus_and_footer():
    article = E("article", (300, 100, 900, 2000), [
        E("h1", (300, 100, 900, 50), [T("A headline")]),
        *[E("p", (300, 200 + 100 * i, 900, 90), [words(60, "text")]) for i in range(6)],
    ], name="article")
    menu = E("div", (0, 100, 250, 600), [E("ul", (0, 100, 250, 600), [
        E("li", (0, 100 + 30 * i, 250, 30), [E("a", (0, 100 + 30 * i, 250, 30), [T(f"Section {i}")])])
        for i in range(12)])], name="menu")
    footer = E("div", (0, 2200, 1200, 100), [E("p", (0, 2200, 1200, 100), [T("(c) 2026 someone, all rights")])])
    b = build(page(E("div", (0, 0, 1200, 2400), [E("div", (0, 0, 1200, 2400), [menu, article, footer])])))
    r = algorithms.run("r4", b.snapshot)
    assert r.nodes == [b.ids["article"]]
    assert "text text" in (r.text or "") and "Section" not in (r.text or "")
    assert r.candidates[0].label == "R4 selection" and r.candidates[0].nodes == [b.ids["article"]]
    # The debug trace names every stage and is plain JSON (the candidate debugger draws it).
    assert {"page", "ratios", "cset", "reduce", "select", "postprocess", "result"} <= set(r.debug)
    assert all({"words_tags", "words", "tags"} <= set(e) for e in r.debug["cset"])
    assert json.loads(json.dumps(r.to_json()))["nodes"] == r.nodes


# ---- body-children rule (section 3.1) --------------------------------------------------------------------------


def test_body_children_rule_selects_all_body_children_of_a_shallow_wide_page():
    # Page depth in rated tags is 2 (div > p) and BODY has 3 rated children: 2 < 3, so all of BODY's children.
    kids = [E("div", (0, 100 * i, 500, 100), [E("p", (0, 100 * i, 500, 100), [words(5 + i)])], name=f"k{i}")
            for i in range(3)]
    b = build(page(*kids, E("script", (0, 0, 0, 0), [])))
    r = r4.run(b.snapshot)
    assert r.debug["body_rule"]["applied"] is True
    assert r.nodes == [b.ids["k0"], b.ids["k1"], b.ids["k2"]]  # the hidden script is not shown content
    # A deeper page of the same width does not trigger it (depth 5 >= 4 children).
    b = build(page(*[E("div", (0, 100 * i, 500, 100), [E("p", (0, 100 * i, 500, 100), [words(5)])])
                     for i in range(3)], deep_filler()))
    assert r4.run(b.snapshot).debug["body_rule"]["applied"] is False


# ---- post-process (section 3.5, Algorithm 5) --------------------------------------------------------------------


def _article_with(*extras: E) -> E:
    return E("article", (300, 0, 900, 3000), [
        *[E("p", (300, 100 * i, 900, 90), [words(80, "story")]) for i in range(8)], *extras], name="article")


def _link(i: int, label: str = "more") -> E:
    return E("a", (300, 2000 + 20 * i, 100, 20), [T(f"{label} {i}")])


def test_postprocess_removes_link_groups_over_tr_and_hr_only():
    group = E("div", (300, 2000, 900, 200), [_link(i, "related") for i in range(8)], name="group")  # 8 > 7 links
    few = E("div", (300, 2200, 900, 200), [_link(i, "see") for i in range(7)], name="few")  # only 7 links
    prose = E("div", (300, 2400, 900, 200), [E("p", (300, 2400, 900, 200), [
        words(40, "prose"), *[_link(i, "ref") for i in range(8)]])], name="prose")  # 16 link words / 40
    b = build(page(_article_with(group, few, prose), deep_filler()))
    r = r4.run(b.snapshot)
    assert r.debug["select"]["chosen"] == [b.ids["article"]]
    removed = {e["node"] for e in r.debug["postprocess"]["removed"]}
    assert removed == {b.ids["group"]}
    assert "related" not in r.text and "see 0" in r.text and "ref 0" in r.text
    # The kept content is reported as maximal subtrees around the removed group.
    assert b.ids["article"] not in r.nodes and b.ids["group"] not in r.nodes
    assert b.ids["few"] in r.nodes and b.ids["prose"] in r.nodes
    off = r4.run(b.snapshot, r4.Config(postprocess=False))
    assert off.nodes == [b.ids["article"]] and "related" in off.text


def test_postprocess_removes_a_selected_sibling_that_is_a_link_group_but_never_the_whole_answer():
    b = build(page(E("div", W, [_article_with(), E("div", (0, 0, 250, 900), [
        E("div", (0, 20 * i, 250, 20), [_link(i, "menu")]) for i in range(9)], name="menu")]), deep_filler()))
    r = r4.run(b.snapshot, r4.Config(c=8))
    assert set(r.debug["select"]["chosen"]) == {b.ids["article"], b.ids["menu"]}  # siblings in the c-SET
    assert [e["node"] for e in r.debug["postprocess"]["removed"]] == [b.ids["menu"]]
    assert r.nodes == [b.ids["article"]] and "menu" not in r.text
    # A page whose only selection is a link group: its inside is cleaned, the selected node itself stays.
    only = build(page(E("div", W, [E("ul", W, [E("li", W, [_link(i, "menu")]) for i in range(9)], name="ul")],
                        name="nav"), deep_filler()))
    r = r4.run(only.snapshot)
    chosen = r.debug["select"]["chosen"]
    assert chosen and all(e["node"] not in chosen for e in r.debug["postprocess"]["removed"])


def test_postprocess_removes_lists_of_single_links_but_keeps_lists_with_images_or_text():
    def li(k: int, *extra: E | T) -> E:
        return E("li", (300, 2000 + 20 * k, 900, 20), [_link(k), *extra])

    links_only = E("ul", (300, 2000, 900, 60), [li(k) for k in range(3)], name="links_only")
    with_images = E("ul", (300, 2100, 900, 60), [li(k, E("img", (0, 0, 20, 20))) for k in range(3)], name="imgs")
    with_text = E("ol", (300, 2200, 900, 60), [li(k, T(" explained at length")) for k in range(3)], name="text")
    b = build(page(_article_with(links_only, with_images, with_text), deep_filler()))
    r = r4.run(b.snapshot)
    assert r.debug["select"]["chosen"] == [b.ids["article"]]
    assert {e["node"] for e in r.debug["postprocess"]["removed"]} == {b.ids["links_only"]}
    assert b.ids["imgs"] in r.nodes and b.ids["text"] in r.nodes  # images and media stay in the result
    assert r4.run(b.snapshot, r4.Config(remove_link_lists=False)).debug["postprocess"]["removed"] == []


# ---- unspaced scripts ------------------------------------------------------------------------------------------


def test_chinese_and_japanese_text_count_one_word_per_character():
    zh = "北京是中华人民共和国的首都"  # 13 Han characters
    ja = "東京は日本の首都です"  # 10 characters of kanji and hiragana
    b = build(page(
        E("div", W, [E("p", W, [T(zh)], name="zh")], name="zhdiv"),
        E("div", W, [E("p", W, [T(ja)], name="ja")], name="jadiv"),
        deep_filler(),
    ), lang="ja")
    r = r4.run(b.snapshot)
    assert ratios(r, b.ids["zh"])[0] == 13 and ratios(r, b.ids["zhdiv"])[0] == pytest.approx(13 / 2)
    assert ratios(r, b.ids["ja"])[0] == 10


def test_unspaced_article_is_found_on_a_japanese_page():
    body = "これは記事の本文です。日本語の文章には単語の間に空白がありません。" * 8
    article = E("div", (300, 0, 900, 2000), [E("p", (300, 100 * i, 900, 90), [T(body)]) for i in range(5)],
                name="article")
    menu = E("div", (0, 0, 250, 600), [E("ul", (0, 0, 250, 600), [
        E("li", (0, 30 * i, 250, 30), [E("a", (0, 30 * i, 250, 30), [T(f"メニュー{i}")])]) for i in range(10)])])
    b = build(page(E("div", W, [E("div", W, [menu, article])])), lang="ja")
    r = algorithms.run("r4", b.snapshot)
    assert r.nodes == [b.ids["article"]]


# ---- odd pages ---------------------------------------------------------------------------------------------------


def test_pages_without_body_or_text_give_no_result_with_a_reason():
    frameset = build(E("html", W, [E("frameset", W, [E("frame", W)])]))
    r = algorithms.run("r4", frameset.snapshot)
    assert r.nodes == [] and "body" in r.message
    empty = build(page())
    r = algorithms.run("r4", empty.snapshot)
    assert r.nodes == [] and "rated" in r.message


def test_stray_empty_body_hidden_page_and_bare_body_text_still_get_an_answer():
    # Broken markup: an empty <body> inside <head>; the real BODY is the one that holds the page.
    stray = build(E("html", W, [E("head", (0, 0, 0, 0), [E("body", (0, 0, 0, 0), [])]), E("body", W, [
        E("div", W, [E("p", W, [words(50)]), E("p", W, [words(50)])], name="main"), deep_filler()], name="body")]))
    r = r4.run(stray.snapshot)
    assert r.debug["page"]["body"] == stray.ids["body"] and r.nodes == [stray.ids["main"]]
    # Nothing shown (page hidden until its scripts run): the DOM is scored as in the paper.
    def off(tag: str, *kids: E | T, name: str | None = None) -> E:
        return E(tag, W, list(kids), name=name, visible=False)

    hidden = build(off("html", off("body", off("div", off("p", words(50)), off("p", words(50)), name="main"),
                                   off("div", off("div", off("div", off("p", T("side note"))))))))
    assert not hidden.snapshot.visible.any()
    r = r4.run(hidden.snapshot)
    assert r.nodes == [hidden.ids["main"]] and "visible_only=False" in r.debug["fallback"]
    # Text straight inside BODY: no node is rated, BODY itself is the answer.
    bare = build(E("html", W, [E("body", W, [words(5)], name="body")]))
    r = r4.run(bare.snapshot)
    assert r.nodes == [bare.ids["body"]] and r.text == "w w w w w"
