"""Ensemble (issue #11): candidates, features, trimming, text joining, scorer and training helpers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.records import synthetic_records

from centrum.algorithms import ensemble as Ens
from centrum.algorithms.ensemble import blocks as B
from centrum.algorithms.ensemble import features as F
from centrum.algorithms.ensemble import model as M
from centrum.core.builders import E, build
from centrum.core.builders import T as Tx
from centrum.core.result import Candidate, Result
from centrum.core.trace import wanting
from centrum.gold.metrics import Gold
from centrum.training import learner as T

LOREM = "The committee published its findings after a year of hearings across the region. "


def page():
    return build(E("html", (0, 0, 1600, 3000), [
        E("body", (0, 0, 1600, 3000), [
            E("nav", (0, 0, 1600, 100), [E("a", (0, 0, 100, 20), [Tx("Home")]),
                                         E("a", (100, 0, 100, 20), [Tx("World")]),
                                         E("a", (200, 0, 100, 20), [Tx("Sport")])], name="nav"),
            E("article", (300, 150, 900, 2000), [
                E("h1", (300, 150, 900, 60), [Tx("Findings published")], name="h1", font_size=32),
                E("p", (300, 220, 900, 200), [Tx(LOREM * 4), E("a", (300, 400, 80, 20), [Tx("source")])],
                  name="p1"),
                E("figure", (300, 430, 900, 300), [E("img", (300, 430, 900, 280)),
                                                    E("figcaption", (300, 710, 900, 20), [Tx("A bridge.")])],
                  name="fig"),
                E("p", (300, 740, 900, 200), [Tx(LOREM * 4)], name="p2"),
                E("ul", (300, 950, 900, 90), [E("li", (300, 950 + 30 * k, 900, 30), [
                    E("a", (300, 950 + 30 * k, 600, 30), [Tx(f"Related story number {k}")])]) for k in range(3)],
                  name="links"),
                E("div", (300, 1050, 900, 100), [Tx("Share this on social media")], cls="share-tools",
                  name="share"),
            ], name="article"),
            E("aside", (1250, 150, 300, 800), [Tx("Most read today " * 3)], name="aside"),
        ], name="body"),
    ]), viewport=(1600, 1000))


def results_for(b, **answers):
    out = {a: Result(a, []) for a in F.BASE_ALGORITHMS}
    for a, nodes in answers.items():
        out[a] = Result(a, [b.ids[x] for x in nodes], [Candidate([b.ids[x] for x in nodes], 1.0)])
    return out


def test_candidates_hold_answers_ancestors_and_heavy_children():
    b = page()
    s = b.snapshot
    arrays = F.page_arrays(s)
    prop = F.proposals(s, results_for(b, semantic=["article"], r4=["p1", "p2"]), per_algorithm=5, arrays=arrays)
    cands = F.gather(s, prop, arrays, cap=150)
    ids = b.ids
    assert cands[0] == (ids["article"],)  # answers first, in algorithm order
    assert (ids["p1"], ids["p2"]) in cands  # a set of siblings stays a candidate
    assert (ids["body"],) in cands  # ancestors up to <body>
    assert (0,) not in cands  # ... and not above it
    assert (ids["p1"],) in cands and (ids["p2"],) in cands  # children holding >= 1/4 of the article text
    assert len(F.gather(s, prop, arrays, cap=2)) == 2


def test_features_follow_the_definitions():
    b = page()
    s = b.snapshot
    ids = b.ids
    arrays = F.page_arrays(s)
    prop = F.proposals(s, results_for(b, semantic=["article"], gce=["p1"]), per_algorithm=5, arrays=arrays)
    cands = [(ids["article"],), (ids["nav"],), (ids["p1"],), (ids["share"],)]
    X = F.features(s, cands, prop, arrays)
    col = {n: i for i, n in enumerate(F.feature_names())}
    assert X.shape == (4, len(col))
    assert X[1, col["link_char_density"]] == pytest.approx(1.0)  # nav: only link text
    p1_chars = len(LOREM * 4) + len("source")
    assert X[2, col["link_char_density"]] == pytest.approx(len("source") / p1_chars, rel=1e-3)
    # The article is semantic's answer and Arc90's (its paragraphs' parent; no sibling reaches the threshold).
    assert X[0, col["semantic_exact"]] == 1 and X[0, col["arc90_exact"]] == 1 and X[0, col["votes_exact"]] == 2
    # p1 lies inside the semantic answer: precision 1, recall = its share of the article's characters.
    art = arrays.chars[ids["article"]]
    assert X[2, col["semantic_precision"]] == pytest.approx(1.0)
    assert X[2, col["semantic_recall"]] == pytest.approx(p1_chars / art, rel=1e-3)
    # the article contains gce's answer p1 entirely: recall 1, precision = p1's share.
    assert X[0, col["gce_recall"]] == pytest.approx(1.0)
    assert X[0, col["gce_precision"]] == pytest.approx(p1_chars / art, rel=1e-3)
    assert X[0, col["zoning_answered"]] == 0 and X[0, col["semantic_answered"]] == 1
    assert X[3, col["neg_cue"]] == 1 and X[0, col["neg_cue"]] == 0
    assert X[0, col["tag_article"]] == 1 and X[1, col["tag_article"]] == 0
    assert X[0, col["chars_share"]] < 1 and X[0, col["left_vw"]] == pytest.approx(300 / 1600)


def test_context_features_follow_the_definitions():
    b = page()
    s = b.snapshot
    ids = b.ids
    arrays = F.page_arrays(s)
    prop = F.proposals(s, results_for(b, semantic=["article"]), per_algorithm=5, arrays=arrays)
    names = ["article", "nav", "p1", "p2", "links", "share", "aside"]
    X = F.features(s, [(ids[x],) for x in names], prop, arrays)
    col = {n: i for i, n in enumerate(F.feature_names())}
    row = {x: X[i] for i, x in enumerate(names)}
    # Paragraph-like blocks: p1 and p2 only (the aside has 9 words, the link list is all links, no other marks).
    p1 = arrays.chars[ids["p1"]]
    p2 = arrays.chars[ids["p2"]]
    assert arrays.para_chars[ids["body"]] == pytest.approx(p1 + p2)
    assert row["article"][col["para_recall"]] == pytest.approx(1.0)
    assert row["nav"][col["para_recall"]] == 0 and row["aside"][col["para_recall"]] == 0
    assert row["p1"][col["para_recall"]] == pytest.approx(p1 / (p1 + p2))
    assert row["p1"][col["para_precision"]] == pytest.approx(1.0)
    # Document order: p1 comes before p2; the aside after both.
    assert row["p1"][col["para_before"]] == 0 and row["p1"][col["para_after"]] == pytest.approx(p2 / (p1 + p2))
    assert row["p2"][col["para_before"]] == pytest.approx(p1 / (p1 + p2)) and row["p2"][col["para_after"]] == 0
    assert row["aside"][col["para_before"]] == pytest.approx(1.0)
    # Parent and children: p1's share of the article; the article's largest child is p1 or p2.
    art = arrays.chars[ids["article"]]
    assert row["p1"][col["parent_share"]] == pytest.approx(p1 / art)
    assert row["article"][col["top_child_share"]] == pytest.approx(max(p1, p2) / art)
    assert row["p1"][col["parent_para_gain"]] == pytest.approx(p2 / (p1 + p2))
    # Title (largest font in the first screens, not a link): inside the article, 150 px above p1's top.
    assert row["article"][col["has_title"]] == 1 and row["p1"][col["has_title"]] == 0
    assert row["p1"][col["title_dy"]] == pytest.approx((220 - 210) / 1000)
    # Repetition: the link list's three <li> share tag and class.
    assert row["links"][col["rep_log"]] == pytest.approx(np.log1p(3)) and row["links"][col["rep_share"]] == 1
    # Cue groups: "share-tools" is a share cue on the share div, a small part of the article's text.
    assert row["share"][col["cue_share_self"]] == 1 and row["article"][col["cue_share_self"]] == 0
    assert row["article"][col["cue_share_share"]] == pytest.approx(arrays.chars[ids["share"]] / art)
    assert row["article"][col["cue_body_recall"]] == -1  # no body cue on the page


def blog_page(title: str):
    """A short post under its heading, beside a longer sidebar whose heading is the blog's name."""
    return build(E("html", (0, 0, 1600, 3000), [
        E("body", (0, 0, 1600, 3000), [
            E("div", (0, 0, 1600, 80), [E("h1", (0, 0, 800, 60), [Tx("Seth's Blog")], font_size=40)], name="head"),
            E("div", (300, 100, 900, 400), [
                E("h2", (300, 100, 900, 40), [E("a", (300, 100, 600, 40), [Tx("Two deadlines "),
                                                                             E("em", (400, 100, 80, 40),
                                                                               [Tx("(and a read)")])])],
                  name="h2", font_size=28),
                E("p", (300, 150, 900, 100), [Tx(LOREM)], name="post_p"),
            ], name="post"),
            E("div", (1250, 100, 300, 1500), [E("h3", (1250, 100, 300, 30), [Tx("Archives")]),
                                              E("p", (1250, 140, 300, 1400), [Tx(LOREM * 6)])], name="side"),
        ], name="body"),
    ]), viewport=(1600, 1000), title=title)


def test_doc_title_features_find_the_heading_that_repeats_the_title():
    col = {n: i for i, n in enumerate(F.feature_names())}

    def rows(title):
        b = blog_page(title)
        s, ids = b.snapshot, b.ids
        arrays = F.page_arrays(s)
        prop = F.proposals(s, results_for(b, semantic=["side"]), per_algorithm=5, arrays=arrays)
        X = F.features(s, [(ids["post"],), (ids["side"],), (ids["post_p"],)], prop, arrays)
        return [{n: X[i, col[n]] for n in F.DOC_TITLE_FEATURES} for i in range(3)]

    # The post's heading (split over two text nodes inside a link) is a run of the title's words covering 5 of 7;
    # the blog's name covers 2, its words inside the post's heading 2 and 3: the post holds the best match, and the
    # post's heading is where candidates are measured from.
    post, side, para = rows("Seth's Blog: Two deadlines (and a read)")
    assert post["doctitle_in"] == pytest.approx(5 / 7) and side["doctitle_in"] == 0 and para["doctitle_in"] == 0
    assert post["doctitle_cover"] == pytest.approx(5 / 7)
    assert post["doctitle_dy"] == pytest.approx((100 - 140) / 1000)
    assert para["doctitle_dy"] == pytest.approx((150 - 140) / 1000)
    # A text holding the whole title matches too, covering the title's share of it.
    post, _, _ = rows("two deadlines")
    assert post["doctitle_in"] == 1.0 and post["doctitle_cover"] == 1.0
    # The blog's name alone: only the page's header matches, outside every candidate here.
    post, side, _ = rows("Seth's blog")
    assert post["doctitle_in"] == side["doctitle_in"] == 0 and post["doctitle_cover"] == 1.0
    # A title that no shown text repeats matches nothing.
    for title in ("Completely unrelated words here", ""):
        post, side, _ = rows(title)
        assert post["doctitle_in"] == side["doctitle_in"] == -1 and post["doctitle_cover"] == 0


def test_arc90_scores_follow_readability():
    b = page()
    s = b.snapshot
    ids = b.ids
    arrays = F.page_arrays(s)
    # Blocks of >= 25 characters: p1 and p2 (1 + no commas + 3 for >= 300 characters), the share div and the aside
    # (1 each); the related links (22 characters each), the heading and the caption are too short.
    assert arrays.chars[ids["p1"]] >= 300 and arrays.chars[ids["share"]] >= 25
    ld = {x: arrays.link_chars[ids[x]] / arrays.chars[ids[x]] for x in ("article", "body")}
    # Parents get the whole score, grandparents half: article 4 + 4 + 1; body 2 + 2 + 0.5 (share) + 1 (aside).
    assert arrays.arc90[ids["article"]] == pytest.approx(9 * (1 - ld["article"]))
    assert arrays.arc90[ids["body"]] == pytest.approx(5.5 * (1 - ld["body"]))
    assert arrays.arc90[ids["p1"]] == 0 and arrays.arc90[ids["nav"]] == 0
    # Each comma adds one; a div gets Readability's +5 prior and a positive class +25.
    commas = build(E("html", (0, 0, 800, 600), [E("body", (0, 0, 800, 600), [
        E("div", (0, 0, 800, 300), [E("p", (0, 0, 800, 100), [Tx("One, two, three and four go on a walk.")])],
          cls="post", name="div")])]), viewport=(800, 600))
    a2 = F.page_arrays(commas.snapshot)
    assert a2.arc90[commas.ids["div"]] == pytest.approx(1 + 2 + 0 + 5 + 25)  # 2 commas, < 100 characters
    names = ["article", "p1", "aside"]
    prop = F.proposals(s, results_for(b), per_algorithm=5, arrays=arrays)
    X = F.features(s, [(ids[x],) for x in names], prop, arrays)
    col = {n: i for i, n in enumerate(F.feature_names())}
    row = {x: X[i] for i, x in enumerate(names)}
    assert row["article"][col["arc90_rel"]] == 1 and row["p1"][col["arc90_rel"]] == 0
    assert row["p1"][col["arc90_top_recall"]] == pytest.approx(arrays.chars[ids["p1"]] / arrays.chars[ids["article"]])
    assert row["p1"][col["arc90_top_precision"]] == 1 and row["article"][col["arc90_top_recall"]] == 1
    assert row["aside"][col["arc90_top_recall"]] == 0 and row["aside"][col["arc90_top_precision"]] == 0


def test_char_counts_per_text_node_match_the_regexes_above_the_bmp_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    texts = ["a1\u0663\U0001d7d8x.", "\u30029\U000104a0!", "none here"]
    b = build(E("html", (0, 0, 800, 600), [E("body", (0, 0, 800, 600), [
        E("p", (0, 20 * k, 800, 20), [Tx(t)]) for k, t in enumerate(texts)])]))
    s = b.snapshot
    tn = np.arange(s.m)
    marks, digits = F.char_counts(s, tn, [(B._SENTENCE_PUNCT, None), (B._digits(), str.isdecimal)])
    assert digits.tolist() == [len(re.findall(r"\d", s.texts[t])) for t in tn] == [3, 2, 0]
    assert marks.tolist() == [len(re.findall(r"[.!?。！？؟।]", s.texts[t])) for t in tn] == [1, 2, 0]
    # Counted in runs of characters (bounded memory on large pages): any run length gives the same counts, down to
    # runs shorter than one text node, and a subset of the nodes in any order.
    for chunk in (1, 3, 7, 1 << 20):
        monkeypatch.setattr(F, "CHAR_COUNT_CHUNK", chunk)
        again = F.char_counts(s, tn, [(B._SENTENCE_PUNCT, None), (B._digits(), str.isdecimal)])
        assert [a.tolist() for a in again] == [marks.tolist(), digits.tolist()]
        some = F.char_counts(s, np.array([2, 0]), [(B._digits(), str.isdecimal)])[0]
        assert some.tolist() == [0, 3]
    assert [a.tolist() for a in F.char_counts(s, np.zeros(0, dtype=np.int64), [(B._digits(), None)])] == [[]]


def _model_for(b, results=None):
    s = b.snapshot
    return Ens.prepare(s, results or results_for(b, semantic=["article"]), Ens.Config())


def test_rule_trim_drops_boilerplate_and_link_groups_but_keeps_media_and_inline_links():
    b = page()
    s = b.snapshot
    ids = b.ids
    pm = _model_for(b)
    out = Ens.output(s, (ids["article"],), pm, Ens.Config(filter="rules"))
    assert "Related story" not in out.text  # link group (3 links, all link text)
    assert "Share this" not in out.text  # strong negative class cue
    assert "source" in out.text and "A bridge." in out.text and "Findings" in out.text
    assert out.dropped == 2
    assert ids["fig"] in out.nodes and ids["p1"] in out.nodes and ids["links"] not in out.nodes
    # Without a filter the whole article is the answer.
    out2 = Ens.output(s, (ids["article"],), pm, Ens.Config(filter="none"))
    assert out2.nodes == [ids["article"]] and out2.dropped == 0 and "Related story" in out2.text


def test_rule_trim_never_removes_most_of_the_answer():
    b = page()
    # A share cap of 0 forbids any removal.
    out = Ens.output(b.snapshot, (b.ids["article"],), _model_for(b), Ens.Config(filter="rules", max_trim_share=0.0))
    assert out.dropped == 0 and "Related story" in out.text


def test_blocks_are_the_lines_of_the_candidate_with_their_features():
    b = page()
    s = b.snapshot
    ids = b.ids
    pm = _model_for(b, results_for(b, semantic=["article"], r4=["p1", "p2"]))
    pb = B.page_blocks(s, (ids["article"],), pm.arrays, pm.proposals, with_texts=True)
    names = B.feature_names()
    col = {n: i for i, n in enumerate(names)}
    # One block per block container in document order: h1, p1 (its inline link included), figcaption, p2, three
    # li, the share div.
    assert [s.tags[c] for c in pb.container] == ["h1", "p", "figcaption", "p", "li", "li", "li", "div"]
    assert pb.texts[0] == "Findings published" and pb.texts[1].endswith("source")
    X = pb.X
    assert X[4, col["link_density"]] == 1.0 and X[3, col["link_density"]] == 0.0
    p1_chars = len(LOREM * 4) + len("source")
    assert X[1, col["link_density"]] == pytest.approx(len("source") / p1_chars)
    assert X[0, col["heading"]] == 1 and X[0, col["tag_h"]] == 1 and X[1, col["tag_p"]] == 1
    assert X[7, col["strong_cue"]] == 1 and X[1, col["strong_cue"]] == 0  # share-tools, below the candidate
    # R4 answered p1 + p2: those blocks are wholly inside its answer, the heading is not; gce did not answer.
    assert X[1, col["in_r4"]] == 1.0 and X[3, col["in_r4"]] == 1.0 and X[0, col["in_r4"]] == 0.0
    assert (X[:, col["in_gce"]] == -1.0).all() and (X[:, col["in_semantic"]] == 1.0).all()
    assert X[0, col["rel_index"]] == 0.0 and X[-1, col["rel_index"]] == 1.0
    assert X[1, col["ends_sentence"]] == 0 and X[3, col["ends_sentence"]] == 1  # "... source" vs "... region."
    assert X[0, col["prev_link_density"]] == -1.0 and X[5, col["prev_link_density"]] == 1.0
    assert X[:, col["chars_share"]].sum() == pytest.approx(1.0)


def test_block_filter_drops_low_scoring_blocks_keeps_media_and_never_empties():
    b = page()
    s = b.snapshot
    ids = b.ids
    pm = _model_for(b)
    names = B.feature_names()
    # A filter that keeps blocks with link density <= 0.5 (score 1) and drops the others (score 0).
    model = M.Stumps(names, 0.0, [names.index("link_density")], [0.5], [1.0], [0.0])
    out = Ens.output(s, (ids["article"],), pm, Ens.Config(scope="candidate"), block_model=model)
    assert "Related story" not in out.text and "Findings" in out.text and "Share this" in out.text
    assert out.dropped == 3
    assert ids["links"] not in out.nodes and ids["fig"] in out.nodes  # the image's figure has no dropped text
    assert [x["kept"] for x in out.blocks] == [True, True, True, True, False, False, False, True]
    # A filter that drops everything is overruled: the candidate stays whole.
    none = M.Stumps(names, 0.0)
    out2 = Ens.output(s, (ids["article"],), pm, Ens.Config(scope="candidate"), block_model=none)
    assert out2.nodes == [ids["article"]] and "Related story" in out2.text


def test_block_labels_follow_the_gold():
    gold = Gold(text="the quick brown fox jumps over the lazy dog Home")
    y = T.block_labels(gold, ["the quick brown fox jumps", "Share this story on the web", "Home", "", "fox cat"])
    assert y[0] == 1.0 and y[1] == 0.0 and y[2] == 1.0 and np.isnan(y[3]) and y[4] == 0.5
    snip = Gold(with_=("quick brown",), without=("Share this",))
    y = T.block_labels(snip, ["a quick  brown fox", "Share this now", "unrelated"])
    assert y[0] == 1.0 and y[1] == 0.0 and np.isnan(y[2])


def test_listwise_fit_ranks_within_pages_whatever_their_level():
    """Pages whose F1 levels differ (hard vs easy) but where feature 0 marks the best candidate: the listwise
    objective learns feature 0; least squares is misled by feature 1, which tracks the page's level."""
    rng = np.random.default_rng(4)
    rows, ys, groups = [], [], []
    for g in range(120):
        level = 0.1 if g % 2 else 0.9
        X = np.zeros((5, 2))
        X[:, 1] = level + rng.random(5) * 0.01
        best = g % 5
        X[best, 0] = 1.0
        y = np.full(5, level - 0.05)
        y[best] = level
        rows.append(X)
        ys.append(y)
        groups.append(np.full(5, g))
    X, y, grp = np.concatenate(rows), np.concatenate(ys), np.concatenate(groups)
    m = M.fit(X, y, ["a", "b"], rounds=40, learning_rate=0.3, min_leaf=5, groups=grp, tau=0.05)
    l2 = M.fit(X, y, ["a", "b"], rounds=40, learning_rate=0.3, min_leaf=5)
    assert m.meta["objective"] == "listwise" and l2.meta["objective"] == "l2"
    assert m.feature[0] == 0 and l2.feature[0] == 1  # the ranking signal first vs the page level first
    pred = m.predict(X).reshape(-1, 5)
    assert (pred.argmax(axis=1) == np.arange(120) % 5).all()


def test_text_of_mask_matches_snapshot_text_of():
    s = page().snapshot
    assert s.text_of_mask(np.ones(s.m, dtype=bool)) == s.text_of([0])
    assert s.text_of_mask(np.zeros(s.m, dtype=bool)) == ""


def _toy(seed: int, n: int = 600):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = (X[:, 1] > np.median(X[:, 1])).astype(float) * 0.8 + 0.1  # the median is a split point
    return X, y


def test_stumps_learn_a_threshold_and_contributions_add_up():
    X, y = _toy(1)
    m = M.fit(X, y, ["a", "b", "c"], rounds=60, learning_rate=0.3, seed=3)
    pred = m.predict(X)
    assert pred[X[:, 1] > 0.55].mean() > 0.8 and pred[X[:, 1] < 0.45].mean() < 0.2
    assert set(m.feature) == {1}  # only the informative feature is used
    np.testing.assert_allclose(m.base + m.contributions(X).sum(axis=1), pred)


def test_contributions_apply_every_stump_including_ties_at_the_threshold():
    m = M.Stumps(["a", "b"], 0.5, feature=[0, 0, 1, 0], threshold=[1.0, 1.0, 0.0, 2.0],
                 left=[1.0, 10.0, 100.0, 1000.0], right=[-1.0, -10.0, -100.0, -1000.0])
    X = np.array([[0.0, 0.0], [1.0, 1.0], [1.5, -1.0], [2.0, 0.0], [3.0, 5.0]])
    expected = np.zeros((5, 2))
    for f, t, a, b in zip(m.feature, m.threshold, m.left, m.right, strict=True):
        expected[:, f] += np.where(X[:, f] <= t, a, b)  # x <= t goes left, as in training
    np.testing.assert_allclose(m.contributions(X), expected)
    m.feature.append(1)  # adding a stump invalidates the cached tables
    m.threshold.append(10.0)
    m.left.append(0.25)
    m.right.append(0.0)
    np.testing.assert_allclose(m.contributions(X)[:, 1], expected[:, 1] + 0.25)


def test_training_is_deterministic_and_round_trips(tmp_path):
    X, y = _toy(2)
    a = M.fit(X, y, ["a", "b", "c"], rounds=40, seed=7)
    b = M.fit(X, y, ["a", "b", "c"], rounds=40, seed=7)
    c = M.fit(X, y, ["a", "b", "c"], rounds=40, seed=8)
    a.save(tmp_path / "a.json")
    b.save(tmp_path / "b.json")
    c.save(tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "c.json").read_bytes()
    back = M.Stumps.load(tmp_path / "a.json", ["a", "b", "c"])
    np.testing.assert_array_equal(back.predict(X), a.predict(X))
    with pytest.raises(ValueError, match="other features"):
        M.Stumps.load(tmp_path / "a.json", ["a", "b", "x"])


def test_shipped_models_match_the_feature_code(former_models):
    """The default models are LightGBM files trained on this version's features; former models, installed by name
    (the fixture does `centrum models install NAME`), still load."""
    # ensemble-v15 reads feature set v14 without the DANA family's columns (`centrum train`'s default --without).
    m = Ens.load_model()
    no_dana = tuple(a for a in F.BASE_ALGORITHMS if a not in ("dana", "danag", "addanag"))
    assert isinstance(m, M.Boosted) and len(m.used_features()) > 10
    assert m.feature_names == Ens.trained_names(F.feature_names("v14"), no_dana)
    assert F.feature_names() == F.feature_names("v14") and Ens.reads_features(m.feature_names, False)
    assert Ens.proposers_of(m, Ens.load_block_model()) == no_dana
    # The former default, ensemble-v14, every base algorithm's columns.
    assert Ens.load_model("ensemble-v14").feature_names == F.feature_names("v14")
    assert Ens.load_block_model("ensemble-v14-blocks").feature_names == B.feature_names("v14")
    # Feature set v13 is the leading columns of v14: ensemble-v13 (a former model) reads exactly its own features.
    assert F.feature_names("v14") == F.feature_names("v13") + F.SHAPE_FEATURES
    assert B.feature_names("v14") == B.feature_names("v13") + B.SHAPE_FEATURES
    assert Ens.load_model("ensemble-v13").feature_names == F.feature_names("v13")
    assert Ens.load_block_model("ensemble-v13-blocks").feature_names == B.feature_names("v13")
    assert m.meta["objective"] == "lambdarank"
    blocks = Ens.load_block_model()
    assert isinstance(blocks, M.Boosted) and blocks.feature_names == Ens.trained_names(B.feature_names("v14"), no_dana)
    assert blocks.meta["objective"] == "cross_entropy"
    old = Ens.load_model("ensemble-v4")
    assert isinstance(old, M.Stumps) and json.loads(json.dumps(old.to_json()))["format"] == M.FORMAT
    assert isinstance(Ens.load_block_model("ensemble-v4-blocks"), M.Stumps)
    # Block filters from before the page scope read the leading columns of today's block features.
    v5 = Ens.load_block_model("ensemble-v5-blocks")
    before_page = B.feature_names()[: B.feature_names().index(B.PAGE_FEATURES[0])]
    assert v5.feature_names == before_page and Ens.reads_features(before_page, blocks=True)
    # Models from before the declared-text features (v6) read the leading columns too; a model of other features
    # (a column renamed, or in another order) is refused.
    v6 = Ens.load_model("ensemble-v6")
    assert v6.feature_names == F.feature_names("v13")[: -len(F.DECLARED_FEATURES) - len(F.DOC_TITLE_FEATURES)]
    # ... and so do those from before the document-title features (v8).
    assert Ens.load_model("ensemble-v8").feature_names == F.feature_names("v13")[: -len(F.DOC_TITLE_FEATURES)]
    assert Ens.load_block_model("ensemble-v6-blocks").feature_names == \
        B.feature_names("v13")[: -len(B.DECLARED_FEATURES)]
    assert not Ens.reads_features(["log_words", "log_chars"], blocks=True)
    assert not Ens.reads_features(F.feature_names()[1:], blocks=False)


def test_a_block_filter_from_before_the_page_scope_still_filters_the_candidate():
    b = page()
    s = b.snapshot
    pm = _model_for(b)
    names = B.feature_names()[: B.feature_names().index(B.PAGE_FEATURES[0])]
    model = M.Stumps(names, 0.0, [names.index("link_density")], [0.5], [1.0], [0.0])
    out = Ens.output(s, (b.ids["article"],), pm, Ens.Config(scope="candidate"), block_model=model)
    assert "Related story" not in out.text and "Findings" in out.text


def test_fit_and_lodo_pick_the_learnable_best_candidate(tmp_path):
    recs = synthetic_records()
    opts = T.FitOptions(rounds=30, min_leaf=5, seed=1)
    m1, m2 = T.fit(recs, opts), T.fit(recs, opts)
    m1.save(tmp_path / "1.json")
    m2.save(tmp_path / "2.json")
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()
    picks, models, block_models = T.lodo(recs, opts)
    assert set(block_models) == {"a", "b"}
    assert set(models) == {"a", "b"} and models["a"].meta["datasets"] == ["b"]
    assert all(picks[f"{r.dataset}/{r.id}"] == int(r.y.argmax()) for r in recs)
    tab = T.table(recs, {"ens": lambda r: picks[f"{r.dataset}/{r.id}"], "none": lambda r: -1}, [])
    assert tab["a"]["ens"] > 0.9 and tab["a"]["none"] == 0.0
    # A peer scored on every page of a set gets its column; one scored on some of them only (renders with and without
    # its in-page extra) gets none there, however well it did on those pages.
    a_pages = [r for r in recs if r.dataset == "a"]
    for k, r in enumerate(a_pages):
        r.extractors["everywhere"] = (0.5, (1.0, 0.5, 0.5))
        if k == 0:
            r.extractors["somewhere"] = (1.0, (1.0, 1.0, 1.0))
    tab = T.table(recs, {"ens": lambda r: picks[f"{r.dataset}/{r.id}"]}, ["everywhere", "somewhere"])
    assert "everywhere" in tab["a"] and "somewhere" not in tab["a"]
    # The same holds in the tables that mix data sets (page type, language), and the row's best peer is a full one.
    groups = T.group_table(recs, lambda r: r.dataset, {"ens": lambda r: picks[f"{r.dataset}/{r.id}"]},
                           ["everywhere", "somewhere"], compare=("ens", ["everywhere", "somewhere"]))
    assert "everywhere" in groups["a"] and "somewhere" not in groups["a"] and "delta" in groups["a"]


def test_balanced_training_lets_every_data_set_weigh_the_same():
    """A big set whose gold wants the larger of two candidates, two small sets wanting the smaller: per page the
    big set outvotes them (8 pages vs 2), per data set the two small sets win (2 sets vs 1)."""
    names = F.feature_names()
    j = names.index("log_chars")
    recs = []
    for ds, pages, want_big in (("big", 16, True), ("small1", 2, False), ("small2", 2, False)):
        for p in range(pages):
            X = np.zeros((2, len(names)))
            X[:, j] = (5.0, 8.0)  # candidate 0 small, candidate 1 large
            y = np.array([0.2, 0.9]) if want_big else np.array([0.9, 0.2])
            recs.append(T.PageRecord(ds, str(p), "text", X, y, [(1.0, 0.0, 0.0)] * 2, 10))
    probe = T.PageRecord("x", "0", "text", recs[0].X, recs[0].y, recs[0].counts, 10)
    per_page = T.fit(recs, T.FitOptions(rounds=20, min_leaf=1, subsample=1.0, balance_datasets=False))
    per_set = T.fit(recs, T.FitOptions(rounds=20, min_leaf=1, subsample=1.0))
    assert T.choose(per_page, probe) == 1
    assert T.choose(per_set, probe) == 0
    assert per_set.meta["balance_datasets"] is True


def test_light_score_and_aggregates():
    f1, c = T.light_score(Gold(text="one two three four five"), "one two three four five")
    assert f1 == 1.0 and c == (1.0, 0.0, 0.0)
    f1, c = T.light_score(Gold(text="one two three four five"), "")
    assert f1 == 0.0
    f1, c = T.light_score(Gold(with_=("alpha beta",), without=("gamma",)), "x alpha  beta y gamma")
    assert c == (1.0, 1.0, 0.0, 0.0) and f1 == pytest.approx(2 / 3)
    assert T.aggregate_f1("snippets", [(1, 1, 0, 0), (1, 0, 0, 1)]) == pytest.approx(4 / 5)


def test_run_on_a_built_page_reports_candidates_with_contributions():
    b = page()
    r = Ens.run(b.snapshot)
    assert r.algorithm == "ensemble" and r.nodes and r.text
    # By default the answer carries its contributions ("why this one"); `explain` asks for the runners-up's too.
    assert len(r.candidates) > 1 and r.candidates[0].features and not any(c.features for c in r.candidates[1:])
    top = r.candidates[0]
    assert top.score == pytest.approx(Ens.load_model().base + sum(top.features.values()))
    every = Ens.run(b.snapshot, Ens.Config(explain=1_000))
    assert all(c.features for c in every.candidates) and every.nodes == r.nodes
    assert r.timing_ms["ensemble"] > 0 and "base_gce" in r.timing_ms
    # A caller that reads no debug output (the host on a press) gets the same answer and scores without them.
    with wanting(debug=False):
        plain = Ens.run(b.snapshot, Ens.Config(explain=1_000))
    assert plain.nodes == r.nodes and [c.score for c in plain.candidates] == [c.score for c in r.candidates]
    assert not any(c.features for c in plain.candidates)
    # The debugger's labels name every proposer whose answer a candidate is, Arc90 included (the article here).
    art = next(c for c in r.candidates if c.nodes == [b.ids["article"]])
    assert "arc90" in art.label and r.debug["answers"]["arc90"] == [b.ids["article"]]


def test_combine_with_a_model_that_trusts_semantic_chooses_the_article():
    b = page()
    s = b.snapshot
    names = F.feature_names()
    model = M.Stumps(names, 0.0, [names.index("semantic_exact")], [0.5], [0.0], [1.0])
    res = results_for(b, semantic=["article"], gce=["aside"], zoning=["body"])
    r = Ens.combine(s, res, Ens.Config(), model=model)
    assert r.debug["chosen"] == [b.ids["article"]]
    # The default block filter then drops the article's share bar (ensemble-v15 scores the related-links list just
    # above its threshold, 0.41-0.47, and keeps it).
    assert "Most read" not in r.text and "Share this" not in r.text and "Findings" in r.text


def test_filter_parameter_is_checked_by_name():
    from centrum.core.config import ConfigError, config_from_dict

    assert config_from_dict(Ens.Config, {"filter": "rules"}).filter == "rules"
    with pytest.raises(ConfigError, match="filter: expected one of"):
        config_from_dict(Ens.Config, {"filter": "bogus"})


def _arc90_page(more_cls: str):
    """div#content (two comma-rich paragraphs) is Readability's top candidate; its siblings test the append rules."""
    para = "The council met on Monday, as planned, and " + "agreed the budget for the coming year " * 8 + "."
    assert len(para) >= 300
    third = "A third paragraph in another box tells the rest of the story for the reader here " * 2
    return build(E("html", (0, 0, 1600, 3000), [E("body", (0, 0, 1600, 3000), [
        E("div", (100, 0, 1000, 3000), [
            E("div", (100, 0, 1000, 800), [E("p", (100, 0, 1000, 400), [Tx(para)]),
                                           E("p", (100, 400, 1000, 400), [Tx(para)])], cls="box", name="content"),
            E("div", (100, 800, 1000, 200), [E("p", (100, 800, 1000, 200), [Tx(third)])], cls=more_cls,
              name="more"),
            E("p", (100, 1000, 1000, 100),
              [Tx("A lead paragraph without links that runs past eighty characters in all.")], name="lead"),
            E("p", (100, 1100, 1000, 30), [Tx("Short note.")], name="short"),
            E("p", (100, 1130, 1000, 30), [Tx("Short note")], name="nope"),
            E("p", (100, 1160, 1000, 30), [E("a", (100, 1160, 1000, 30), [Tx("Read more stories " * 6)])],
              name="links"),
            E("div", (100, 1200, 1000, 200), [E("p", (100, 1200, 1000, 200), [Tx(third)])], name="other"),
        ], cls="col", name="main")])]), viewport=(1600, 1000))


def test_arc90_proposal_appends_siblings_as_readability_does():
    b = _arc90_page("box")
    s, ids = b.snapshot, b.ids
    arrays = F.page_arrays(s)
    top = int(np.argmax(arrays.arc90))
    assert top == ids["content"]
    # Threshold max(10, 0.2 x top): "more" scores 2 + 5 (div) < 10 and passes only with the shared-class bonus;
    # "lead" is a <p> over 80 characters without links; "short" a link-free <p> with a sentence end.
    answer, ranked = F.arc90_proposal(s, arrays, 5)
    assert answer == tuple(sorted(ids[x] for x in ("content", "more", "lead", "short")))
    assert ranked[0] == answer and len(ranked) <= 5 and (ids["content"],) in ranked
    assert [arrays.arc90[r[0]] for r in ranked[1:]] == sorted((arrays.arc90[r[0]] for r in ranked[1:]), reverse=True)
    # Without the shared class the sibling box stays out.
    b2 = _arc90_page("box2")
    answer2, _ = F.arc90_proposal(b2.snapshot, F.page_arrays(b2.snapshot), 5)
    assert b2.ids["more"] not in answer2 and b2.ids["lead"] in answer2
    # As a proposer it is a candidate with its own agreement features.
    prop = F.proposals(s, results_for(b), per_algorithm=5, arrays=arrays)
    cands = F.gather(s, prop, arrays, cap=150)
    assert cands[0] == answer
    X = F.features(s, cands, prop, arrays)
    col = {n: i for i, n in enumerate(F.feature_names())}
    assert X[0, col["arc90_exact"]] == 1 and X[0, col["arc90_answered"]] == 1 and X[0, col["votes_exact"]] == 1


def test_lightgbm_ranker_contributions_add_up_and_it_picks_the_learnable_best(tmp_path):
    """TreeSHAP contributions plus the base are the score (what the debugger shows), the model file is LightGBM's
    own text format and loads back to the same predictions, and a retrain writes the same bytes."""
    recs = synthetic_records()
    opts = T.FitOptions(learner="lightgbm", lgb_rounds=40, lgb_min_leaf=5, seed=3)
    m = T.fit(recs, opts)
    assert isinstance(m, M.Boosted) and m.meta["objective"] == "lambdarank"
    X = np.concatenate([r.X for r in recs])
    np.testing.assert_allclose(m.base + m.contributions(X).sum(axis=1), m.predict(X), atol=1e-9)
    assert all(T.choose(m, r) == int(r.y.argmax()) for r in recs)
    # The deciding feature carries the largest contribution for the chosen candidate.
    top = np.argmax(np.abs(m.contributions(recs[0].X[[int(recs[0].y.argmax())]]))[0])
    assert F.feature_names()[top] == "semantic_exact"
    m.save(tmp_path / "m.lgb.txt")
    T.fit(recs, opts).save(tmp_path / "again.lgb.txt")
    assert (tmp_path / "m.lgb.txt").read_bytes() == (tmp_path / "again.lgb.txt").read_bytes()
    back = M.load_model_file(tmp_path / "m.lgb.txt", F.feature_names())
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    with pytest.raises(ValueError, match="other features"):
        M.load_model_file(tmp_path / "m.lgb.txt", [*F.feature_names()[:-1], "nope"])


def test_the_candidate_scorer_is_one_lightgbm_model_scoring_the_mean_of_its_bag():
    """A bag of rankers of consecutive seeds ships as one LightGBM booster holding all their trees: its raw score and
    its TreeSHAP contributions are the members' means."""
    import dataclasses

    import lightgbm as lgb

    recs = synthetic_records()
    X = np.concatenate([r.X for r in recs])
    opts = T.FitOptions(learner="lightgbm", lgb_rounds=15, lgb_min_leaf=5, seed=3, ranker_bag=1)
    members = [T.fit(recs, dataclasses.replace(opts, seed=s)) for s in (3, 4, 5)]
    bag = T.fit(recs, dataclasses.replace(opts, ranker_bag=3))
    assert bag.meta["bag"] == 3 and bag.booster.num_trees() == sum(m.booster.num_trees() for m in members)
    np.testing.assert_allclose(bag.predict(X), np.mean([m.predict(X) for m in members], axis=0), atol=1e-12)
    np.testing.assert_allclose(bag.contributions(X), np.mean([m.contributions(X) for m in members], axis=0),
                               atol=1e-12)
    assert isinstance(lgb.Booster(model_str=bag.to_string()), lgb.Booster)  # the library reads it as its own
    assert not np.allclose(members[0].predict(X), members[1].predict(X))  # the seeds made different rankers


def test_a_model_runs_the_proposers_it_was_trained_with(former_models, monkeypatch):
    """A model trained without some base algorithms (`centrum train --without zoning`) names their columns as not
    run, so its file says what to run: the ensemble runs the algorithms some model was trained with and no others;
    every earlier model (and the stumps) runs all of them."""
    recs = synthetic_records()
    without = tuple(a for a in F.BASE_ALGORITHMS if a != "zoning")
    m = T.fit(recs, T.FitOptions(learner="lightgbm", lgb_rounds=20, lgb_min_leaf=5, seed=3, proposers=without))
    assert "unrun_zoning_exact" in m.feature_names and "semantic_exact" in m.feature_names
    assert Ens.proposers_of(m) == without and Ens.reads_features(m.feature_names, blocks=False)
    blocks = T.fit_blocks([], T.FitOptions(proposers=without))
    assert "unrun_in_zoning" in blocks.feature_names and Ens.proposers_of(blocks) == without
    # The names survive the model file, and a model installed by name runs without zoning.
    m.save(Ens.models_dir() / "nozoning.lgb.txt")
    assert Ens.proposers_of(Ens.load_model("nozoning")) == without
    r = Ens.run(page().snapshot, Ens.Config(weights="nozoning", filter="rules"))
    assert r.debug["proposers"] == sorted(without) and "base_zoning" not in r.timing_ms
    assert r.debug["answers"]["zoning"] == [] and r.nodes
    # combine() given every algorithm's answer reads only those the model was trained with.
    cfg = Ens.Config(weights="nozoning", filter="rules")
    every, _ = Ens.run_base(page().snapshot)
    again = Ens.combine(page().snapshot, every, cfg, model=Ens.load_model("nozoning"))
    assert again.debug["proposers"] == sorted(without) and again.debug["answers"]["zoning"] == []
    assert again.nodes == r.nodes
    # With a block filter trained with zoning, zoning runs again (the union of what the models read).
    assert Ens.proposers_of(m, Ens.load_block_model()) == F.BASE_ALGORITHMS
    for old in ("ensemble-v4", "ensemble-v5", "ensemble-v9"):
        assert Ens.proposers_of(Ens.load_model(old), Ens.load_block_model(f"{old}-blocks")) == F.BASE_ALGORITHMS
    assert set(Ens.run_base(page().snapshot, ("gce", "r4"))[0]) == {"gce", "r4"}
    # A renamed column is still a column of this version; a column of another name is not.
    assert not Ens.reads_features(["unrun_log_chars", *F.feature_names()[1:]], blocks=False)


def test_lightgbm_block_filter_predicts_a_gold_share():
    rng = np.random.default_rng(1)
    names = B.feature_names()
    X = rng.random((400, len(names)))
    y = (X[:, 0] > 0.5).astype(float)
    m = T.fit_lgb_blocks(X, y, np.ones(400), T.FitOptions(lgb_rounds=60, block_min_leaf=10))
    p = m.predict(X)
    assert ((p >= 0) & (p <= 1)).all() and ((p >= 0.5) == (y == 1)).mean() > 0.95


def thread():
    """A forum thread: three posts with the same (tag, class) structure, a sidebar and a footer."""
    posts = [E("div", (300, 200 + 400 * k, 900, 380), [
        E("div", (300, 200 + 400 * k, 900, 30), [Tx(f"user{k}")], cls="author"),
        E("div", (300, 240 + 400 * k, 900, 300), [E("p", (300, 240 + 400 * k, 900, 300), [Tx(LOREM * (k + 2))])],
          cls="post-body", name=f"body{k}"),
    ], cls="post", name=f"post{k}") for k in range(3)]
    return build(E("html", (0, 0, 1600, 2000), [
        E("body", (0, 0, 1600, 2000), [
            E("div", (300, 200, 900, 1200), posts, cls="thread", name="thread"),
            E("aside", (1250, 200, 300, 600), [E("p", (1250, 200, 300, 100), [Tx("Most read today " * 3)])],
              name="aside"),
            E("footer", (0, 1900, 1600, 100), [E("p", (0, 1900, 1600, 100), [Tx("Copyright the forum")])],
              name="footer"),
        ], name="body"),
    ]), viewport=(1600, 1000))


def test_path_signature_matches_repeated_structure_only():
    b = thread()
    s = b.snapshot
    sig = B.path_signature(s, F.page_arrays(s))
    ids = b.ids
    assert sig[ids["body0"]] == sig[ids["body1"]] == sig[ids["body2"]]  # same (tag, class) path, ids ignored
    assert sig[ids["post0"]] == sig[ids["post2"]] and sig[ids["post0"]] != sig[ids["body0"]]
    assert len({sig[ids["aside"]], sig[ids["footer"]], sig[ids["thread"]], sig[ids["body0"]]}) == 4


def test_page_scope_blocks_cover_the_page_relative_to_the_chosen_post():
    b = thread()
    s = b.snapshot
    ids = b.ids
    pm = Ens.prepare(s, results_for(b, semantic=["body1"]), Ens.Config())
    names = B.feature_names()
    col = {n: i for i, n in enumerate(names)}
    page = B.page_blocks(s, (ids["body1"],), pm.arrays, pm.proposals, with_texts=True, scope="page")
    cand = B.page_blocks(s, (ids["body1"],), pm.arrays, pm.proposals, with_texts=True)
    # Every line of the page: three authors, three post bodies, the sidebar and the footer, in document order.
    assert len(page.texts) == 8 and page.texts[-1] == "Copyright the forum"
    assert len(cand.texts) == 1
    X = page.X
    body_rows = [i for i, c in enumerate(page.container) if s.tags[c] == "p" and "committee" in page.texts[i]]
    assert len(body_rows) == 3
    # The chosen post's body: inside, at distance 0; the other posts' bodies share its path, the sidebar does not.
    assert X[body_rows[1], col["in_chosen"]] == 1.0 and X[body_rows[1], col["dist_chosen"]] == 0.0
    assert X[body_rows[0], col["in_chosen"]] == 0.0 and X[body_rows[0], col["dist_chosen"]] < 0
    assert X[body_rows[2], col["dist_chosen"]] > 0
    assert all(X[i, col["same_path"]] == 1 for i in body_rows) and X[-2, col["same_path"]] == 0
    assert X[body_rows[0], col["log_path_blocks"]] == pytest.approx(np.log1p(3))
    # Sizes and positions stay relative to the candidate: its own row equals the candidate-scope row.
    shared = [n for n in names if n not in ("dist_chosen", "prev_link_density", "next_link_density",
                                            "prev_log_chars", "next_log_chars", "log_path_blocks")]
    for n in shared:
        assert X[body_rows[1], col[n]] == pytest.approx(cand.X[0, col[n]]), n


def test_page_scope_filter_adds_the_other_posts_and_drops_the_sidebar():
    b = thread()
    s = b.snapshot
    ids = b.ids
    pm = Ens.prepare(s, results_for(b, semantic=["body1"]), Ens.Config())
    names = B.feature_names()
    # A filter that keeps the blocks sharing the chosen block's path (score 1) and drops the others (score 0).
    model = M.Stumps(names, 0.0, [names.index("same_path")], [0.5], [0.0], [1.0])
    out = Ens.output(s, (ids["body1"],), pm, Ens.Config(scope="page"), block_model=model)
    assert out.text.count("committee") == 2 + 3 + 4 and "Most read" not in out.text and "user0" not in out.text
    assert sorted(out.nodes) == sorted([ids["body0"], ids["body1"], ids["body2"]])
    # The same filter in candidate scope can only keep what the chosen post holds.
    out2 = Ens.output(s, (ids["body1"],), pm, Ens.Config(scope="candidate"), block_model=model)
    assert out2.text.count("committee") == 3 and out2.nodes == [ids["body1"]]


DESCRIPTION = "Wheel thrown, matte textured vessel in our white speckle finish with a clear glazed interior."


def product_page(declared: str | None):
    """A shop page: the largest text is the shipping and returns section, the description sits in its own box; the
    page's JSON-LD Product object declares the description (with markup and an entity, as shops write it)."""
    ld = ('{"@context": "https://schema.org", "@graph": [{"@type": "Organization", "name": "Ghost Wares"},'
          f' {{"@type": "Product", "name": "Mug", "description": "<p>{declared}</p>"}}]}}') if declared else ""
    source = ("<html><head><script>var description = 'not this';</script>"
              f"<script type=\"application/ld+json\">{ld}</script></head><body>...</body></html>")
    return build(E("html", (0, 0, 1600, 2000), [
        E("body", (0, 0, 1600, 2000), [
            E("div", (300, 100, 900, 300), [
                E("h1", (300, 100, 900, 60), [Tx("White speckle mug")], name="h1", font_size=32),
                E("p", (300, 170, 900, 60), [Tx(DESCRIPTION)], name="desc"),
                E("p", (300, 240, 900, 30), [Tx("$42.00")], name="price"),
            ], name="product"),
            E("div", (300, 500, 900, 600), [Tx("Shipping and returns: orders leave our studio within a week. " * 6)],
              name="shipping"),
        ], name="body"),
    ]), viewport=(1600, 1000), source=source)


def test_declared_text_is_the_content_fields_of_every_json_ld_object():
    from centrum.core.metadata import declared_text, ld_json_texts

    src = ('<script type="application/ld+json">{"@type": "NewsArticle", "headline": "A headline that is long",'
           ' "articleBody": "Body of the   article, \\n as published &amp; more."}</script>'
           "<script type='application/ld+json'><!-- [{\"@type\": \"Product\", \"description\": \"Short\"},"
           ' {"@type": "Comment", "text": "<b>A reader</b> wrote this comment.",}] --></script>'
           '<script>{"articleBody": "a plain script is not declared content"}</script>'
           '<script type="application/ld+json">{broken</script>')
    expected = "body of the article, as published & more.\na reader wrote this comment."
    assert declared_text(ld_json_texts(src)) == expected
    assert declared_text(ld_json_texts(None)) == declared_text(ld_json_texts("<p>no json-ld</p>")) == ""


def test_declared_text_features_point_at_the_declared_description():
    # A declared text that says something else (here: one space more) marks nothing; the shown text itself does,
    # whatever its markup, entities, case and whitespace in the JSON-LD.
    arrays = F.page_arrays(product_page(DESCRIPTION.replace("thrown,", "thrown ,")).snapshot)
    assert arrays.decl_t.sum() == 0 and arrays.decl_len > 0
    b = product_page(DESCRIPTION.upper().replace("MATTE", "<em>MATTE</em>").replace("&", "&amp;"))
    s, ids = b.snapshot, b.ids
    arrays = F.page_arrays(s)
    desc_t = [t for t in range(s.m) if s.texts[t] == DESCRIPTION]
    assert arrays.decl_t[desc_t[0]] == len(DESCRIPTION) and arrays.decl_t.sum() == len(DESCRIPTION)
    prop = F.proposals(s, results_for(b, semantic=["shipping"]), per_algorithm=5, arrays=arrays)
    cands = [(ids["shipping"],), (ids["product"],), (ids["desc"],)]
    X = F.features(s, cands, prop, arrays)
    col = {n: i for i, n in enumerate(F.feature_names())}
    assert X[:, col["decl_recall"]].tolist() == [0.0, 1.0, 1.0]
    assert X[2, col["decl_precision"]] == pytest.approx(1.0)
    assert 0 < X[1, col["decl_precision"]] < 1
    assert X[0, col["log_decl_shown"]] == pytest.approx(np.log1p(len(DESCRIPTION)))
    # Blocks of the whole page relative to the shipping section: only the description's block is declared text.
    pb = B.page_blocks(s, (ids["shipping"],), arrays, prop, scope="page", with_texts=True)
    bcol = {n: i for i, n in enumerate(B.feature_names())}
    shares = dict(zip(pb.texts, pb.X[:, bcol["decl_share"]].tolist(), strict=True))
    assert shares[DESCRIPTION] == pytest.approx(1.0)
    assert sum(v > 0 for v in shares.values()) == 1
    # A page that declares nothing gets zeros, not an error.
    plain = product_page(None)
    assert F.page_arrays(plain.snapshot).decl_len == 0


def test_declared_text_from_a_press_without_the_source_is_the_same():
    """A press that does not collect the source sends the ld+json texts alone (json_ld): the declared-text arrays
    are the ones the source gives."""
    import dataclasses

    from centrum.core.metadata import ld_json_texts

    s = product_page(DESCRIPTION).snapshot
    scripts = ld_json_texts(s.source)
    assert scripts
    lean = dataclasses.replace(s, source=None, json_ld=scripts)
    full_arrays, lean_arrays = F.page_arrays(s), F.page_arrays(lean)
    assert lean_arrays.decl_len == full_arrays.decl_len > 0
    assert np.array_equal(lean_arrays.decl_t, full_arrays.decl_t) and lean_arrays.decl_t.sum() > 0
    # Neither the source nor json_ld: nothing declared.
    assert F.page_arrays(dataclasses.replace(s, source=None)).decl_len == 0


def test_declared_text_matching_stops_at_its_budget(monkeypatch):
    # A page may declare a huge text and show many nodes: the substring tests stop once their scans would pass the
    # budget, in document order, instead of growing with nodes x declared characters.
    b = product_page(DESCRIPTION)
    s = b.snapshot
    declared_len = F.page_arrays(s).decl_len
    monkeypatch.setattr(F, "DECLARED_SCAN_BUDGET", declared_len * 2)  # two tests: the h1, then the description
    assert F.page_arrays(s).decl_t.sum() == len(DESCRIPTION)
    monkeypatch.setattr(F, "DECLARED_SCAN_BUDGET", declared_len)  # one test: only the heading is compared
    assert F.page_arrays(s).decl_t.sum() == 0


def _post_with_comments(post: str, section: tuple[str, str, str] = ("comments", "comments", "comment-body"),
                        reply: str = "A reader's reply, long enough. "):
    """A blog post (its text in <article>) followed, inside the same <main>, by a section of three replies (its class,
    its id, each reply's class)."""
    return build(E("html", (0, 0, 1600, 3000), [E("body", (0, 0, 1600, 3000), [
        E("main", (300, 100, 900, 2000), [
            E("article", (300, 100, 900, 300), [E("h1", (300, 100, 900, 60), [Tx("A short post")]),
                                                E("p", (300, 160, 900, 200), [Tx(post)], name="post")],
              name="article"),
            E("section", (300, 500, 900, 600), [
                E("div", (300, 500 + 100 * k, 900, 90), [Tx(reply * 4)], cls=section[2], name=f"c{k}")
                for k in range(3)], cls=section[0], id=section[1], name="comments"),
        ], name="main")])]), viewport=(1600, 1000))


def test_comment_sections_leave_the_answer_when_enough_text_stays_outside_them():
    b = _post_with_comments(LOREM * 3)  # 246 characters of post, 3 x 124 of comments
    s, ids = b.snapshot, b.ids
    pm = _model_for(b, results_for(b, semantic=["main"]))
    keep_all = F._inside(s, np.array([ids["main"]]))[s.text_owner]
    cfg = Ens.Config()
    kept = Ens.without_comments(s, (ids["main"],), pm.arrays, keep_all, cfg)
    text = s.text_of_mask(kept)
    assert "committee" in text and "A short post" in text and "reader" not in text
    # Through the output: a filter that keeps every block, then the comment step; "keep" leaves them.
    names = B.feature_names()
    keep_every_block = M.Stumps(names, 1.0)
    out = Ens.output(s, (ids["main"],), pm, cfg, block_model=keep_every_block)
    assert "reader" not in out.text and ids["article"] in out.nodes and ids["comments"] not in out.nodes
    assert out.dropped == 3 and [x["kept"] for x in out.blocks] == [True, True, False, False, False]
    # The debugger says why a block the filter kept is out.
    assert [x.get("comment", False) for x in out.blocks] == [False, False, True, True, True]
    from centrum.core.result import block_overlays

    assert block_overlays(out.blocks)[2].label.startswith("block dropped (comment section): A reader's reply")
    kept_with = Ens.output(s, (ids["main"],), pm, Ens.Config(comments="keep"), block_model=keep_every_block)
    assert "reader" in kept_with.text and kept_with.nodes == [ids["main"]]
    # Too little outside them (a thread whose every post is marked a comment; here a floor above the post): kept.
    floor = Ens.Config(comment_min_body=len("A short post") + len(LOREM * 3) + 1)
    assert (Ens.without_comments(s, (ids["main"],), pm.arrays, keep_all, floor) == keep_all).all()


def test_a_comment_section_that_holds_the_chosen_node_stays():
    b = _post_with_comments(LOREM * 3)
    s, ids = b.snapshot, b.ids
    pm = _model_for(b, results_for(b, semantic=["comments"]))
    # The candidate is a comment (or inside the section): its own ancestors are not a section to drop.
    inside = F._inside(s, np.array([ids["c1"]]))[s.text_owner]
    assert (Ens.without_comments(s, (ids["c1"],), pm.arrays, inside, Ens.Config()) == inside).all()


@pytest.mark.parametrize("section", [
    ("replies discussion", "thread", "post-reply"),  # a thread's replies are its content, not a comment section
    ("DiscussionBoard", "comments", "post"),  # a forum engine that calls its posts comments: the element names a thread
    ("commentary", "daily-commentary", "commentary-body"),  # an essay, not readers' comments
])
def test_forum_replies_and_a_commentary_are_no_comment_section(section: tuple[str, str, str]):
    b = _post_with_comments(LOREM * 3, section=section)
    s, ids = b.snapshot, b.ids
    pm = _model_for(b, results_for(b, semantic=["main"]))
    keep_all = F._inside(s, np.array([ids["main"]]))[s.text_owner]
    assert (Ens.without_comments(s, (ids["main"],), pm.arrays, keep_all, Ens.Config()) == keep_all).all()


def test_comments_set_aside_travel_with_the_answer_and_their_count() -> None:
    """Result.comments (PROTOCOL.md "Comments"): the comment section the comment rule left out of the answer, with
    its comments counted (nested replies too); one the candidate never reached when it follows the answer; none on a
    thread, whose posts are the answer."""
    from helpers import goldens

    from centrum import algorithms

    cases = {"blog-comments": ("comments-area", 6), "article-comments": ("comments", 3), "forum-quotes": None}
    for slug, want in cases.items():
        snap = goldens.load_snapshot(slug)
        r = algorithms.run("ensemble", snap)
        plain = r.to_json(with_debug=False)
        if want is None:
            assert r.comments is None and plain["comments"] is None, slug
            continue
        assert plain["comments"] == r.comments and r.comments["count"] == want[1], (slug, r.comments)
        (section,) = r.comments["nodes"]
        assert want[0] in snap.attrs["class"][section].split() and not set(r.nodes) & {section}, slug
        assert "Hanne" not in r.text_for(snap) and "hiker_anna" not in r.text_for(snap)


def test_an_installed_model_is_read_once_per_version_of_its_file(tmp_path, monkeypatch):
    # A host asked for a former model by name answers every request with it: the file is parsed once, and again
    # only when it is replaced.
    import os
    import shutil
    from importlib import resources

    monkeypatch.setenv("CENTRUM_HOME", str(tmp_path))
    (tmp_path / "models").mkdir()
    mine = tmp_path / "models" / "mine.lgb.txt"
    shutil.copyfile(str(resources.files("centrum") / "weights" / f"{Ens.WEIGHTS_NAME}.lgb.txt"), mine)
    first = Ens.load_model("mine")
    assert Ens.load_model("mine") is first
    os.utime(mine, ns=(mine.stat().st_atime_ns, mine.stat().st_mtime_ns + 10**9))  # replaced in place
    again = Ens.load_model("mine")
    assert again is not first and again.feature_names == first.feature_names
