from centrum import algorithms
from centrum.core.builders import E, T, build


def test_first_main_or_article_in_bfs_order_wins_over_document_order():
    b = build(E("html", (0, 0, 1000, 2000), [E("body", (0, 0, 1000, 2000), [
        E("div", (0, 0, 1000, 500), [E("article", (0, 0, 500, 400), [T("teaser")], name="deep")]),
        E("main", (0, 600, 1000, 1000), [T("the real content")], name="shallow"),
    ])]))
    r = algorithms.run("semantic", b.snapshot)
    assert r.nodes == [b.ids["shallow"]]
    assert [c.nodes[0] for c in r.candidates] == [b.ids["shallow"], b.ids["deep"]]


def test_hidden_article_is_ignored_and_no_markup_means_no_result():
    b = build(E("html", (0, 0, 1000, 2000), [E("body", (0, 0, 1000, 2000), [
        E("article", (0, 0, 0, 0), [T("hidden")], display="none"),
        E("div", (0, 0, 1000, 500), [T("content")]),
    ])]))
    r = algorithms.run("semantic", b.snapshot)
    assert r.nodes == [] and "no visible" in r.message
