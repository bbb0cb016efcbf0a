"""Metric functions on hand-computed cases (scrapinghub AEB shingles, LCS, trafilatura snippets)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from centrum.gold.metrics import (
    Gold,
    aeb_aggregate,
    aggregate,
    f_beta,
    lcs_length,
    score_page,
    shingle_matching,
    snippet_counts,
    snippet_scores,
)
from centrum.gold.tokenize import aeb, fair


def test_shingles_one_of_two_shared() -> None:
    # gold shingles (a b c d), (b c d e); pred (a b c d), (b c d x): tp = fp = fn = 1 -> 1/3 each.
    tp, fp, fn = shingle_matching("a b c d e".split(), "a b c d x".split())
    assert (tp, fp, fn) == pytest.approx((1 / 3, 1 / 3, 1 / 3))


def test_shingles_are_a_multiset() -> None:
    # gold (a a a a) twice, pred once: tp 1, fn 1, fp 0 -> normalised (0.5, 0, 0.5).
    assert shingle_matching(["a"] * 5, ["a"] * 4) == pytest.approx((0.5, 0.0, 0.5))


def test_text_shorter_than_four_tokens_is_one_shingle() -> None:
    # ("hello", "world") vs ("hello", "world", "again"): different shingles, nothing matches.
    assert shingle_matching(["hello", "world"], ["hello", "world", "again"]) == pytest.approx((0.0, 0.5, 0.5))
    assert shingle_matching(["hello", "world"], ["hello", "world"]) == pytest.approx((1.0, 0.0, 0.0))


def test_aeb_aggregate_hand_computed() -> None:
    pages = [
        shingle_matching("a b c d e".split(), "a b c d x".split()),  # P 0.5, R 0.5
        shingle_matching(["one", "two"], ["one", "two"]),  # P 1, R 1
        shingle_matching("x y z w".split(), []),  # empty prediction: not in the precision mean, R 0
    ]
    out = aeb_aggregate(pages)
    assert out["precision"] == pytest.approx(0.75)  # mean(0.5, 1)
    assert out["recall"] == pytest.approx(0.5)  # mean(0.5, 1, 0)
    assert out["f1"] == pytest.approx(2 * 0.75 * 0.5 / 1.25)  # 0.6


def test_aeb_aggregate_everything_empty_scores_zero() -> None:
    out = aeb_aggregate([shingle_matching(["a", "b"], []), shingle_matching(["c"], [])])
    assert out == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_score_page_text() -> None:
    s = score_page(Gold(text="a b c d e"), "a b c d x", fair)
    assert (s["p"], s["r"], s["f1"]) == pytest.approx((0.5, 0.5, 0.5))
    # LCS of a b c d e / a b c d x is 4 of 5 on both sides.
    assert (s["lcs_p"], s["lcs_r"], s["lcs_f1"], s["lcs_f05"]) == pytest.approx((0.8, 0.8, 0.8, 0.8))


def test_empty_extraction_scores_zero() -> None:
    for pred in (None, "", "   \n "):
        s = score_page(Gold(text="some gold text here"), pred, fair)
        assert s["p"] == s["r"] == s["f1"] == s["lcs_f1"] == s["lcs_f05"] == 0.0


def test_empty_gold() -> None:
    both = score_page(Gold(text=""), "", fair)
    assert both["p"] == both["r"] == both["f1"] == both["lcs_f1"] == 1.0
    extra = score_page(Gold(text=""), "navigation only", fair)
    assert extra["p"] == extra["f1"] == extra["lcs_f1"] == 0.0


def test_cjk_is_scored_by_character() -> None:
    gold, pred = "日本語の文章です", "日本語の文章"
    assert fair(gold) == list(gold)
    s = score_page(Gold(text=gold), pred, fair)
    # 8 gold characters -> 5 shingles, 6 predicted -> 3 shingles, all in gold: P 1, R 3/5.
    assert (s["p"], s["r"], s["f1"]) == pytest.approx((1.0, 0.6, 0.75))
    # LCS 6: P 1, R 6/8; F1 = 2*.75/1.75; F0.5 = 1.25*.75/(.25+.75).
    assert (s["lcs_p"], s["lcs_r"]) == pytest.approx((1.0, 0.75))
    assert s["lcs_f1"] == pytest.approx(1.5 / 1.75)
    assert s["lcs_f05"] == pytest.approx(0.9375)
    # scrapinghub's \w+ makes each text one token: no credit at all for the shorter prediction.
    assert score_page(Gold(text=gold), pred, aeb)["f1"] == 0.0


def test_aeb_tokenizer_is_word_runs_with_case() -> None:
    assert aeb("Don't stop-me, NOW!") == ["Don", "t", "stop", "me", "NOW"]


def test_lcs_classic_example() -> None:
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4  # BCBA (Cormen et al.)
    assert lcs_length([], ["a"]) == 0
    assert lcs_length(["a", "b"], ["c", "d"]) == 0


def _lcs_dp(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[-1]))
        prev = cur
    return prev[-1]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abcde"), max_size=40), st.lists(st.sampled_from("abcdef"), max_size=40))
def test_lcs_matches_dynamic_programming(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _lcs_dp(a, b)


def test_lcs_is_fast_on_long_pages() -> None:
    import random
    import time

    rng = random.Random(1)
    words = [f"w{i}" for i in range(2000)]
    a = [rng.choice(words) for _ in range(20_000)]
    b = a[::2] + [rng.choice(words) for _ in range(10_000)]
    t0 = time.perf_counter()
    n = lcs_length(a, b)
    assert n >= 10_000  # a[::2] is a subsequence of a
    assert time.perf_counter() - t0 < 2.0


def test_f_beta() -> None:
    assert f_beta(1.0, 0.5, 1.0) == pytest.approx(2 / 3)
    assert f_beta(1.0, 0.5, 0.5) == pytest.approx(1.25 * 0.5 / (0.25 + 0.5))
    assert f_beta(0.0, 0.0, 0.5) == 0.0


def test_snippets_as_trafilatura() -> None:
    counts = snippet_counts(["Hello  world", "second one"], ["Menu"], "intro\nHello world and more Menu")
    assert counts == (1, 1, 1, 0)  # whitespace-normalised substring matching
    s = snippet_scores(*counts)
    assert (s["precision"], s["recall"], s["accuracy"], s["f1"]) == pytest.approx((0.5, 0.5, 1 / 3, 0.5))
    assert snippet_counts(["a"], ["b"], None) == (0, 0, 1, 1)


def test_aggregate_snippets_is_micro() -> None:
    g1 = Gold(with_=("alpha beta", "gamma"), without=("menu",))
    g2 = Gold(with_=("delta",), without=("footer", "ads"))
    rows = [score_page(g1, "alpha beta gamma menu", fair), score_page(g2, "", fair)]
    out = aggregate(rows)
    # counts: page 1 tp 2 fp 1 fn 0 tn 0; page 2 tp 0 fp 0 fn 1 tn 2 -> tp 2 fp 1 fn 1 tn 2.
    assert out["precision"] == pytest.approx(2 / 3)
    assert out["recall"] == pytest.approx(2 / 3)
    assert out["accuracy"] == pytest.approx(4 / 6)
    assert out["f1"] == pytest.approx(4 / 6)
    assert out["mean_f1"] == pytest.approx((0.8 + 0.0) / 2)  # page 1 F1 = 4/5, empty page 0


def test_aggregate_text_pages() -> None:
    rows = [score_page(Gold(text="a b c d e"), "a b c d x", fair), score_page(Gold(text="x y z w"), None, fair)]
    out = aggregate(rows)
    assert out["precision"] == pytest.approx(0.5)  # the empty page is not in the precision mean (evaluate.py)
    assert out["recall"] == pytest.approx(0.25)
    assert out["mean_f1"] == pytest.approx(0.25)
    assert out["lcs_f1"] == pytest.approx(0.4)
    assert not math.isnan(out["f1"])


def test_bootstrap_interval() -> None:
    same = [score_page(Gold(text="a b c d e"), "a b c d x", fair)] * 20
    assert aggregate(same)["f1_ci"] == pytest.approx(0.0, abs=1e-12)  # every resample is the same page
    mixed = [score_page(Gold(text="a b c d e"), "a b c d e", fair), score_page(Gold(text="a b c d e"), "", fair)] * 10
    ci = aggregate(mixed)["f1_ci"]
    assert 0.05 < ci < 0.6


def test_text_blocks_hand_computed() -> None:
    from centrum.gold.metrics import block_matching

    gold = "first paragraph of the story\nsecond paragraph here"
    # Predicted: the first gold block, a foreign block (2 tokens), and half of the second gold block.
    pred = "first paragraph of the story\nShare this\nsecond paragraph"
    p, r = block_matching(gold, pred, fair)
    # P: matched predicted tokens: 5 (block 1) + 2 ("second paragraph" occurs in gold) of 9 -> 7/9.
    assert p == pytest.approx(7 / 9)
    # R: gold block 1 (5 tokens) is found, gold block 2 (3 tokens) is not contiguous in the prediction -> 5/8.
    assert r == pytest.approx(5 / 8)
    # Token boundaries: "para" is not matched inside "paragraph".
    assert block_matching("paragraph", "para", fair) == (0.0, 0.0)
    s = score_page(Gold(text=gold), pred, fair)
    assert s["block_f1"] == pytest.approx(2 * (7 / 9) * (5 / 8) / (7 / 9 + 5 / 8))


def _blocks_brute(gold: str, pred: str) -> tuple[float, float]:
    def blocks(x: str) -> list[list[str]]:
        return [t for t in (fair(line) for line in x.splitlines()) if t]

    def side(src: list[list[str]], other: list[list[str]]) -> float:
        total = sum(map(len, src))
        hay = [t for b in other for t in b]
        hit = sum(len(b) for b in src if any(hay[i : i + len(b)] == b for i in range(len(hay) - len(b) + 1)))
        return hit / total if total else 0.0

    g, p = blocks(gold), blocks(pred)
    return side(p, g), side(g, p)


_lines = st.lists(st.lists(st.sampled_from("abc"), max_size=4).map(" ".join), max_size=5).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_lines, _lines)
def test_text_blocks_match_brute_force(gold: str, pred: str) -> None:
    from centrum.gold.metrics import block_matching

    assert block_matching(gold, pred, fair) == pytest.approx(_blocks_brute(gold, pred))


def test_render_class_rule() -> None:
    from centrum.evaluation.runner import render_class

    assert render_class({"loaded": 2, "failed": 0}) == "styled"
    assert render_class({"loaded": 2, "failed": 1}) == "unstyled"  # partly styled counts as unstyled
    assert render_class({"loaded": 0, "failed": 0}) == "unstyled"  # inline <style> only / no CSS at all
    assert render_class(None) == "unrendered"


def test_summary_splits_and_counts_failures() -> None:
    from centrum.evaluation.report import metric_table, summarize

    def page(pid: str, cls: str, pred: str | None, failure: str = "") -> dict:
        row = {"extractor": "x", "ms": 1.0, "error": "boom" if failure else "", "failure": failure,
               **score_page(Gold(text="a b c d e"), pred, fair)}
        return {"dataset": "d", "id": pid, "language": "en", "render_class": cls, "rows": [row],
                "render_ms": 10.0, "from_cache": False}

    pages = [page("1", "styled", "a b c d e"), page("2", "unstyled", "a b c d x"), page("3", "unstyled", None,
                                                                                           "error")]
    s = summarize(pages, ["x"])
    assert s["datasets"]["styled"]["d"]["x"]["f1"] == pytest.approx(1.0)
    # unstyled: page 2 P .5 R .5, page 3 failed: P mean .5 (evaluate.py skips it), R mean .25.
    assert s["datasets"]["unstyled"]["d"]["x"]["recall"] == pytest.approx(0.25)
    assert s["datasets"]["all"]["d"]["x"]["mean_f1"] == pytest.approx(0.5)
    assert s["failures"]["counts"] == {"x": {"d": 1}}
    assert s["pages"]["styled"] == {"d": 1} and s["pages"]["unstyled"] == {"d": 2}
    assert "| x | 1.000 ± 0.000 | 1.000 |" in metric_table(s, "styled", ["x"], "f1")
    assert s["page_types"]["all"] == {}  # no page carries a page type


def test_summary_has_a_row_per_page_type_where_meta_gives_one() -> None:
    from centrum.evaluation.report import group_table, summarize

    def page(pid: str, kind: str | None, lang: str, pred: str) -> dict:
        row = {"extractor": "x", "ms": 1.0, "error": "", "failure": "", **score_page(Gold(text="a b c d e"), pred,
                                                                                     fair)}
        return {"dataset": "d", "id": pid, "language": lang, "page_type": kind, "render_class": "unstyled",
                "rows": [row], "render_ms": 1.0, "from_cache": False}

    pages = [page("1", "forum", "en", "a b c d e"), page("2", "forum", "zh", "x y z w v"),
             page("3", "article", "en", "a b c d e"), page("4", None, "en", "a b c d e")]
    s = summarize(pages, ["x"])
    assert s["page_types"]["all"]["forum"]["x"] == {"pages": 2, "mean_f1": pytest.approx(0.5)}
    assert s["page_types"]["all"]["article"]["x"]["pages"] == 1 and set(s["page_types"]["all"]) == {"forum",
                                                                                                      "article"}
    assert s["languages"]["all"]["en"]["x"] == {"pages": 3, "mean_f1": pytest.approx(1.0)}
    assert group_table(s, "page_types", "all", ["x"]).splitlines()[0] == "| extractor | article (1) | forum (2) |"


def test_dom_node_f1_on_a_built_snapshot() -> None:
    from centrum.core.builders import E, T, build
    from centrum.gold.metrics import node_prf

    page = E("html", (0, 0, 1000, 1000), [
        E("body", (0, 0, 1000, 1000), [
            E("nav", (0, 0, 1000, 50), [E("a", (0, 0, 50, 20), [T("Home")])]),
            E("article", (0, 50, 1000, 800), [E("p", (0, 50, 1000, 100), [T("One.")], name="p1"),
                                               E("p", (0, 150, 1000, 100), [T("Two.")])], name="article"),
            E("footer", (0, 900, 1000, 100), [T("Contact")]),
        ], name="body"),
    ])
    built = build(page)
    end, ids = built.snapshot.subtree_end, built.ids
    # Gold <article> covers 3 elements; <body> covers 7 (body, nav, a, article, p, p, footer).
    assert node_prf(end, [ids["article"]], [ids["body"]]) == pytest.approx((3 / 7, 1.0, 0.6))
    assert node_prf(end, [ids["article"]], [ids["p1"]]) == pytest.approx((1.0, 1 / 3, 0.5))
    assert node_prf(end, [ids["article"]], [ids["article"]]) == (1.0, 1.0, 1.0)
    assert node_prf(end, [ids["article"]], []) == (0.0, 0.0, 0.0)


def test_paired_bootstrap_interval_holds_zero_only_for_noise() -> None:
    from centrum.gold.metrics import paired_bootstrap

    rng = np.random.default_rng(0)
    base = rng.random(60)
    better = base + 0.1  # every page 0.1 better: the interval is tight around +0.1
    mean, lo, hi = paired_bootstrap(better, base)
    assert mean == pytest.approx(0.1) and 0.09 < lo <= hi < 0.11
    noise = base + rng.normal(0, 0.2, 60) * np.where(np.arange(60) % 2, 1, -1)
    mean, lo, hi = paired_bootstrap(noise, base)
    assert lo < 0 < hi
    assert paired_bootstrap(better, base) == paired_bootstrap(better, base)  # seeded
