"""Styled corpus without engines: body structure, gold = inserted text, escaping, URL rewriting, the CV hook."""

from __future__ import annotations

import html
import random
import re

import pytest

from centrum.corpus.bodies import Block, Body, groups, rst_escape, rst_width, structure, to_html, to_rst
from centrum.corpus.build import plan, relative_root_urls, with_base
from centrum.corpus.engines import Article, extras_html
from centrum.corpus.sources import Source
from centrum.gold.datasets import PageItem
from centrum.gold.metrics import Gold
from centrum.gold.sites import page_site, source_site

LONG = "This is a sentence of running text that is clearly longer than any heading would be, and it ends."


def test_title_headings_lists_and_paragraphs() -> None:
    gold = "\n".join(["Storm hits the coast", LONG, "What happened next", LONG + " " + LONG,
                      "- first item of the list", "- second item", "• third item", LONG])
    body = structure(gold, "fallback")
    assert body.title == "Storm hits the coast"
    assert [b.kind for b in body.blocks] == ["p", "h", "p", "li", "li", "li", "p"]
    assert [b.text for b in body.blocks][3:6] == ["first item of the list", "second item", "third item"]
    # The gold is exactly the inserted blocks, one per line; the title is kept apart.
    assert body.gold == "\n".join(b.text for b in body.blocks) + "\n"
    assert "Storm hits" not in body.gold and "- first" not in body.gold


def test_a_lone_dash_line_is_a_paragraph_and_a_sentence_is_never_a_heading() -> None:
    body = structure("\n".join([LONG, "- Yes, he said.", LONG, "Short but ends with a period.", LONG]), "T")
    assert body.title == "T"  # the first line is running text, not a headline
    assert [b.kind for b in body.blocks] == ["p", "p", "p", "p", "p"]
    assert body.blocks[1].text == "Yes, he said."


def test_html_escapes_text_and_keeps_one_block_per_line() -> None:
    blocks = (Block("h", "A <b> & c"), Block("p", "x < y & z"), Block("li", "one"), Block("li", "two"))
    out = to_html(blocks)
    assert out.split("\n\n") == ["<h2>A &lt;b&gt; &amp; c</h2>", "<p>x &lt; y &amp; z</p>",
                                 "<ul><li>one</li><li>two</li></ul>\n"]
    text = re.sub(r"<[^>]+>", "\n", out)
    assert [html.unescape(t) for t in text.split("\n") if t.strip()] == [b.text for b in blocks]
    assert groups(blocks)[2] == ("ul", ["one", "two"])


def test_rst_escape_leaves_no_markup() -> None:
    line = "1. *not emphasis* `code` _target |sub| [1]_ -- \"quotes\" C:\\path"
    escaped = rst_escape(line)
    # Every ASCII punctuation character is escaped; letters, digits and spaces are not.
    assert re.sub(r"\\(.)", r"\1", escaped) == line
    assert all(escaped[i - 1] == "\\" for i, ch in enumerate(escaped) if ch in "*`_|[]" and i > 0)
    assert rst_width("新闻标题") == 8 and rst_width("abc") == 3
    rst = to_rst((Block("h", "新闻"), Block("p", "a*b")))
    title, underline = rst.split("\n")[:2]
    assert set(underline) == {"-"} and len(underline) >= rst_width(title)


def _source(i: int, lang: str = "en") -> Source:
    body = Body(title=f"Title {i}", blocks=tuple(Block("p", f"{LONG} ({i}.{k})") for k in range(3)))
    return Source("set", f"id{i}", lang, f"site{i}.example", body)


def test_plan_is_deterministic_and_comments_never_quote_the_article() -> None:
    sources = [_source(i) for i in range(6)] + [_source(i, "zh") for i in range(6, 9)]
    a = plan(sources, ["sphinx", "pelican"], 6, seed=3, languages=["en", "zh"])
    b = plan(sources, ["sphinx", "pelican"], 6, seed=3, languages=["en", "zh"])
    assert a == b
    assert plan(sources, ["sphinx"], 6, seed=4, languages=["en"]) != plan(sources, ["sphinx"], 6, seed=3,
                                                                           languages=["en"])
    for p in a:
        for art in p.site.articles:
            src = p.sources[art.slug]
            assert src.language == p.site.language
            own = {b.text for b in src.body.blocks}
            assert all(text not in own for _, text in art.comments)
            assert 2 <= len(art.comments) <= 4


def test_boilerplate_is_not_in_the_gold() -> None:
    art = Article(slug="s", body=_source(1).body, date="2023-01-01", tags=("news",),
                  related=(("t", "Other title"),), comments=(("guest", "Someone else's paragraph."),))
    extra = extras_html(art, lambda s: f"{s}.html")
    assert 'href="t.html"' in extra and "Someone else&#x27;s" not in extra and "Someone else's" in extra
    assert "Other title" not in art.body.gold and "Someone else" not in art.body.gold


def test_root_relative_urls_and_base() -> None:
    page = b'<html><head><link href="/assets/main.css" rel="stylesheet"><a href="//cdn.x/y"></a>' \
           b'<script src="/js/a.js"></script></head><body><a href="rel.html">x</a></body></html>'
    out = relative_root_urls(page, 2)
    assert b'href="../../assets/main.css"' in out and b'src="../../js/a.js"' in out
    assert b'href="//cdn.x/y"' in out and b'href="rel.html"' in out
    assert b'href="./assets/main.css"' in relative_root_urls(page, 0)
    based = with_base(b'<!DOCTYPE html><HTML><HEAD lang="en"><title>t</title>', "_sites/x/posts/")
    assert based == b'<!DOCTYPE html><HTML><HEAD lang="en"><base href="_sites/x/posts/"><title>t</title>'


def test_a_generated_page_is_grouped_with_its_source_page(tmp_path) -> None:
    meta = {"id": "sphinx-furo-en-00", "source_set": "daniel", "source_id": "dn-en-1", "source_site": "bbc.co.uk",
            "engine": "sphinx"}
    assert source_site(meta) == "bbc.co.uk"
    assert source_site({"source_set": "daniel", "source_id": "x"}) == "page:daniel/x"
    assert source_site({"id": "plain"}) is None
    f = tmp_path / "p.html"
    f.write_bytes(b'<link rel="canonical" href="https://docs.example.org/a">')
    item = PageItem(dataset="styled", id="p", html_path=f, gold=Gold(text="x"), meta=meta)
    assert page_site(item) == "bbc.co.uk"  # not the generated page's own canonical URL
    plain = PageItem(dataset="other", id="p", html_path=f, gold=Gold(text="x"), meta={"id": "p"})
    assert page_site(plain) == "example.org"


@pytest.mark.parametrize("seed", [0, 1])
def test_bullets_with_numbers(seed: int) -> None:
    rng = random.Random(seed)
    items = [f"{i}. item number {rng.randint(0, 99)}" for i in range(1, 4)]
    body = structure("\n".join([LONG, *items, LONG]), "T")
    assert [b.kind for b in body.blocks] == ["p", "li", "li", "li", "p"]
    assert all(not b.text[0].isdigit() or b.text.startswith(("item",)) for b in body.blocks[1:4])
