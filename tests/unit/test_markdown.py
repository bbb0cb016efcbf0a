"""Markdown and clean HTML from the host's cleaner (centrum.output.outputs + centrum.output.markdown), construct by
construct.

``markdown_of_html`` runs the same cleaner and converter as a rendered page's answer, with every element taken as
shown; the tests at the end use hand-built snapshots to check what the snapshot's flags hide.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from centrum.core.builders import E, T, build
from centrum.core.result import Result
from centrum.output.markdown import convert, escape
from centrum.output.outputs import (
    Outputs,
    clean_content,
    content_html,
    from_html,
    image_url,
    markdown_of_html,
    parse_srcset,
)

URL = "https://example.org/blog/post.html"


def md(html: str, url: str = URL) -> str:
    return markdown_of_html(html, url)


def test_headings_including_aria_headings() -> None:
    out = md('<h1>One</h1><h3>Three</h3><div role="heading" aria-level="4">Four</div>'
             '<span role="heading">Default two</span><h2>Ends with #</h2>')
    assert out.split("\n\n") == ["# One", "### Three", "#### Four", "## Default two", "## Ends with \\#"]


def test_nested_lists_keep_structure_and_start() -> None:
    out = md("<ul><li>a<ul><li>a1<ol><li>deep</li></ol></li><li>a2</li></ul></li><li>b</li></ul>"
             '<ol start="7"><li>seven</li><li><p>eight</p><p>more</p></li></ol>')
    assert out == ("- a\n  - a1\n    1. deep\n  - a2\n- b\n\n"
                   "7. seven\n8. eight\n\n   more")


def test_table_with_colspan_rowspan_and_pipes() -> None:
    out = md("<table><caption>Cap</caption><thead><tr><th>H</th><th colspan=2>Wide</th></tr></thead>"
             "<tbody><tr><td rowspan=2>tall</td><td>a|b</td><td>c<br>d</td></tr><tr><td>e</td><td>f</td></tr>"
             "</tbody></table>")
    assert out == ("Cap\n\n"
                   "| H | Wide |  |\n"
                   "| --- | --- | --- |\n"
                   "| tall | a\\|b | c<br>d |\n"
                   "|  | e | f |")


def test_layout_table_comes_out_as_blocks() -> None:
    out = md("<table><tr><td><h2>Story</h2><p>Body text.</p></td><td><p>Side</p></td></tr></table>")
    assert out == "## Story\n\nBody text.\n\nSide"


def test_code_keeps_leading_spaces_tabs_and_blank_lines() -> None:
    code = "def f(x):\n    if x:\n\treturn 1\n\n        # ``` inside\n    return 2"
    out = md(f'<pre><code class="language-python">{code}</code></pre><p>call <code>f(1)</code> or `x`</p>')
    fence, rest = out.split("\n", 1)
    assert fence == "````python"
    assert rest.startswith(code + "\n````")
    assert rest.endswith("call `f(1)` or \\`x\\`")


def test_pre_first_newline_is_markup_in_raw_html() -> None:
    assert md("<pre>\n  indented\n</pre>") == "```\n  indented\n```"


def test_xhtml_page_with_an_xml_declaration_is_read() -> None:
    """A saved XHTML page declares its bytes' encoding before <html>: the decoded text still parses (lxml refuses
    such text), so the source path's metadata and Markdown are not lost."""
    page = ('<?xml version="1.0" encoding="iso-8859-1"?>\n<!DOCTYPE html>'
            '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Déjà vu</title></head>'
            '<body><h1>Déjà vu</h1><p>Some text.</p></body></html>')
    source = from_html(page, URL)
    assert source.root.findtext(".//title") == "Déjà vu"
    assert md(page) == "# Déjà vu\n\nSome text."


def test_footnotes_become_gfm_footnotes() -> None:
    out = md('<p>Claim<sup id="r1"><a href="#fn1">1</a></sup> and another<a href="#fn2" role="doc-noteref">'
             '[2]</a>, again<sup><a href="#fn1">1</a></sup>.</p>'
             '<ol><li id="fn1">First note. <a href="#r1">back</a></li>'
             '<li id="fn2"><p>Second note.</p><p>Two paragraphs.</p></li></ol>')
    assert out == ("Claim[^1] and another[^2], again[^1].\n\n"
                   "[^1]: First note.\n[^2]: Second note.\n\n    Two paragraphs.")


def test_fragment_link_that_is_not_a_note_stays_a_link() -> None:
    out = md('<p>See <a href="#part2">part two</a>.</p><h2 id="part2">Part two</h2>')
    assert out == "See [part two](https://example.org/blog/post.html#part2).\n\n## Part two"


def test_images_with_alt_and_links_absolute() -> None:
    out = md('<p><a href="../about">About <b>us</b></a> <a href="javascript:alert(1)">bad</a>'
             '<a href="/x"><img src="pic one.png" alt="A [small] cat"></a></p>'
             '<figure><img src="/big.jpg" alt=""><figcaption>Caption</figcaption></figure>')
    assert out == ("[About **us**](https://example.org/about) bad"
                   "[![A \\[small\\] cat](https://example.org/blog/pic%20one.png)](https://example.org/x)\n\n"
                   "![](https://example.org/big.jpg)\n\nCaption")


def test_base_href_is_respected() -> None:
    out = md('<html><head><base href="https://cdn.example.net/a/"></head><body><p><img src="b.png" alt="b">'
             '</p></body></html>')
    assert out == "![b](https://cdn.example.net/a/b.png)"


def test_blockquote_emphasis_sup_sub_and_breaks() -> None:
    out = md("<blockquote><p>Quote <em> spaced </em>end</p><p>E = mc<sup>2</sup>, H<sub>2</sub>O<br>next</p>"
             "</blockquote><hr><p><strong>Bold</strong><s>gone</s></p>")
    assert out == ("> Quote *spaced* end\n>\n> E = mc<sup>2</sup>, H<sub>2</sub>O\\\n> next\n\n---\n\n"
                   "**Bold**~~gone~~")


def test_text_that_looks_like_markdown_is_escaped() -> None:
    out = md("<p># not a heading</p><p>1. not a list</p><p>- nor this</p><p>*stars* _under_ [br] &amp;copy; "
             "a<b>c</b></p><p>> quoted?</p>")
    assert out.split("\n\n") == ["\\# not a heading", "1\\. not a list", "\\- nor this",
                                 "\\*stars\\* \\_under\\_ \\[br\\] \\&copy; a**c**", "\\> quoted?"]
    assert escape("a_b") == "a\\_b"


def test_dropped_and_unwrapped_elements() -> None:
    out = md('<div><script>alert(1)</script><style>p{}</style><form><input value="x">Form text</form>'
             "<custom-el><p>Kept inside unknown</p></custom-el><svg><text>svg text</text></svg>"
             "<iframe src='/x'></iframe><p>End</p></div>")
    assert out == "Kept inside unknown\n\nEnd"


def test_lazy_images_resolved() -> None:
    page = from_html('<img id="a" src="data:image/gif;base64,R0lGOD" data-src="/real.jpg">'
                     '<img id="b" data-srcset="s.jpg 300w, l.jpg 1200w, m.jpg 800w">'
                     '<picture><source srcset="/p-small.webp 1x, /p-big.webp 2x"><img id="c" src="/fallback.jpg">'
                     '</picture><img id="d" src="data:image/gif;base64,R0lGOD">'
                     '<img id="e" srcset="https://cdn.example.org/x,y.jpg 2x, /z.jpg">', URL)

    def url(i: str) -> str | None:
        return image_url(page, page.by_html_id(i))  # type: ignore[arg-type]

    assert url("a") == "https://example.org/real.jpg"
    assert url("b") == "https://example.org/blog/l.jpg"
    assert url("c") == "https://example.org/p-big.webp"
    assert url("d") is None  # a blank placeholder is no picture
    assert url("e") == "https://cdn.example.org/x,y.jpg"
    assert parse_srcset("a.jpg, b.jpg 2x,c.jpg 640w") == [("a.jpg", 0.0), ("b.jpg", 2e-6), ("c.jpg", 640.0)]


def test_noscript_image_used_only_when_the_figure_has_none() -> None:
    out = md('<figure><img src="data:image/gif;base64,R0lGOD"><noscript><img src="/only.jpg" alt="only"></noscript>'
             "<figcaption>one</figcaption></figure>"
             '<figure><img data-src="/lazy.jpg" alt="lazy"><noscript><img src="/dup.jpg"></noscript></figure>')
    assert out == "![only](https://example.org/only.jpg)\n\none\n\n![lazy](https://example.org/lazy.jpg)"


def test_clean_html_keeps_allowed_attributes_only() -> None:
    page = from_html('<div id="x" class="c" onclick="evil()" style="color:red"><p lang="fr" data-x="1">Bonjour '
                     '<a href="/a" target="_blank" title="t">lien</a></p><td colspan="3" rowspan="1">c</td>'
                     '<ol start="3" type="a"><li>x</li></ol><img src="/i.png" alt="i" width="10" height="x"></div>',
                     URL)
    html = content_html(clean_content(page, [page.node_id(page.by_html_id("x"))]))  # type: ignore[arg-type]
    assert html == ('<div><p lang="fr">Bonjour <a href="https://example.org/a" title="t">lien</a></p>'
                    '<td colspan="3">c</td><ol start="3"><li>x</li></ol>'
                    '<img src="https://example.org/i.png" alt="i" width="10"></div>')


def test_deep_nesting_does_not_overflow() -> None:
    # Deeper than Python's recursion limit and the cleaner's depth cap (kept elements below it are unwrapped).
    depth = 1500
    out = md("<div>" * depth + "<p>deep text</p><ul><li>item</li></ul>" + "</div>" * depth)
    assert out == "deep text item"
    md("<div>" * 5000 + "<p>deeper than the HTML parser goes</p>" + "</div>" * 5000)  # no exception


# ---- with a snapshot: what its flags hide ----------------------------------------------------------------------
SOURCE = ('<html data-cx="0"><body data-cx="1"><article data-cx="2"><p data-cx="3">Shown text.</p>'
          '<p data-cx="4">Hidden by display none.</p><div data-cx="5"><p data-cx="6">Inside a zero-height '
          'float container.</p></div><p data-cx="7">Transparent <span data-cx="8">ghost</span> end.</p>'
          '<img data-cx="9" src="/late.jpg" alt="late"><img data-cx="10" src="/pixel.gif"></article></body></html>')


def test_hidden_nodes_left_out_zero_size_containers_kept() -> None:
    page = E("html", (0, 0, 1000, 1000), [E("body", (0, 0, 1000, 1000), [
        E("article", (0, 0, 800, 600), [
            E("p", (0, 0, 800, 20), [T("Shown text.")]),
            E("p", (0, 0, 0, 0), [T("Hidden by display none.")], display="none"),
            E("div", (0, 40, 800, 0), [E("p", (0, 40, 400, 20), [T("Inside a zero-height float container.")])]),
            E("p", (0, 80, 800, 20), [T("Transparent"), E("span", (0, 80, 50, 20), [T("ghost")], opacity=0.0),
                                      T("end.")]),
            E("img", (0, 100, 0, 0)),  # not loaded yet (lazy, below the fold): no size, nothing hides it
            E("img", (0, 120, 1, 1), visible=False),  # a tracking pixel (the collector: 1x1 shows nothing)
        ]),
    ])])
    built = build(page, source=SOURCE, url=URL)
    out = Outputs(built.snapshot, Result("test", [2]))
    text = out.markdown()
    assert "Shown text." in text and "zero-height float container" in text
    assert "display none" not in text and "ghost" not in text and "Transparent end." in text
    assert "![late](https://example.org/late.jpg)" in text and "pixel" not in text
    assert "data-cx" not in out.html()


def test_collapsed_disclosure_panels_come_out_as_the_answer_text_has_them() -> None:
    # A button with aria-expanded, then its display:none panel (Snapshot.text_disclosed); a hidden note is no panel.
    page = E("html", (0, 0, 1000, 1000), [E("body", (0, 0, 1000, 1000), [
        E("main", (0, 0, 800, 600), [
            E("p", (0, 0, 800, 20), [T("A light trail shoe.")]),
            E("button", (0, 30, 100, 20), [T("Care")], attrs={"aria-expanded": "false"}),
            E("div", (0, 0, 0, 0), [E("p", (0, 0, 0, 0), [T("Wash cold.", [])])], display="none"),
            E("form", (0, 60, 800, 100), [E("input", (0, 60, 10, 10)) for _ in range(8)]),
            E("p", (0, 0, 0, 0), [T("Hidden note.", [])], display="none"),
        ]),
    ])])
    source = ('<html data-cx="0"><body data-cx="1"><main data-cx="2"><p data-cx="3">A light trail shoe.</p>'
              '<button data-cx="4" aria-expanded="false">Care</button><div data-cx="5"><p data-cx="6">Wash cold.</p>'
              '</div><form data-cx="7">' + "".join(f'<input data-cx="{8 + k}">' for k in range(8))
              + '</form><p data-cx="16">Hidden note.</p></main></body></html>')
    built = build(page, source=source, url=URL)
    out = Outputs(built.snapshot, Result("test", [2]))
    text = out.markdown()
    assert "A light trail shoe." in text and "Wash cold." in text and "Hidden note." not in text
    assert "Wash cold." in built.snapshot.text_of([2]) and "Hidden note." not in built.snapshot.text_of([2])


def test_outputs_without_source_are_a_clear_error() -> None:
    built = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [E("p", (0, 0, 100, 20), [T("x")])])]))
    out = Outputs(built.snapshot, Result("test", [2]))
    assert out.get("text") == "x"
    from centrum.output.outputs import OutputError

    with pytest.raises(OutputError, match="no source"):
        out.get("markdown")
    payload = out.get("json")
    assert isinstance(payload, dict) and payload["markdown"] is None and payload["text"] == "x"
    with pytest.raises(ValueError, match="unknown output format"):
        out.get("pdf")


def test_nodes_missing_from_the_source_fall_back_to_their_text() -> None:
    # A node inside a same-origin iframe is in the snapshot but not in the source (iframes are not inlined).
    page = E("html", (0, 0, 1000, 1000), [E("body", (0, 0, 1000, 1000), [
        E("iframe", (0, 0, 800, 400), [E("html", (0, 0, 800, 400), [E("body", (0, 0, 800, 400), [
            E("p", (0, 0, 800, 20), [T("Framed *text* one.")]), E("p", (0, 20, 800, 20), [T("Line two.")])])])]),
    ])])
    built = build(page, source='<html data-cx="0"><body data-cx="1"><iframe data-cx="2"></iframe></body></html>')
    out = Outputs(built.snapshot, Result("test", [4]))
    assert out.markdown().endswith("\n\nFramed \\*text\\* one.\n\nLine two.\n")


def test_list_edge_cases() -> None:
    # Text outside any <li> is shown by browsers; GFM list numbers cannot be negative.
    assert md('<ul>loose<li>x</li>tail</ul><ol start="-5"><li>a</li></ol>') == "- loose\n- x\n- tail\n\n0. a"


# ---- front matter a page controls (issue #40) --------------------------------------------------------------------
# Values a page writes into its <title> and <meta> tags, made to come alive when the front matter is rendered as
# Markdown (a renderer that does not know front matter shows it as text).
PAYLOADS = ('<img src=x onerror="alert(1)">', "<iframe srcdoc='<script>alert(2)</script>'></iframe>",
            "&lt;svg onload=alert(3)&gt;", "[click](javascript:alert(4))", "![x](https://evil.example/x.png)",
            "<https://evil.example/>", "a\u2028b\x85c\ufeffd\x7f", "tab\there \"quoted\" back\\slash")
# The only elements CommonMark makes of the front matter block itself: a rule, paragraphs, a setext heading.
FRONT_MATTER_TAGS = {"hr", "p", "h2", "br"}


def _front_matter_doc(value: str) -> str:
    from centrum.core.metadata import Metadata
    from centrum.output.clean_tree import Content
    from centrum.output.markdown import document

    meta = Metadata(title=value, author=value, sitename=value, description=value, date=value, language=value,
                    image=value)
    return document(Content(), meta)


def _rendered_tags(markdown: str) -> list[tuple[str, list[str]]]:
    """(tag, attribute names) of every element markdown-it's default renderer (CommonMark, raw HTML on) makes."""
    from lxml import html
    from markdown_it import MarkdownIt

    body = html.fromstring(f"<div>{MarkdownIt().render(markdown)}</div>")
    return [(el.tag, list(el.attrib)) for el in body.iter() if el is not body]


def _front_matter_values(markdown: str) -> dict[str, str]:
    import yaml

    head = markdown.split("---\n")[1]
    values: dict[str, str] = yaml.safe_load(head)
    return values


@pytest.mark.parametrize("value", PAYLOADS)
def test_front_matter_renders_no_page_html(value: str) -> None:
    doc = _front_matter_doc(value)
    tags = _rendered_tags(doc)
    assert {t for t, _ in tags} <= FRONT_MATTER_TAGS | {"h1"}, tags  # h1: the title heading of the body
    assert all(attrs == [] for _, attrs in tags), tags
    # YAML still reads every value back exactly.
    values = _front_matter_values(doc)
    assert set(values) == {"title", "author", "date", "sitename", "language", "image", "description"}
    assert set(values.values()) == {value}


def test_the_unescaped_front_matter_would_have_rendered_live_html() -> None:
    # The renderer the tests above use does make live HTML of raw tags: the check can fail.
    tags = _rendered_tags('---\ntitle: "<img src=x onerror=alert(1)>"\n---\n')
    assert ("img", ["src", "onerror"]) in tags


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_any_front_matter_value_reads_back_and_renders_as_text(value: str) -> None:
    value = " ".join(value.split()) or "x"  # metadata values arrive whitespace-collapsed and non-empty
    doc = _front_matter_doc(value)
    values = _front_matter_values(doc)
    assert values["title"] == value and values["description"] == value
    assert all(tag in FRONT_MATTER_TAGS | {"h1", "code", "em", "strong"} and not attrs
               for tag, attrs in _rendered_tags(doc)), doc


def test_a_lazy_picture_in_a_wrapper_its_box_hides_is_kept() -> None:
    # A lazy loader keeps the picture's place with a size-0 wrapper that cuts its overflow until its script sizes it:
    # in a render where the script never ran the wrapper is unseen (collector: unseen subtree), the picture is not
    # (issue #44 item 5). A wrapper its style hides (display none) keeps its pictures out.
    source = ('<html data-cx="0"><body data-cx="1"><article data-cx="2"><p data-cx="3">Shown text.</p>'
              '<figure data-cx="4"><div data-cx="5"><img data-cx="6" data-src="/lazy.jpg" alt="lazy"></div>'
              '<figcaption data-cx="7">The caption.</figcaption></figure>'
              '<div data-cx="8"><img data-cx="9" data-src="/menu.jpg" alt="menu"></div></article></body></html>')
    page = E("html", (0, 0, 1000, 1000), [E("body", (0, 0, 1000, 1000), [
        E("article", (0, 0, 800, 600), [
            E("p", (0, 0, 800, 20), [T("Shown text.")]),
            E("figure", (0, 30, 800, 40), [
                E("div", (0, 30, 800, 0), [E("img", (0, 30, 0, 0), attrs={"data-src": "/lazy.jpg"})]),
                E("figcaption", (0, 40, 800, 20), [T("The caption.")])]),
            E("div", (0, 0, 0, 0), [E("img", (0, 0, 0, 0), attrs={"data-src": "/menu.jpg"})], display="none"),
        ]),
    ])])
    built = build(page, source=source, url=URL)
    raw = dict(built.raw, unseen={"subtree": [5], "text": []})
    from centrum.core.snapshot import parse_snapshot

    text = Outputs(parse_snapshot(raw), Result("test", [2])).markdown()
    assert "![lazy](https://example.org/lazy.jpg)" in text and "The caption." in text
    assert "menu" not in text


def test_a_thread_reads_as_in_the_reader() -> None:
    # Issue #44 item 2, as clean.js reads it (allowlist.json "thread"): a user card gives its member's name, the
    # author-and-date line one line of small text, a quote box a quote; signatures, avatars, post actions and page
    # links go.
    out = md('<div class="thread"><article class="message"><div class="message-user"><span class="avatar">P</span>'
             '<h4 class="message-name"><a class="username" href="/m/p">pebble</a></h4><h5>Fish Fanatic</h5>'
             '<dl><dt>Joined</dt><dd>Mar 3, 2025</dd></dl></div><div class="message-main">'
             '<ul class="message-attribution"><li><time>Mar 9, 2026</time></li><li><a href="#p2">#2</a></li></ul>'
             '<div class="bbcode-quote"><div class="quote-author">jo said:</div><div>Feed less.</div></div>'
             '<p>Thank you, the water is clear.</p><div class="message-signature">Planted since 2019.</div>'
             '<div class="message-actions"><a href="/r">Report</a> <a href="/q">Quote</a></div></div></article>'
             '<div class="pagination">Page 1 of 1 <a href="?page=1">1</a></div></div>')
    assert out == "pebble\n\nMar 9, 2026\n\n> jo said:\n>\n> Feed less.\n\nThank you, the water is clear.", out


def test_pieces_of_a_user_card_chosen_apart_read_as_the_card_once() -> None:
    # A block filter may keep a card's name and stats but not its avatar letter or post number: the chosen pieces then
    # sit inside the card, not the card itself. They read as the whole card does (its member's name, once); pieces of
    # post actions go as the actions do (clean.js threadHolder, the same rule).
    page = from_html('<article class="message"><div class="message-user"><span class="avatar">P</span>'
                     '<h4 id="name"><a class="username" href="/m/p">pebble</a></h4><h5 id="rank">Fish Fanatic</h5>'
                     '<dl id="stats"><dt>Joined</dt><dd>Mar 3, 2025</dd></dl></div>'
                     '<p id="text">Thank you, the water is clear.</p>'
                     '<div class="message-actions"><a id="like" href="/l">3 likes</a></div></article>', URL)
    ids = [page.node_id(next(page.root.iter(tag))) or 0 for tag in ("h4", "h5", "dl", "p")]
    ids.append(page.node_id(page.root.get_element_by_id("like")) or 0)
    out = convert(clean_content(page, ids))
    assert out == "pebble\n\nThank you, the water is clear.", out


def test_a_chosen_piece_of_a_quote_box_reads_as_the_whole_quote() -> None:
    # A block filter may keep a quote box's quoted words but not its "X said:" line: the words alone would read as the
    # poster's own. The box reads whole, as a quote, once; a quote inside a dropped signature goes with it (clean.js
    # threadHolder, the same rule).
    page = from_html('<article class="message"><div class="bbcode-quote"><div id="who" class="quote-author">jo said:'
                     '</div><div id="said">Feed less.</div><div id="more">And wait.</div></div>'
                     '<p id="text">Thank you, the water is clear.</p><div class="message-signature">'
                     '<div class="bbcode-quote"><div id="motto">Patience is a filter.</div></div></div></article>',
                     URL)
    ids = [page.node_id(page.root.get_element_by_id(i)) or 0 for i in ("said", "more", "text", "motto")]
    out = convert(clean_content(page, ids))
    assert out == "> jo said:\n>\n> Feed less.\n>\n> And wait.\n\nThank you, the water is clear.", out
