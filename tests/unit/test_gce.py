"""GCE (Jung et al.) on hand-built snapshots: each expected answer follows from the paper's rules and the geometry.

Default window 1920 x 1080 and the paper grid (7 x 8): cells are 240 x 154.29 px, the grid covers
min(2·1080, h1) of the document, so a document at least 2160 px tall has 14 rows; without link-dense areas the
kept cells are rows 1..12, columns 1..6 and C1 = (960, 1080).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from centrum import algorithms
from centrum.algorithms import gce
from centrum.core.builders import T_, E, T, build
from centrum.core.config import ConfigError

W, H = 1920, 1080
LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. " * 3


def paras(x: float, y: float, w: float, count: int, h: float = 180, gap: float = 20, text: str = LOREM) -> list:
    return [E("p", (x, y + i * (h + gap), w, h), [T(text)]) for i in range(count)]


def page(*children: E, height: float = 3000) -> E:
    return E("html", (0, 0, W, height), [E("body", (0, 0, W, height), list(children), name="body")])


def run(built, **params):
    # The rules under test are the paper's; the default preset (framework) is tested where it differs.
    params.setdefault("preset", "paper")
    return algorithms.run("gce", built.snapshot, params)


def test_article_tag_rule_sets_the_first_article_ancestor():
    # p (1000 wide) -> div (1000) -> article (1000) -> wrapper (1920): the tag rule stops at <article>; the width
    # rule fires at article -> wrapper (1920/1000 > 1.7) and gives the sparser wrapper, the attr rule never fires.
    b = build(page(E("div", (0, 0, W, 3000), [
        E("article", (460, 150, 1000, 2400), [E("div", (460, 150, 1000, 2400), paras(460, 150, 1000, 12))],
          name="article"),
    ], name="wrapper")))
    r = run(b)
    assert r.nodes == [b.ids["article"]]
    assert r.debug["winner"]["rule"] == "tag" and r.debug["winner"]["kind"] == "best"
    roots = r.debug["rounds"][2]["roots"]
    assert roots["tag"]["node"] == b.ids["article"]
    assert roots["attr"]["node"] == b.ids["body"]
    assert roots["diff"]["node"] == b.ids["wrapper"]
    assert [step["tag"] for step in r.debug["rounds"][2]["path"]] == ["p", "div", "article", "div", "body"]


def test_attribute_rule_matches_content_in_any_attribute_case_insensitively():
    b = build(page(E("div", (0, 0, W, 3000), [
        E("div", (460, 150, 1000, 2400), [E("div", (460, 150, 1000, 2400), paras(460, 150, 1000, 12),
                                              cls="entry-body")], cls="post-Content-area", name="post"),
    ])))
    r = run(b)
    assert r.nodes == [b.ids["post"]]
    assert r.debug["winner"]["rule"] == "attr"
    # Attribute values that are URLs or alt text are not role names: a link to /article/ is not the content.
    b2 = build(page(E("div", (0, 0, W, 3000), [
        E("div", (460, 150, 1000, 2400), paras(460, 150, 1000, 12), attrs={"data-src": "x"}, name="col"),
    ]), E("img", (0, 2990, 10, 10), attrs={"src": "/content/x.png", "alt": "article"})))
    r2 = run(b2)
    assert all(rd["roots"]["attr"]["node"] == b2.ids["body"] for rd in r2.debug["rounds"])


@pytest.mark.parametrize(("mode", "expected"), [("stop", "column"), ("parent", "outer")])
def test_width_jump_rule_stop_or_parent(mode, expected):
    # p (1000) -> column (1000) -> outer (1920): the width grows by 1.92 > 1.7 at column -> outer. The text of
    # section 3.3 stops at the column, Algorithm 1 assigns the wider parent.
    b = build(page(E("div", (0, 0, W, 3000), [
        E("div", (460, 150, 1000, 2400), paras(460, 150, 1000, 12), name="column"),
    ], name="outer")))
    r = run(b, width_jump_mode=mode)
    assert r.nodes == [b.ids[expected]]
    assert r.debug["winner"]["rule"] == "diff"


def test_width_jump_below_the_ratio_does_not_fire():
    # 1000 -> 1600 is a growth of 1.6 <= 1.7, then 1600 -> 1920 is 1.2: no jump, every rule reaches <body>.
    b = build(page(E("div", (160, 0, 1600, 3000), [
        E("div", (460, 150, 1000, 2400), paras(460, 150, 1000, 12), name="column"),
    ], name="mid")))
    r = run(b, at_body="none")
    assert r.nodes == [] and "<body>" in r.message
    assert run(b, width_increase=1.5, width_jump_mode="stop").nodes == [b.ids["column"]]
    assert run(b, width_increase=1.5, width_jump_mode="parent").nodes == [b.ids["mid"]]


def test_link_dense_cells_are_excluded_and_link_text_is_never_a_seed():
    # A link list (li > a, the li is the link container by the single-child rule) fills columns 1..3 of rows
    # 1..11. Its cells are excluded, so C1 moves right into the content; with no exclusion C1 = (960, 1080)
    # lands on the small decoy paragraph just right of the list.
    links = E("ul", (240, 160, 720, 1690), [
        E("li", (240, 160 + i * 169, 720, 169), [E("a", (240, 160 + i * 169, 720, 169), [T(f"Section {i}")])])
        for i in range(10)
    ], name="links")
    decoy = E("div", (962, 1060, 40, 40), [T("decoy")], name="decoy")
    content = E("div", (1100, 160, 580, 2400), paras(1100, 160, 580, 12), name="content")
    b = build(page(links, decoy, content))
    r = run(b)
    cells = {(c["row"], c["col"]): c for c in r.debug["grid"]["cells"]}
    assert r.debug["grid"]["rows"] == 14
    for row in range(1, 12):
        for col in (1, 2, 3):
            assert cells[(row, col)]["reason"] == "link-dense" and not cells[(row, col)]["kept"]
        assert cells[(row, 4)]["kept"]
    kept = [(row, col) for row in range(1, 13) for col in range(1, 7) if not (col <= 3 and row <= 11)]
    expected_c1 = np.mean([[(c + 0.5) * 240, (row + 0.5) * H / 7] for row, c in kept], axis=0)
    assert r.debug["C1"] == pytest.approx(expected_c1, abs=0.1)
    assert r.debug["E1"]["node"] in range(b.ids["content"], b.ids["content"] + 13)
    assert r.debug["links"]["link_dense_areas"][0]["node"] == b.ids["links"]
    # The literal alternative: nothing excluded for links -> C1 is the window-grid centre, next to the decoy.
    r_off = run(b, cell_link_coverage=2.0)
    assert r_off.debug["C1"] == pytest.approx([960, 1080], abs=0.1)
    assert r_off.debug["E1"]["node"] == b.ids["decoy"]


def test_single_child_rule_makes_the_parent_the_link_container():
    # <li><span><a>: the a is the span's only child, the span the li's only child -> the li is the container (the
    # ul has two children, so the climb stops below it). An inline <a> in a paragraph with other text stays the
    # container itself: the paragraph's link density is its area share (small), so its text is low-link-density.
    b = build(page(
        E("ul", (0, 200, 200, 200), [
            E("li", (0, 200, 200, 100), [E("span", (0, 200, 100, 20), [E("a", (0, 200, 100, 20), [T("menu")])])],
              name="li1"),
            E("li", (0, 300, 200, 100), [E("a", (0, 300, 100, 20), [T("more")])], name="li2"),
        ], name="ul"),
        E("p", (400, 200, 1000, 100), [T("Some words and "), E("a", (600, 200, 100, 20), [T("a link")], name="a"),
                                       T(" more words.")], name="p"),
    ))
    r = run(b)
    links = r.debug["links"]
    assert links["container_nodes"] == [b.ids["li1"], b.ids["li2"], b.ids["a"]]
    # ul: (100·200 + 100·200) / (200·200) = 1 > 0.5; p: 100·20 / (1000·100) = 0.02.
    assert [a["node"] for a in links["link_dense_areas"]] == [b.ids["ul"]]
    assert links["high_link_text_nodes"] == 2  # "menu", "more"
    assert links["low_link_text_nodes"] == 3


def test_fixed_elements_and_their_subtrees_are_ignored():
    # A fixed dialog with an <article> and text sits right on the centroids, the real article is a column on the
    # right; removed first, the dialog can be neither the seed nor a root.
    banner = E("div", (560, 800, 800, 600), [E("article", (560, 800, 800, 600), [T(LOREM * 3)])],
               position="fixed", name="banner")
    content = E("article", (1400, 150, 400, 2400), paras(1400, 150, 400, 12), name="content")
    b = build(page(content, banner))
    r = run(b)
    assert r.nodes == [b.ids["content"]]
    assert r.debug["removed"]["fixed_roots"] == [b.ids["banner"]]
    assert r.debug["removed"]["elements"] == 2
    seen = {rt["node"] for rd in r.debug["rounds"] for rt in rd["roots"].values()}
    assert not seen & {b.ids["banner"], b.ids["banner"] + 1}
    r_kept = run(b, remove_fixed=False)
    assert r_kept.nodes == [b.ids["banner"] + 1]


def _order_page(y_article_height: float) -> tuple:
    # Document 30000 px tall: C_d = (960, 15000) pulls C3 to y = (72·1080 + 540 + 15000) / 74 = 1260.8, while
    # C1 = (960, 1080) and C2 = (960, 1072.6). Article Y holds the text at C1/C2, the short article X the text
    # at C3. Both are direct children of <body>, so the width rule (1920/1000) gives <body> in parent mode.
    y_top = 1160 - y_article_height
    y = E("article", (460, y_top, 1000, y_article_height),
          [E("p", (460, 1000, 1000, 150), [T(LOREM)], name="y_p")], name="Y")
    x = E("article", (460, 1200, 1000, 120), [E("p", (460, 1200, 1000, 120), [T(LOREM)], name="x_p")], name="X")
    return build(page(y, x, height=30000))


def test_best_roots_come_before_no_best_roots_and_m3_before_m2_before_m1():
    b = _order_page(600)  # Y is 600 >= 540 tall: M1/M2 have a best root, M3's only root (X, 120 tall) is no-best
    r = run(b)
    assert r.debug["C3"] == pytest.approx([960, 1260.8], abs=0.1)
    assert [r.debug[f"E{n}"]["node"] for n in (1, 2, 3)] == [b.ids["y_p"], b.ids["y_p"], b.ids["x_p"]]
    rounds = r.debug["rounds"]
    assert rounds[2]["best"] is None and rounds[2]["nobest"] == "tag"
    assert rounds[1]["best"] == "tag" and rounds[0]["best"] == "tag"
    assert r.nodes == [b.ids["Y"]]
    assert (r.debug["winner"]["round"], r.debug["winner"]["kind"]) == (2, "best")
    # Y only 400 tall: no round has a best root -> M3_nobest (X) wins over M2_nobest and M1_nobest (Y).
    b2 = _order_page(400)
    r2 = run(b2)
    assert r2.nodes == [b2.ids["X"]]
    assert (r2.debug["winner"]["round"], r2.debug["winner"]["kind"]) == (3, "nobest")


def test_within_a_round_the_highest_text_area_density_wins():
    # The tag root (article, half empty) has D_t 0.5, the attr root (inner div, fully covered by text) 1.0.
    inner = E("div", (460, 150, 1000, 1200), [E("p", (460, 150, 1000, 1200), [T(LOREM)])], cls="content",
              name="inner")
    b = build(page(E("article", (460, 150, 1000, 2400), [inner], name="article")))
    r = run(b)
    assert r.nodes == [b.ids["inner"]]
    roots = r.debug["rounds"][0]["roots"]
    assert roots["tag"]["D_t"] == pytest.approx(0.5) and roots["attr"]["D_t"] == pytest.approx(1.0)


def test_all_body_means_no_result_with_at_body_none():
    # Full-width blocks only: no article, no attribute, no width jump -> every root is <body>.
    b = build(page(E("div", (0, 0, W, 3000), paras(0, 150, W, 12))))
    r = run(b, at_body="none")
    assert r.nodes == []
    assert "<body>" in r.message and r.debug["winner"] is None
    assert all(rt["body"] for rd in r.debug["rounds"] for rt in rd["roots"].values())
    assert all(c.label.endswith("<body>") for c in r.candidates)


def test_all_body_returns_the_best_region_below_body_as_the_paper_does():
    # Every root is <body>; each path climbs p -> column -> wrapper -> body. The column (1800 px tall, its text
    # covering most of it) is denser than the wrapper (2900 px, the same text) and taller than h0/2; a paragraph
    # (180 px) is denser still but short.
    b = build(page(E("div", (0, 0, W, 2900), [
        E("div", (0, 150, W, 1800), paras(0, 150, W, 9), name="column"),
    ], name="wrapper")))
    r = run(b)
    assert r.nodes == [b.ids["column"]]
    assert r.debug["winner"]["kind"] == "below" and r.debug["winner"]["round"] == 3
    assert "best region below" in r.message
    assert r.candidates[-1].nodes == [b.ids["column"]] and r.candidates[-1].label == "M3 below <body>"
    # The same in the framework preset, and no answer without the rule.
    assert algorithms.run("gce", b.snapshot).nodes == [b.ids["column"]]
    assert run(b, at_body="none").nodes == []
    # A page whose every path region is shorter than h0/2: the densest region of M3's path.
    short = build(page(E("div", (0, 0, W, 400), paras(0, 0, W, 2, h=150), name="strip"), height=400))
    rs = run(short)
    assert rs.debug["winner"]["kind"] == "below" and len(rs.nodes) == 1
    assert short.snapshot.tags[rs.nodes[0]] in ("p", "div")


def test_no_text_and_empty_pages_have_messages_not_errors():
    r = run(build(page(E("div", (0, 0, W, 3000)))))
    assert r.nodes == [] and "no visible text" in r.message
    r2 = run(build(E("html", (0, 0, 0, 0), [E("body", (0, 0, 0, 0))])))
    assert r2.nodes == []


SCRIPTS = {
    "en": ("ltr", "The committee published its findings after a year of hearings across the region."),
    "ja": ("ltr", "委員会は地域全体での一年間の公聴会を経て調査結果を発表した。"),
    "ar": ("rtl", "نشرت اللجنة نتائجها بعد عام من جلسات الاستماع في جميع أنحاء المنطقة."),
    "ko": ("ltr", "위원회는 지역 전체에서 1년간의 청문회를 거친 후 조사 결과를 발표했다."),
    "ru": ("ltr", "Комиссия опубликовала свои выводы после года слушаний по всему региону."),
}


@pytest.mark.parametrize("preset", ["paper", "framework"])
@pytest.mark.parametrize("lang", list(SCRIPTS))
def test_same_layout_in_five_scripts_returns_the_same_node(lang, preset):
    direction, sentence = SCRIPTS[lang]

    def para(y: float) -> E:
        # Lines as a browser would lay them out: full lines and a last partial line, right-aligned for RTL.
        text = " ".join([sentence] * 6)
        width = min(1000.0, 9.0 * len(sentence))
        x = 460 + (1000 - width) if direction == "rtl" else 460
        return E("p", (460, y, 1000, 180), [T_(text, *[(x, y + k * 24, 1000, 24) for k in range(6)],
                                                 (x, y + 144, width, 24))])

    side = E("aside", (1500, 150, 300, 2400), [
        E("ul", (1500, 150, 300, 600), [E("li", (1500, 150 + i * 60, 300, 60), [
            E("a", (1500, 150 + i * 60, 300, 60), [T(sentence[:12])])]) for i in range(10)])])
    main = E("div", (460, 150, 1000, 2400), [para(150 + i * 200) for i in range(12)], name="main")
    b = build(page(E("div", (0, 0, W, 3000), [main, side]), height=3000), lang=lang, dir=direction)
    r = run(b, preset=preset, width_jump_mode="stop")
    assert r.nodes == [b.ids["main"]]


def test_presets_and_overrides():
    b = build(page(E("div", (0, 0, W, 3000), [
        E("div", (460, 150, 1000, 2400), paras(460, 150, 1000, 12), name="column")], name="outer")))
    r = run(b, preset="framework")
    cfg = r.debug["config"]
    assert (cfg["rows"], cfg["cols"], cfg["width_increase"], cfg["jump_rule"], cfg["block_only"]) == \
        (4, 6, 1.3, "framework", True)
    assert r.debug["grid"]["rows"] == 8  # ceil(min(2·1080, 3000) / 270)
    # Dead zone of the framework: first row and the outer columns only.
    reasons = {(c["row"], c["col"]): c["reason"] for c in r.debug["grid"]["cells"]}
    assert reasons[(0, 2)] == "edge" and reasons[(7, 2)] == "" and reasons[(3, 5)] == "edge"
    # The framework's size jump: column 1000 > 2·320 and 1920 - 1000 > 320 -> stops at the column (block div).
    assert r.nodes == [b.ids["column"]]
    r2 = run(b, preset="framework", rows=5)
    assert (r2.debug["config"]["rows"], r2.debug["config"]["cols"]) == (5, 6)
    # An explicit value wins even when it equals the default preset's value.
    assert run(b, preset="framework", width_jump_mode="parent").nodes == [b.ids["outer"]]
    assert gce.Config().rows is None and gce.resolve(gce.Config.named("paper")).rows == 7
    # The default preset is the one that measured better on the dev sets.
    assert gce.Config().preset == "framework" and gce.resolve(gce.Config()).rows == 4
    assert algorithms.run("gce", b.snapshot).debug["config"]["preset"] == "framework"
    assert gce.Config.named("paper").rows == 7
    with pytest.raises(ConfigError):
        run(b, preset="nope")


def test_framework_block_only_skips_inline_and_paragraph_nodes():
    # A narrow <span> (200) inside a paragraph (1000): the paper's ratio rule in stop mode stops at the span
    # (5 > 1.7); the framework may stop only on block elements and needs cW > 2·gridW, so it goes on to the div.
    b = build(page(E("div", (0, 0, W, 3000), [
        E("div", (460, 150, 1000, 2400), [E("p", (460, 950, 1000, 300), [
            E("span", (860, 1000, 200, 200), [T(LOREM)], name="span")])], name="column")])))
    assert run(b, preset="paper", width_jump_mode="stop").debug["rounds"][0]["roots"]["diff"]["node"] == \
        b.ids["span"]
    assert run(b, preset="framework").debug["rounds"][0]["roots"]["diff"]["node"] == b.ids["column"]


def test_debug_is_json_serializable_and_cells_carry_reasons():
    b = build(page(E("article", (460, 150, 1000, 2400), paras(460, 150, 1000, 12))))
    r = run(b)
    json.dumps(r.to_json())
    cells = r.debug["grid"]["cells"]
    assert len(cells) == 14 * 8
    assert {c["reason"] for c in cells if not c["kept"]} == {"edge"}
    assert sum(c["kept"] for c in cells) == 12 * 6 == r.debug["grid"]["kept"]
    for key in ("C_w", "C_d", "C1", "C2", "C3", "E1", "E2", "E3", "rounds", "winner"):
        assert key in r.debug
    assert len(r.candidates) == 9
