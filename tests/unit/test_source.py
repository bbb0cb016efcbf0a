"""The source-only extractor (``centrum.algorithms.source``): the lxml walk into blocks, its features, the shipped
model's answer on hand-built pages whose main content is unambiguous, clear errors for pages it cannot read, the
``--no-render`` command line, and deterministic training (``centrum train-source``) on the bundled tiny set."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from centrum import algorithms
from centrum.algorithms import source
from centrum.algorithms import source_features as S
from centrum.cli import main
from centrum.core.builders import E, T, build

REPO = Path(__file__).resolve().parents[2]
TINYSET = REPO / "tests" / "fixtures" / "tinyset"

PARAGRAPHS = [
    "The rivers of the north carry melt water from the mountains to the sea, and every spring their banks flood "
    "the low meadows where the farmers graze their cattle.",
    "Scientists who have measured the flow for forty years say that the floods now come three weeks earlier than "
    "they did, because the snow melts sooner in a warmer climate.",
    "Farmers have adapted by moving their herds earlier, but the fish that spawn in the shallow water have not, "
    "and their numbers have fallen by half since the first survey.",
    "The regional council will decide next month whether to build a series of small weirs that would slow the "
    "water, a plan that the fishermen support and the farmers oppose.",
]
NAV = ["Home", "World", "Sport", "About us"]
RELATED = ["Lakes in summer", "Ten best bridges", "Weather today"]


def article_page(paragraphs: list[str] = PARAGRAPHS, title: str = "Rivers of the north") -> str:
    nav = "".join(f'<li><a href="/{i}">{t}</a></li>' for i, t in enumerate(NAV))
    rel = "".join(f'<li><a href="/r{i}">{t}</a></li>' for i, t in enumerate(RELATED))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<!doctype html><html><head><title>{title} | Example News</title><style>p{{color:red}}</style>"
            f'</head><body><nav class="main-nav"><ul>{nav}</ul></nav><div id="content"><article><h1>{title}</h1>'
            f'{body}</article><aside class="sidebar related"><h3>Related</h3><ul>{rel}</ul></aside></div>'
            '<script>var x = "not text";</script><footer class="site-footer"><p>© 2024 Example News. '
            '<a href="/privacy">Privacy</a> · <a href="/terms">Terms</a></p></footer></body></html>')


# ---- the walk --------------------------------------------------------------------------------------------------------
def test_blocks_are_runs_of_text_under_one_container_and_skip_scripts() -> None:
    tree = S.parse('<html><body><div class="a">one <b>two</b><p>three <a href="/x">link</a></p> four'
                   "<script>no</script> five</div></body></html>", 10_000)
    # The div's text before the <p>, the <p>, and the div's text after it (tail text belongs to the div).
    assert tree.block_text == ["one two", "three link", "four five"]
    assert [tree.tags[e] for e in tree.block_el] == ["div", "p", "div"]
    assert tree.block_link_chars.tolist() == [0.0, 4.0, 0.0]
    # Pre-order subtrees: the div holds b and p (and p holds a); the skipped <script> is no element.
    assert tree.tags == ["html", "body", "div", "b", "p", "a"]
    div = tree.tags.index("div")
    assert tree.end[div] == len(tree.tags) and tree.parent[tree.tags.index("a")] == tree.tags.index("p")


def test_a_page_that_shows_its_text_only_without_scripts_is_read_from_its_noscript() -> None:
    """A Discourse forum serves its posts in <noscript> and an empty body its scripts fill: read as a browser without
    scripts shows it (the renderer's rule). A tracking pixel's or a short notice's <noscript> is passed over."""
    post = "<p>" + "A reply with enough words to read as a post in a thread. " * 4 + "</p>"
    shell = (f"<html><body><div id=splash>Loading</div><noscript><div class=posts>{post * 3}</div></noscript>"
             "</body></html>")
    tree = S.parse(shell, 100_000)
    assert tree.block_text[0] == "Loading" and len(tree.block_text) == 4 and "noscript" in tree.tags
    assert S.parse(shell.replace(post * 3, post), 100_000).block_text == ["Loading"]  # under 500 characters held
    shown = "<p>" + "Text the page shows with its scripts running. " * 5 + "</p>"  # over a fifth of what is held
    assert S.parse(shell.replace("Loading", shown), 100_000).block_text == [" ".join(shown[3:-4].split())]
    pixel = "<html><body><p>Text.</p><noscript><img src=p.gif></noscript></body></html>"
    assert S.parse(pixel, 10_000).block_text == ["Text."]


def test_text_either_side_of_a_comment_is_one_text_and_the_tree_is_a_browser_s() -> None:
    tree = S.parse("<html><body><p>14 comment<!-- x -->s (<!-- -->2<!-- -->)</p><table><tr><td>cell</td></tr>"
                   "</table></body></html>", 10_000)
    assert tree.block_text == ["14 comments (2)", "cell"]
    # HTML5 inserts the <tbody> a browser shows (the collector's paths have it too).
    assert source.node_paths(tree, [int(tree.block_el[1])]) == ["html:1>body:2>table:2>tbody:1>tr:1>td:1"]


def _plain_walk(root: Any) -> dict[str, list[Any]]:
    """The walk's plain definition (what ``source_features._walk`` computes with tag ids and inlined steps): recursive,
    by tag names, one element at a time."""
    w: dict[str, list[Any]] = {k: [] for k in ("parent", "tag", "child_k", "attr", "bits", "cont", "cls", "cx", "end",
                                               "pieces", "piece_at")}

    def element(node: Any, tag: str, p: int, k: int) -> None:
        i = len(w["parent"])
        a = node.attributes
        cls, ident, style = a.get("class") or "", a.get("id"), a.get("style")
        bits = S._TAG_BITS.get(tag, 0) | (w["bits"][p] if p >= 0 else 0)
        if "hidden" in a or a.get("aria-hidden") == "true" or (style and S._HIDDEN_STYLE.search(style)):
            bits |= S._HIDDEN_BIT
        if tag == "a" and "href" in a:
            bits |= S._LINK_BIT
        cont = i if p < 0 or tag in S.BLOCK else w["cont"][p]
        for key, v in (("parent", p), ("tag", tag), ("child_k", k), ("attr", f"{cls} {ident or ''}".lower().strip()),
                       ("bits", bits), ("cont", cont), ("cls", cls), ("cx", a.get("data-cx")), ("end", 0)):
            w[key].append(v)
        owner, glue, children = (cont << 1) | bool(bits & S._LINK_BIT), False, 0
        child = node.first_child
        while child is not None:
            name = child.tag
            if name == "-text":
                text = child.text_content
                if glue:
                    w["pieces"][-1] += text
                elif text and not text.isspace():
                    w["pieces"].append(text)
                    w["piece_at"].append(owner)
                    glue = True
            elif name and not name.startswith("-"):
                glue, children = False, children + 1
                if name.lower() not in S.SKIP:
                    element(child, name.lower(), i, children)
            child = child.next
        w["end"][i] = len(w["parent"])

    element(root, root.tag, -1, 1)
    return w


WALK_PAGES = [
    article_page(),
    '<html lang=en><body><My-Widget class="A B" id=X>one<my-widget>two</my-widget><MY-WIDGET>3</MY-WIDGET>'
    "</My-Widget><DIV CLASS=Nav>x<!-- c --> y<!-- --> <!----><B>z</B></DIV><x-y><z-q>deep</z-q></x-y></body></html>",
    '<p hidden>h<span>in</span></p><div aria-hidden="true">a</div><div aria-hidden="false">b</div>'
    '<div style="color:red; DISPLAY : none">c</div><div style="visibility:hidden">d</div><a>no href</a>'
    '<a href="">empty href<b>bold</b></a><a href=/x class="">x</a><div data-cx="7" class="  Mixed  Case ">e</div>'
    '<span class>v</span><span class="">e</span><span class=" One ">c</span><span ID=i>d</span>',
    "<table><tr><td>1<td>2<tr><th>3</table><select><option>o</select><textarea>t</textarea><template><p>t</p>"
    "</template><noscript><p>n</p></noscript><svg><title>s</title><foreignObject><p>f</p></foreignObject></svg>"
    "<math><mi>x</mi></math><iframe>i</iframe><button>b</button>tail<video>v</video><canvas>c</canvas>",
    "<!doctype html><?php echo 1 ?><html><head><title>t</title><meta charset=utf-8><link rel=x></head><!-- a -->"
    "<body>\u00a0 \u3000<p>\u00a0</p><p>a\u2003b</p>\n\t<ul><li>1<li>2</ul></body></html><!-- after --><p>late</p>",
    "text before any tag <b>bold <i>both</b> italic</i> <p>one<p>two<h1>h<h2>h2</h1> <center>c</center>",
    "<body><div>" * 40 + "deep" + "</div>" * 40 + "<custom-element hidden><p>x</p></custom-element></body>",
]


@pytest.mark.parametrize("page", range(len(WALK_PAGES)))
def test_the_walk_is_its_plain_recursive_definition(page: int) -> None:
    from selectolax.lexbor import LexborHTMLParser

    root = LexborHTMLParser(S._prepare(WALK_PAGES[page], 1_000_000)).root
    want = _plain_walk(root)
    for _ in range(2):  # with the tag table as first met, then as filled
        got = vars(S._walk(root))
        assert {k: got[k] for k in want} == want


def test_character_classes_are_counted_per_text_as_their_tables_say() -> None:
    texts = ["Hello, world. Yes!", "", "数字１２３。，、", "a|b»c·d/e©", "\U0001F600 emoji, 1,2; 3:4", "\uffff\ufffe.",
             "؟।؛،", "x" * 50 + "." * 3]
    got = S._class_counts(texts)
    for table, counts in zip(S._CLASS_TABLES, got, strict=True):
        assert counts.tolist() == [float(sum(bool(table[min(ord(c), 0xFFFF)]) for c in t)) for t in texts]
    assert [c.tolist() for c in S._class_counts([])] == [[]] * len(S._CLASS_TABLES)


def test_title_overlap_is_the_share_of_a_text_s_distinct_tokens_in_the_title() -> None:
    from centrum.core.textmetrics import tokens

    title = "Rivers of the North — ΟΔΟΣ İstanbul 日本語"
    texts = ["Rivers rivers RIVERS of the south", "", "ΟΔΟΣ οδος", "istanbul İstanbul", "日本 語 文", "north-east",
             "nothing here at all", "the the the", "Σ", "x"]
    eligible = np.array([True, True, True, True, True, True, True, False, True, True])
    want_title = set(tokens(title.lower()))
    want = [len(set(tokens(t.lower())) & want_title) / max(len(set(tokens(t.lower()))), 1) if e else 0.0
            for t, e in zip(texts, eligible, strict=True)]
    assert S._title_overlap(texts, title, eligible).tolist() == want
    assert S._title_overlap(texts, "", eligible).tolist() == [0.0] * len(texts)
    assert S._title_overlap(texts, title, np.zeros(len(texts), dtype=bool)).tolist() == [0.0] * len(texts)


def test_cue_groups_match_each_class_text_as_their_regexes_do() -> None:
    texts = ["", "comments", "commentary", "side-bar main", "ads", "bad", "read-more", "readmore", "tags", "tag-x",
             "post_body", "article-content", "content", "contents", "nav\nfooter", "a-date", "update", "metadata",
             "entry", "h-entry foo", "rail", "trail", "tabs", "stable", "x ads", "x\u00a0ads y", "bads ad-x", "ad",
             "post-body", "news_main x", "newsmain", "pagebody", "a article\tb", "repl replies", "more stories",
             "morestories more-stories", "read more", "tags\u2003tag", "date-x\x1cmeta", "xpost", "post\u00e9",
             "\u00e9post", "\u00e9ads", "ads\u00e9"] * 2
    S._CUE_CACHE.clear()
    S._CUE_WORD_CACHE.clear()
    got = S._cue_bits(texts)
    want = [sum(1 << k for k, p in enumerate(S._CUES.values()) if p.search(t)) for t in texts]
    assert got.tolist() == want
    assert S._cue_bits(texts).tolist() == want  # from the cache
    S._CUE_CACHE.clear()
    assert S._cue_bits(texts).tolist() == want  # from the words' cache
    # Each group as the regex finds it, alternative by alternative: plain words, anchored ones, the rest.
    words = sorted({w for t in texts for w in t.split()})
    assert S._match_cues(words) == [sum(1 << k for k, p in enumerate(S._CUES.values()) if p.search(w)) for w in words]


def test_every_match_of_an_anchored_cue_alternative_starts_with_an_anchor() -> None:
    assert S._anchors(r"\bads?\b") == ("ad",) and S._anchors(r"tags?\b") == ("tag",)
    assert S._anchors("repl(?:y|ies)") == ("repl",) and S._anchors("more-?stories") == ("more",)
    assert S._anchors("(?:post|blog)[-_]?(?:body|text)") == ("post", "blog")
    assert S._anchors("(?:post|blog)?body") is None and S._anchors("a?b") is None and S._anchors("[ab]c") is None


def test_node_paths_count_every_element_child_as_the_collector_does() -> None:
    tree = S.parse("<html><head><title>t</title></head><body><script>x</script><div>a</div><div><p>b</p></div>"
                   "</body></html>", 10_000)
    els = [int(e) for e in tree.block_el]
    # head is html's first child, body its second; the script is the body's first child even though skipped.
    assert source.node_paths(tree, els) == ["html:1>body:2>div:2", "html:1>body:2>div:3>p:1"]


def test_features_follow_from_the_page() -> None:
    tree = S.parse(article_page(), 1_000_000)
    X, names = S.block_features(tree)
    assert X.shape == (len(tree.block_text), len(names)) and names == S.feature_names()
    col = {n: X[:, i] for i, n in enumerate(names)}
    by_text = {t: i for i, t in enumerate(tree.block_text)}
    p0, nav0 = by_text[PARAGRAPHS[0]], by_text["Home"]
    assert col["paragraph"][p0] == 1 and col["paragraph"][nav0] == 0
    assert col["link_density"][nav0] == 1 and col["link_density"][p0] == 0
    assert col["in_nav"][nav0] == 1 and col["cue_in_nav"][nav0] == 1 and col["in_article"][p0] == 1
    # The article holds all the paragraph text: the deepest element holding half of it is the article.
    assert col["in_main50"][p0] == 1 and col["in_main50"][nav0] == 0
    footer = next(i for i, t in enumerate(tree.block_text) if t.startswith("©"))
    assert col["in_footer"][footer] == 1 and col["cue_in_footer"][footer] == 1
    assert col["title_overlap"][by_text["Rivers of the north"]] == 1.0


# ---- the shipped model --------------------------------------------------------------------------------------------
def test_context_columns_read_the_first_stage_scores_around_each_block() -> None:
    tree = S.parse("<html><body><h2>News</h2><p>one two three</p><ul><li>a</li><li>b</li><li>c</li></ul>"
                   "<p>end</p></body></html>", 10_000)
    X, _ = S.block_features(tree)
    s = np.array([0.9, 0.8, 0.1, 0.3, 0.2, 0.6])
    Z = S.context_features(tree, X, s)
    names = S.context_feature_names()
    assert tree.block_text == ["News", "one two three", "a", "b", "c", "end"]
    assert Z.shape == (6, len(names)) and np.array_equal(Z[:, : X.shape[1]], X)
    c = {n: Z[:, k] for k, n in enumerate(names)}
    assert c["ctx_score"].tolist() == s.tolist()
    assert c["ctx_prev1_score"].tolist() == [-1.0, 0.9, 0.8, 0.1, 0.3, 0.2]
    assert c["ctx_next2_score"].tolist() == [0.1, 0.3, 0.2, 0.6, -1.0, -1.0]
    items = slice(2, 5)  # one word each: equal weights
    assert np.allclose(c["ctx_run_score"][items], 0.2) and np.allclose(c["ctx_up1_score"][items], 0.2)
    assert np.allclose(c["ctx_run_log_size"][items], np.log1p(3)) and c["ctx_up1_log_blocks"][2] == np.log1p(3)
    assert c["ctx_is_heading"].tolist() == [1, 0, 0, 0, 0, 0]
    assert np.allclose(c["ctx_section_heading_score"], 0.9)
    assert c["ctx_in_span"].tolist() == [1.0] * 6  # kept: News, the paragraph, "end"
    assert c["ctx_log_gap"][3] == np.log1p(2) and c["ctx_log_gap"][0] == 0
    assert np.allclose(c["ctx_page_max"], 0.9) and c["ctx_log_rank"][0] == 0
    assert S.context_features(S.parse("<html><body></body></html>", 100), np.zeros((0, X.shape[1])),
                              np.zeros(0)).shape == (0, len(names))


def test_the_main_container_is_the_deepest_element_holding_the_share_of_kept_words() -> None:
    tree = S.parse("<html><body><ul><li>Home</li><li>News</li></ul><article><h1>Title</h1><div>"
                   "<p>one two three four five six</p><p>seven eight nine ten eleven twelve</p></div></article>"
                   "<footer>c</footer></body></html>", 10_000)
    X, _ = S.block_features(tree)
    assert tree.block_text == ["Home", "News", "Title", "one two three four five six",
                               "seven eight nine ten eleven twelve", "c"]
    c = {n: v for n, v in zip(S.context_feature_names(), S.context_features(tree, X, np.array(
        [0.1, 0.2, 0.6, 0.9, 0.8, 0.1])).T, strict=True)}
    # Kept: the title and both paragraphs. 80 % of their words lie in the article, half in the paragraphs' <div>.
    assert c["ctx_main80_inside"].tolist() == [0, 0, 1, 1, 1, 0]
    assert c["ctx_main50_inside"].tolist() == [0, 0, 0, 1, 1, 0]
    assert c["ctx_main80_depth"][3] == 2 and c["ctx_main50_depth"][3] == 1
    assert np.allclose(c["ctx_main80_kept"], 1.0) and np.allclose(c["ctx_main50_score"], 0.85, atol=0.01)
    assert np.allclose(c["ctx_score_of_max"][3], 1.0) and np.isclose(c["ctx_score_over_fifth"][5], 0.0)
    # Nothing kept: the root stands for the main container, and nothing is kept in it.
    c0 = dict(zip(S.context_feature_names(), S.context_features(tree, X, np.full(6, 0.1)).T, strict=True))
    assert c0["ctx_main80_inside"].tolist() == [1.0] * 6 and np.allclose(c0["ctx_main80_kept"], 0.0)


def test_a_paragraph_rich_article_is_chosen_over_nav_sidebar_and_footer() -> None:
    r = algorithms.run_raw_html("source", article_page().encode())
    assert r.algorithm == "source" and r.nodes == []
    lines = r.text.splitlines()
    for p in PARAGRAPHS:
        assert p in lines
    for boiler in [*NAV, *RELATED, "Privacy", "not text"]:
        assert not any(boiler in line for line in lines), boiler
    assert r.debug["node_paths"] and all(p.startswith("html:1>body:2>div:2>article:1") for p in r.debug["node_paths"])


def test_the_article_wins_in_other_scripts_and_encodings() -> None:
    ru = ["Реки севера несут талую воду с гор к морю, и каждую весну их берега затопляют низкие луга, где фермеры "
          "пасут свой скот.", "Учёные, измеряющие течение сорок лет, говорят, что паводки теперь приходят на три "
          "недели раньше, потому что снег тает быстрее.", "Фермеры приспособились и перегоняют стада раньше, но "
          "рыба, которая нерестится на мелководье, не смогла, и её стало вдвое меньше.",
          "Областной совет в следующем месяце решит, строить ли ряд небольших плотин, которые замедлят воду."]
    html = article_page(ru, "Реки севера").replace("<head>", '<head><meta charset="windows-1251">')
    for data in (html.encode("cp1251"), b"\xff\xfe" + html.encode("utf-16-le")):
        text = algorithms.run_raw_html("source", data).text or ""
        assert all(p in text for p in ru) and "Home" not in text


def test_unreadable_pages_get_a_clear_error() -> None:
    with pytest.raises(S.SourceError, match="empty"):
        algorithms.run_raw_html("source", b"  \n ")
    with pytest.raises(S.SourceError, match="over the limit of 1000"):
        algorithms.run_raw_html("source", article_page().encode(), source.Config(max_chars=1000))
    # An image saved as .html: mostly bytes that decode to nothing.
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
    with pytest.raises(S.SourceError, match="not text in a known encoding"):
        algorithms.run_raw_html("source", png)
    r = algorithms.run_raw_html("source", b"<html><body><img src=a.png></body></html>")
    assert r.text == "" and r.message


def test_on_a_snapshot_the_answer_is_the_containers_node_ids() -> None:
    html = article_page()
    tree = S.parse(html, 1_000_000)
    # The collector's serialization carries data-cx node ids; a snapshot of plain elements stands for the page.
    ids = iter(range(10_000))
    import re

    marked = re.sub(r"<(?!/|!)([a-z0-9]+)", lambda m: f'<{m.group(1)} data-cx="{next(ids)}"', " ".join(html.split()))
    n = next(ids)
    snap = build(E("html", children=[E("body", children=[T("x")])] + [E("span") for _ in range(n - 2)]),
                 source=marked).snapshot
    r = algorithms.run("source", snap)
    article = re.search(r'<article data-cx="(\d+)"', marked)
    assert article and r.nodes == [int(article.group(1))], (r.nodes, tree.block_text)
    bare = build(E("html", children=[E("body", children=[T("x")])])).snapshot
    assert algorithms.run("source", bare).message.startswith("the snapshot has no source")


def test_bad_parameters_are_refused_by_name() -> None:
    from centrum.core.config import ConfigError

    with pytest.raises(ConfigError, match="block_threshold"):
        algorithms.raw_html_config("source", {"block_threshold": "2"})
    with pytest.raises(ValueError, match="needs a rendered page"):
        algorithms.raw_html_config("gce", {})
    with pytest.raises(ConfigError, match="not a model name"):
        algorithms.raw_html_config("source", {"weights": "../../etc/passwd"})
    # A model of other features (the ensemble's candidate scorer) is refused by name, not run.
    cfg = algorithms.raw_html_config("source", {"weights": "ensemble-v15"})
    with pytest.raises(ConfigError, match="not a usable source-only model"):
        algorithms.run_raw_html("source", article_page(), cfg)
    # The two stages read different columns: one given for the other is refused, naming the parameter.
    cfg = algorithms.raw_html_config("source", {"context_weights": source.WEIGHTS_NAME})
    with pytest.raises(ConfigError, match="context_weights: .* is not a usable context stage"):
        algorithms.run_raw_html("source", article_page(), cfg)
    cfg = algorithms.raw_html_config("source", {"weights": source.CONTEXT_WEIGHTS_NAME})
    with pytest.raises(ConfigError, match="^weights: .* is not a usable source-only model"):
        algorithms.run_raw_html("source", article_page(), cfg)
    with pytest.raises(ConfigError, match="context_weights: no model named 'nothing' .*; or 'none': no context stage"):
        algorithms.raw_html_config("source", {"context_weights": "nothing"})


def test_without_the_context_stage_the_first_model_s_scores_are_the_answer() -> None:
    one = source.answer(article_page(), source.Config(context_weights="none"))
    two = source.answer(article_page())
    X, _ = S.block_features(two.tree)
    assert np.array_equal(one.scores, source.load_model().predict(X))
    assert not np.array_equal(one.scores, two.scores) and PARAGRAPHS[2] in one.text and PARAGRAPHS[2] in two.text


# ---- command line -------------------------------------------------------------------------------------------------
def test_extract_no_render_defaults_to_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "a.html"
    page.write_text(article_page(), encoding="utf-8")
    assert main(["extract", "--no-render", str(page), "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == "source" and PARAGRAPHS[2] in out["text"] and "Privacy" not in out["text"]
    (tmp_path / "e.html").write_bytes(b"")
    assert main(["extract", "--no-render", str(tmp_path / "e.html")]) == 2
    assert "source: the page is empty" in capsys.readouterr().err


# ---- training -----------------------------------------------------------------------------------------------------
def test_training_is_deterministic_and_the_model_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from centrum.algorithms.ensemble.model import Boosted
    from centrum.training import source as TS

    a, b = tmp_path / "a.lgb.txt", tmp_path / "b.lgb.txt"
    for out in (a, b):
        assert main(["train-source", str(TINYSET), "--out", str(out), "--rounds", "20", "--context-rounds", "10",
                     "--cv", "--folds", "3"]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert (tmp_path / "a-context.lgb.txt").read_bytes() == (tmp_path / "b-context.lgb.txt").read_bytes()
    assert "mean, sets with independent gold" in capsys.readouterr().out
    model = TS.TwoStage(Boosted.load(a, S.feature_names()),
                        Boosted.load(tmp_path / "a-context.lgb.txt", S.context_feature_names()))
    rows, skipped = TS.collect(__import__("centrum.gold.datasets", fromlist=["x"]).load_dataset(TINYSET).pages)
    assert not skipped and rows
    p = model.predict(rows[0])
    assert p.shape == (rows[0].X.shape[0],) and ((p >= 0) & (p <= 1)).all()
    assert main(["train-source", str(TINYSET), "--out", str(a), "--cv", "--folds", "2"]) == 2
    assert "--folds must be at least 2, and 3 with --cv" in capsys.readouterr().err
    assert main(["train-source", str(TINYSET), "--out", str(a), "--cv", "--limit", "2"]) == 2
    assert "the pages come from 2 site fold(s)" in capsys.readouterr().err


def test_the_context_stage_trains_on_scores_of_first_stages_that_never_saw_the_page() -> None:
    """Nested stacking: the pair of CV fold f is made only of models trained without f, and the context stage of
    every training set reads each page's scores from a first stage trained without that page's fold too."""
    from centrum.gold.datasets import load_dataset
    from centrum.training import source as TS

    rows, _ = TS.collect(load_dataset(TINYSET).pages)
    fitted: list[str] = []
    models = TS.stages(rows, TS.TrainOptions(rounds=5), 3, fitted.append)
    assert sorted(set(models.folds)) == [0, 1, 2]
    TS.site_cv(models)
    k = {frozenset(x) for x in ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2))}
    assert set(models.models) == k  # each fitted once, shared by the two outer folds that need it
    assert len([m for m in fitted if m.startswith("first")]) == 6
    assert [m for m in fitted if m.startswith("context")] == [f"context stage without folds [{f}]" for f in range(3)]
    final = models.two_stage(frozenset())
    assert set(models.models) == k | {frozenset()} and final.first is models.models[frozenset()]


def test_the_context_stage_weighs_every_page_alike_and_the_first_stage_its_blocks_by_words() -> None:
    """The metric is a mean of per-page F1: the context stage's blocks of a page weigh 1 together, a long page's as
    a short one's; the first stage weighs each block by √(words + 1), whatever the page."""
    from centrum.training import source as TS

    opts = TS.TrainOptions()
    short, long = np.array([3.0, 40.0]), np.arange(2000, dtype=np.float64)
    for words in (short, long):
        assert TS.block_weights(words, opts) == pytest.approx(np.sqrt(words + 1.0))
        context = TS.block_weights(words, opts.for_context())
        assert context.sum() == pytest.approx(1.0)
        assert context == pytest.approx((words + 1.0) / (words + 1.0).sum())  # within the page: by words
    half = TS.block_weights(long, replace(opts.for_context(), page_power=0.5))
    assert half.sum() == pytest.approx(np.sqrt((long + 1.0).sum()))
    assert opts.for_context().rounds == opts.context_rounds and opts.for_context().seed == opts.seed


def test_training_refuses_an_empty_selection(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train-source", str(TINYSET), "--limit", "0"]) == 2
    assert "no pages" in capsys.readouterr().err
    assert sys.modules["centrum.algorithms.source"] is source


def test_eval_no_render_scores_the_raw_html_algorithms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval"
    assert main(["eval", str(TINYSET), "--no-render", "--algorithms", "source,gce", "--peers", "none",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "gce: not run: --no-render" in captured.err
    pages = [json.loads(line) for line in (out / "pages.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for p in pages for r in p["rows"] if r["extractor"] == "source"]
    assert len(rows) == len(pages) == 3 and all(r["error"] == "" and r["f1"] > 0.5 for r in rows)


def test_inherited_bits_are_the_or_over_each_element_s_ancestors() -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 300):
        parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)], dtype=np.int64)  # parents first
        depth = np.zeros(n, dtype=np.int64)
        for i in range(1, n):
            depth[i] = depth[parent[i]] + 1
        own = rng.integers(0, 1 << 11, n) * (rng.random(n) < 0.2)
        want = []
        for i in range(n):
            bits, e = 0, i
            while e >= 0:
                bits, e = bits | int(own[e]), int(parent[e])
            want.append(bits)
        assert S._inherited(own, parent, depth).tolist() == want
