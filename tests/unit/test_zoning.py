"""HTML zoning (Rae et al., DocEng '18) on hand-built snapshots: every expected answer follows from the rules of
sections 3.1-3.3 (and the public code's details) applied to the geometry written in the test."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from centrum import algorithms
from centrum.algorithms import zoning
from centrum.core.builders import E, T, build

# Two sentences of >= 4 words each: a paragraph under both the script test and the English verb test.
EN = "The committee published its findings after a year. Researchers measured the effect on small farms."
ZH = "委员会在全区举行了一年的听证会后公布了调查结果。研究人员测量了对小农场的影响，发现产量稳步上升。"
AR = "نشرت اللجنة نتائجها بعد عام من جلسات الاستماع. قاس الباحثون التأثير على المزارع الصغيرة ووجدوا ارتفاعا مطردا."
HI = "समिति ने पूरे क्षेत्र में एक वर्ष की सुनवाई के बाद अपने निष्कर्ष प्रकाशित किए। शोधकर्ताओं ने छोटे खेतों पर प्रभाव को मापा।"
TH = "คณะกรรมการเผยแพร่ผลการศึกษาหลังจากการรับฟังความคิดเห็นหนึ่งปี นักวิจัยวัดผลกระทบต่อฟาร์มขนาดเล็กและพบว่าผลผลิตเพิ่มขึ้น"
JA = "委員会は地域全体での一年間の公聴会を経て調査結果を発表した。研究者たちは小規模農家への影響を測定した。"


def page(*children: E, w: float = 1200, h: float = 3000) -> E:
    return E("html", (0, 0, w, h), [E("body", (0, 0, w, h), list(children), name="body")])


def zones_of(result: Any) -> list[dict[str, Any]]:
    return result.debug["zones"]


def leaf_elements(result: Any) -> list[int]:
    return [z["element"] for z in zones_of(result) if z["leaf"]]


def leaves_under(result: Any, element: int) -> list[int]:
    """Elements of the leaf zones whose parent zone is the zone of ``element``."""
    zs = zones_of(result)
    pid = next(z["id"] for z in zs if not z["leaf"] and z["element"] == element)
    return [z["element"] for z in zs if z["leaf"] and z["parent"] == pid]


def run(b: Any, **params: Any) -> Any:
    return algorithms.run("zoning", b.snapshot, params)


# ---- section 3.1: line-break rules ------------------------------------------------------------------------


def test_two_block_children_break_the_parent_into_two_zones():
    b = build(page(E("div", (0, 0, 800, 200), [
        E("p", (0, 0, 800, 50), [T(EN)], name="a"),
        E("p", (0, 60, 800, 50), [T(EN)], name="b"),
    ], name="div")))
    r = run(b)
    assert leaf_elements(r) == [b.ids["a"], b.ids["b"]]
    # The div is a non-leaf zone (it broke down); the body above it too.
    nonleaf = [z["element"] for z in zones_of(r) if not z["leaf"]]
    assert nonleaf == [b.ids["body"], b.ids["div"]]


def test_block_and_inline_children_break_down_and_inline_runs_form_one_zone():
    b = build(page(E("div", (0, 0, 800, 200), [
        T("Loose text before"), E("b", (100, 0, 50, 20), [T("bold")]), T("and after."),
        E("p", (0, 60, 800, 50), [T(EN)], name="p"),
    ], name="div")))
    r = run(b)
    leaves = [z for z in zones_of(r) if z["leaf"]]
    assert len(leaves) == 2
    # The run "Loose text before / bold / and after." is one zone anchored on the div (its first item is text).
    assert leaves[0]["element"] == b.ids["div"] and leaves[1]["element"] == b.ids["p"]


def test_only_inline_children_do_not_break_down():
    b = build(page(
        E("div", (0, 0, 800, 200), [T("one"), E("a", (50, 0, 50, 20), [T("two")]), T("three")], name="inl"),
        E("div", (0, 300, 800, 200), [T(EN)], name="other"),
    ))
    r = run(b)
    assert leaf_elements(r) == [b.ids["inl"], b.ids["other"]]


def test_significant_br_splits_an_inline_run_but_a_trailing_br_does_not():
    split = build(page(E("div", (0, 0, 800, 200), [
        E("span", (0, 0, 300, 20), [T("first line")], name="s1"), E("br", (300, 0, 0, 20)),
        E("span", (0, 20, 300, 20), [T("second line")], name="s2"),
    ], name="div"), E("p", (0, 300, 800, 50), [T(EN)])))
    r = run(split)
    assert leaves_under(r, split.ids["div"]) == [split.ids["s1"], split.ids["s2"]]
    # No significant text after the <br>: not a line break, the div stays one leaf zone.
    trailing = build(page(E("div", (0, 0, 800, 200), [
        E("span", (0, 0, 300, 20), [T("only line")]), E("br", (300, 0, 0, 20)),
    ], name="div"), E("p", (0, 300, 800, 50), [T(EN)])))
    assert leaf_elements(run(trailing))[0] == trailing.ids["div"]


def test_hr_between_text_nodes_is_a_line_break():
    b = build(page(E("td", (0, 0, 800, 200), [
        T("above the rule"), E("hr", (0, 50, 800, 2)), T("below the rule"),
    ], display="block", name="td"), E("p", (0, 300, 800, 50), [T(EN)])))
    r = run(b)
    assert len([z for z in zones_of(r) if z["leaf"] and z["element"] == b.ids["td"]]) == 2


def test_computed_display_decides_block_or_inline_and_table_cells_are_inline():
    # A <span> laid out as a block counts as a block: two of them break the parent down.
    b = build(page(E("div", (0, 0, 800, 200), [
        E("span", (0, 0, 800, 20), [T("alpha")], display="block", name="x"),
        E("span", (0, 30, 800, 20), [T("beta")], display="block", name="y"),
    ], name="div"), E("p", (0, 300, 800, 50), [T(EN)])))
    assert leaves_under(run(b), b.ids["div"]) == [b.ids["x"], b.ids["y"]]
    # A table row with two cells: cells are inline (public code), so the row is one leaf zone.
    t = build(page(E("table", (0, 0, 800, 100), [E("tbody", (0, 0, 800, 100), name="tbody", children=[
        E("tr", (0, 0, 800, 40), [E("td", (0, 0, 400, 40), [T("a")]), E("td", (400, 0, 400, 40), [T("b")])],
          name="r1"),
        E("tr", (0, 40, 800, 40), [E("td", (0, 40, 400, 40), [T("c")]), E("td", (400, 40, 400, 40), [T("d")])],
          name="r2"),
    ])]), E("p", (0, 300, 800, 50), [T(EN)])))
    assert leaves_under(run(t), t.ids["tbody"]) == [t.ids["r1"], t.ids["r2"]]


def test_hidden_and_offscreen_children_are_not_significant():
    b = build(page(E("div", (0, 0, 800, 200), [
        E("p", (0, 0, 800, 50), [T(EN)], name="shown"),
        E("p", (0, 60, 800, 50), [T(EN)], visibility="hidden"),
        E("p", (-5000, 60, 800, 50), [T(EN)]),  # screen-reader-only text parked off-screen
        E("p", (0, 0, 0, 0), [T(EN)], display="none"),
    ], name="div")))
    r = run(b)
    # One significant block child only: nothing breaks down, the body's zone is the only (leaf) zone.
    assert leaf_elements(r) == [b.ids["body"]] and r.debug["zones_total"] == 1
    assert r.text == EN


# ---- section 3.2: columns ---------------------------------------------------------------------------------


def blocks(*xs: tuple[float, float]) -> E:
    return E("div", (0, 0, 1000, 1000), [
        E("p", (x0, 100 * i, x1 - x0, 80), [T(EN)], name=f"p{i}") for i, (x0, x1) in enumerate(xs)
    ], name="box")


def column_zone_groups(r: Any) -> list[int]:
    return [c["zones"] for c in r.debug["columns"]]


def test_zones_join_a_column_within_tolerance_of_the_running_averages():
    # avg after two zones: left 45, right 1000, width 955 -> tol 95.5; left 140 is 95 away: joins. (Against the
    # first zone alone it would be 140 > 100 away: the averages matter.)
    b = build(page(blocks((0, 1000), (90, 1000), (140, 1000))))
    r = run(b, collapse=False)
    assert [c["zones"] for c in r.debug["columns"] if c["parent"] >= 0 and c["zones"] > 1] == [3]


def test_a_slow_drift_does_not_chain_into_one_column():
    # Each zone is within 10% of the one before (|90 - 180| = 90 <= 91), but not of the running averages
    # (avg left 45, tol 95.5): the third zone starts a new column.
    b = build(page(blocks((0, 1000), (90, 1000), (180, 1000))))
    r = run(b, collapse=False)
    leaf_cols = [c for c in r.debug["columns"] if c["children"] == [] and c["parent"] >= 0]
    assert [c["zones"] for c in leaf_cols] == [2, 1]


def test_a_zone_outside_tolerance_starts_a_new_column():
    b = build(page(blocks((0, 1000), (90, 1000), (200, 1000))))
    r = run(b, collapse=False)
    leaf_cols = [c for c in r.debug["columns"] if c["children"] == [] and c["parent"] >= 0]
    assert [c["zones"] for c in leaf_cols] == [2, 1]
    assert leaf_cols[1]["box"][0] == 200


def test_right_edge_counts_too():
    b = build(page(blocks((0, 1000), (0, 850))))
    r = run(b, collapse=False)
    leaf_cols = [c for c in r.debug["columns"] if c["children"] == [] and c["parent"] >= 0]
    assert [c["zones"] for c in leaf_cols] == [1, 1]


def test_collapse_removes_a_child_column_equal_to_its_parent_and_lifts_its_children():
    # body > wrapper (same edges as body) > two side-by-side columns.
    b = build(page(E("div", (0, 0, 1200, 2000), [
        E("div", (0, 0, 700, 2000), [E("p", (0, 0, 700, 80), [T(EN)]), E("p", (0, 100, 700, 80), [T(EN)])],
          name="left"),
        E("div", (800, 0, 400, 2000), [E("p", (800, 0, 400, 80), [T(EN)])], name="right"),
    ], name="wrap")))
    flat = run(b, collapse=False)
    coll = run(b)
    assert coll.debug["columns_total"] < flat.debug["columns_total"]
    root = coll.debug["columns"][0]
    kids = [c for c in coll.debug["columns"] if c["id"] in root["children"]]
    # The wrapper's column is gone: the root's children are the left and right columns themselves.
    assert [k["box"][0] for k in kids] == [0, 800]
    assert all(c["parent"] >= 0 or c["id"] == 0 for c in coll.debug["columns"])


# ---- section 3.3: labelling and the delta search ----------------------------------------------------------


def unit(x: float, y: float, w: float, name: str | None = None) -> E:
    return E("p", (x, y, w, 80), [T(EN)], name=name)


def nested_page() -> E:
    # Four equal paragraph units; fractions on the greedy path: root 1, A 3/4, B 2/4, C 1/4 -> every delta 1/4.
    return page(
        E("div", (0, 0, 800, 1000), [
            E("div", (0, 0, 500, 1000), [unit(0, 0, 200, "C"), unit(250, 0, 250, "S3")], name="B"),
            unit(550, 0, 250, "S2"),
        ], name="A"),
        unit(850, 0, 150, "S1"),
        w=1000,
    )


def test_no_column_reaching_the_threshold_means_no_answer():
    b = build(nested_page())
    r = run(b)
    assert r.nodes == [] and "delta" in r.message
    path = r.debug["path"]
    assert [round(p["fraction"], 3) for p in path] == [1.0, 0.75, 0.5, 0.25]
    assert all(abs(p["delta"] - 0.25) < 1e-9 for p in path)


def test_first_column_on_the_path_reaching_the_threshold_wins():
    b = build(nested_page())
    r = run(b, delta_threshold=0.2)  # every column on the path qualifies; the outermost (root) covers the rest
    assert r.nodes == [b.ids["body"]]
    assert all(p["main"] for p in r.debug["path"])


def test_delta_search_descends_to_the_dominant_column():
    b = build(page(
        E("div", (0, 0, 800, 1000), [unit(0, 100 * i, 800) for i in range(3)], name="A"),
        unit(850, 0, 150, "S1"),
        w=1000,
    ))
    r = run(b)
    # root delta = 1 - 3/4 = 0.25 < 0.3; A delta = 3/4 - 0 (its paragraphs collapse into it) >= 0.3.
    assert r.nodes == [b.ids["A"]]
    assert [round(p["delta"], 3) for p in r.debug["path"]] == [0.25, 0.75]


def test_nothing_scores_means_the_root_is_the_answer():
    b = build(page(E("div", (0, 0, 800, 100), [T("Home")]), E("div", (0, 200, 800, 100), [T("About us")])))
    r = run(b)
    assert r.nodes == [b.ids["body"]] and r.debug["total_score"] == 0


def test_single_sentence_zones_are_not_paragraphs():
    b = build(page(
        E("div", (0, 0, 800, 1000), [E("p", (0, 0, 800, 80), [T("A single sentence with many words in it.")])],
          name="one"),
        E("div", (850, 0, 300, 1000), [E("p", (850, 0, 300, 80), [T(EN)])], name="two"),
    ))
    r = run(b)
    assert r.nodes == [b.ids["two"]]


def article(text: str, lang: str) -> Any:
    """Header nav, a main column of five paragraphs, an aside of links plus one paragraph, a footer."""
    nav = [E("a", (10 + 80 * i, 10, 70, 20), [T(w)]) for i, w in enumerate(["Home", "World", "Sport", "Video"])]
    return build(page(
        E("header", (0, 0, 1200, 100), nav),
        E("div", (0, 100, 1200, 2000), [
            E("main", (100, 100, 700, 2000),
              [E("h1", (100, 100, 700, 40), [T("Title")])]
              + [E("p", (100, 150 + 90 * i, 700, 80), [T(text)]) for i in range(5)], name="main"),
            E("aside", (850, 100, 300, 800),
              [E("a", (850, 100 + 30 * i, 300, 20), [T(f"Link {i}")], display="block") for i in range(6)]
              + [E("p", (850, 400, 300, 160), [T(text)])], name="aside"),
        ]),
        E("footer", (0, 2100, 1200, 100), [T("© 2024 Example")]),
    ), lang=lang)


def test_two_column_page_with_an_aside_answers_the_main_column():
    b = article(EN, "en")
    r = run(b)
    assert r.nodes == [b.ids["main"]]
    assert r.text is not None and r.text.startswith("Title\n" + EN)
    assert "Link 0" not in r.text
    labels = [c.label for c in r.candidates]
    assert any("(main)" in lab for lab in labels)


@pytest.mark.parametrize(("text", "lang"), [(EN, "en"), (ZH, "zh"), (AR, "ar"), (HI, "hi"), (TH, "th"), (JA, "ja")])
def test_same_layout_in_other_scripts_yields_the_same_column(text: str, lang: str):
    b = article(text, lang)
    r = run(b)
    assert r.nodes == [b.ids["main"]], r.debug["path"]
    assert r.debug["paragraph_zones"] == 6  # five in main, one in the aside


# ---- robustness and linearity -----------------------------------------------------------------------------


def test_no_text_page_and_empty_body_give_a_message_not_an_exception():
    b = build(page(E("div", (0, 0, 100, 100), [])))
    r = run(b)
    assert r.nodes == [] and "no visible text" in r.message
    frameset = build(E("html", (0, 0, 1000, 800), [E("frameset", (0, 0, 1000, 800), [E("frame", (0, 0, 1000, 800))])]))
    assert run(frameset).nodes == []


def test_zero_height_float_container_keeps_its_text_and_gets_a_text_box():
    b = build(page(E("div", (100, 0, 700, 0), [
        E("p", (100, 0, 700, 80), [T(EN)]), E("p", (100, 100, 700, 80), [T(EN)]),
    ], name="floats", visible=False), E("div", (850, 0, 300, 100), [T("Links")])))
    r = run(b)
    assert r.nodes == [b.ids["floats"]]
    z = next(z for z in zones_of(r) if z["element"] == b.ids["floats"])
    assert z["box"] == [100.0, 0.0, 700.0, 180.0]


def test_config_defaults_follow_the_paper():
    c = zoning.Config()
    assert (c.tolerance, c.delta_threshold, c.min_sentences) == (0.1, 0.3, 2)
    assert c.sentence_test == "script"


def test_every_zone_parent_precedes_its_children_and_leaf_texts_partition_the_page():
    b = article(EN, "en")
    r = run(b)
    zs = zones_of(r)
    assert all(z["parent"] < z["id"] for z in zs)
    words = sum(z["words"] for z in zs if z["leaf"])
    from centrum.core.textmetrics import count_words
    assert words == sum(count_words(t) for t in b.snapshot.texts)
    assert np.isclose(r.debug["total_score"], sum(z["score"] for z in zs if z["leaf"]))


def test_anti_flicker_page_hidden_by_opacity_is_treated_as_shown():
    b = build(E("html", (0, 0, 1200, 2000), [E("body", (0, 0, 1200, 2000), [
        E("div", (0, 0, 800, 1000), [E("p", (0, 100 * i, 800, 80), [T(EN)]) for i in range(3)], name="main"),
        E("div", (850, 0, 300, 1000), [E("a", (850, 0, 300, 20), [T("Link")])]),
    ])], opacity=0.0))
    r = run(b)
    assert r.nodes == [b.ids["main"]] and "anti-flicker" in r.message
    assert run(b, reveal_hidden_page=False).nodes == []


def test_the_documents_body_is_the_root_not_a_nested_one():
    b = build(E("html", (0, 0, 1200, 2000), [
        E("svg", (0, 0, 10, 10), [E("body", (0, 0, 10, 10), [])]),
        E("body", (0, 0, 1200, 2000), [E("div", (0, 0, 800, 100), [T(EN)])], name="body"),
    ]))
    r = run(b)
    assert r.debug["root_element"] == b.ids["body"] and r.nodes == [b.ids["body"]]


# ---- property: any well-formed page ------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TAGS = ["div", "p", "span", "a", "br", "hr", "td", "li", "section", "b"]
_DISPLAYS = [None, "block", "inline", "none", "flex", "table-cell", "inline-block", "contents", "grid"]
_TEXTS = [EN, ZH, AR, HI, TH, "Home", "", "  ", "x. y. z.", "\x00\x01\x02 control. Marks here too."]


@st.composite
def _trees(draw: Any, depth: int = 0) -> E:
    x, y = draw(st.integers(-200, 1500)), draw(st.integers(-100, 3000))
    w, h = draw(st.integers(0, 1200)), draw(st.integers(0, 400))
    kids: list[E | T] = []
    for _ in range(draw(st.integers(0, 4 if depth < 5 else 0))):
        if draw(st.booleans()):
            kids.append(T(draw(st.sampled_from(_TEXTS))))
        else:
            kids.append(draw(_trees(depth + 1)))
    return E(draw(st.sampled_from(_TAGS)), (x, y, w, h), kids, display=draw(st.sampled_from(_DISPLAYS)),
             opacity=draw(st.sampled_from([1.0, 1.0, 0.0])))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_trees(), min_size=0, max_size=4), st.booleans(), st.sampled_from(["script", "verb"]))
def test_any_well_formed_page_gives_consistent_zones(children: list[E], collapse: bool, test: str):
    b = build(page(*children))
    snap = b.snapshot
    r = run(b, collapse=collapse, sentence_test=test)
    if not r.nodes:
        assert r.message
        return
    zs = zones_of(r)
    assert all(z["parent"] < z["id"] for z in zs)
    # Covering roots: sorted, none inside another.
    assert r.nodes == sorted(set(r.nodes))
    assert all(not snap.is_ancestor(a, d) for a in r.nodes for d in r.nodes if a != d)
    # Leaf zone scores add up to the root's; the chosen text is part of the page text.
    if not r.debug["zones_trimmed"]:
        assert np.isclose(r.debug["total_score"], sum(z["score"] for z in zs if z["leaf"]))
    from centrum.core.textmetrics import count_words
    assert count_words(r.text or "") <= sum(count_words(t) for t in snap.texts)
    path = r.debug["path"]
    assert path[0]["column"] == 0 and all(0 <= p["fraction"] <= 1 + 1e-9 for p in path)
