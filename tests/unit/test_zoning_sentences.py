"""Sentence tests of HTML zoning (section 3.3): the language-independent splitter and the optional verb test."""

from __future__ import annotations

import pytest

from centrum import algorithms
from centrum.algorithms._zoning_sentences import (
    PerceptronTagger,
    count_script_sentences,
    count_verb_sentences,
    load_tagger,
    sentences,
)
from centrum.core.builders import E, T, build


def test_latin_terminators_split_only_before_space_or_end():
    assert sentences("Prices rose 3.5 percent. See www.example.com today! Why?") == [
        "Prices rose 3.5 percent.", "See www.example.com today!", "Why?"]


def test_closing_quotes_stay_with_their_sentence():
    assert sentences('He said "we will go." Then he left.') == ['He said "we will go."', "Then he left."]


def test_unspaced_and_other_script_terminators_need_no_space():
    assert sentences("第一句话。第二句话！第三句？") == ["第一句话。", "第二句话！", "第三句？"]
    assert sentences("पहला वाक्य। दूसरा वाक्य॥") == ["पहला वाक्य।", "दूसरा वाक्य॥"]
    assert sentences("هل هذا صحيح؟ نعم") == ["هل هذا صحيح؟", "نعم"]


def test_thai_sentences_are_separated_by_a_space():
    assert sentences("ประโยคแรกยาวมาก ประโยคที่สอง") == ["ประโยคแรกยาวมาก", "ประโยคที่สอง"]
    # A space next to Latin text is not a Thai sentence break.
    assert len(sentences("ข่าว BBC วันนี้")) == 1


def test_short_fragments_do_not_count_as_sentences():
    # Menus and bylines: terminated or not, fewer than 4 tokens each.
    assert count_script_sentences("Home. About us. Contact.", 4) == 0
    assert count_script_sentences("The mayor opened the new bridge. Traffic flowed at once.", 4) == 2
    # CJK counts characters as tokens: a 2-character menu item is short, a clause is not.
    assert count_script_sentences("首页。委员会公布了调查结果。", 4) == 1


def test_perceptron_inference_with_hand_made_weights():
    # "dogs" is in the tag dictionary; "run" is scored: the i-1 tag feature pushes it to VBP.
    tagger = PerceptronTagger(
        weights={"i-1 tag NNS": {"VBP": 2.0, "NN": 1.0}, "bias": {"NN": 0.5}},
        tagdict={"dogs": "NNS", ".": "."},
        classes={"NN", "NNS", "VBP", "."},
    )
    assert tagger.tag(["dogs", "run", "."]) == ["NNS", "VBP", "."]
    assert count_verb_sentences("dogs run. dogs dogs.", tagger) == 1


def test_verb_test_uses_the_installed_tagger():
    tagger = load_tagger()
    if tagger is None:  # zoning then falls back to the script test and says so (VERB_UNAVAILABLE)
        assert count_script_sentences("The mayor opened the new bridge. Traffic flowed at once.", 4) == 2
    else:
        # No verb in the headline list; both prose sentences have one.
        assert count_verb_sentences("Sports news and weather. Top stories today.", tagger) == 0
        assert count_verb_sentences("The mayor opened the new bridge. Traffic flowed at once.", tagger) == 2


@pytest.mark.parametrize("test", ["script", "verb"])
def test_both_sentence_tests_pick_the_prose_column(test: str):
    prose = "The mayor opened the new bridge on Monday. Traffic flowed across it within an hour."
    b = build(E("html", (0, 0, 1200, 2000), [E("body", (0, 0, 1200, 2000), [
        E("div", (0, 0, 800, 1000), [E("p", (0, 100 * i, 800, 80), [T(prose)]) for i in range(4)], name="main"),
        E("div", (850, 0, 300, 1000), [E("p", (850, 100 * i, 300, 80), [T("Sports news and weather. Top stories.")])
                                       for i in range(4)]),
    ])]))
    r = algorithms.run("zoning", b.snapshot, {"sentence_test": test})
    assert r.nodes == [b.ids["main"]]
