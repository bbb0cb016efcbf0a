"""DANA / DANAg / AdDANAg (Mohammadzadeh et al.): counting, smoothing, region merging, link normalization, node
mapping. Expected answers follow from the papers' rules applied by hand to the lines written in each test."""

from __future__ import annotations

import codecs
import html
import tracemalloc

import numpy as np
import pytest

from centrum import algorithms
from centrum.algorithms import dana
from centrum.core import charset
from centrum.core.builders import E, T, build

B = (0, 0, 800, 100)


def serialize(node: E | T, counter: list[int] | None = None) -> str:
    """What the collector writes: the DOM in pre-order, each element with ``data-cx="<id>"``."""
    counter = counter if counter is not None else [0]
    if isinstance(node, T):
        return html.escape(node.text, quote=False)
    i = counter[0]
    counter[0] += 1
    attrs = dict(node.attrs)
    if node.tag == "a":
        attrs.setdefault("href", "#")
    if node.cls:
        attrs["class"] = node.cls
    if node.id:
        attrs["id"] = node.id
    attr_text = "".join(f' {k}="{html.escape(v)}"' for k, v in attrs.items())
    inner = "".join(serialize(c, counter) for c in node.children)
    return f'<{node.tag}{attr_text} data-cx="{i}">{inner}</{node.tag}>\n'


def built_with_source(root: E, **kw):
    return build(root, source=serialize(root), **kw)


def normalize_links(data: bytes, offset: int = 5) -> bytes:
    """AdDANAg's hyperlink normalization on bytes (the pipeline's normalize_links_array)."""
    return dana.normalize_links_array(np.frombuffer(data, dtype=np.uint8), offset)[0].tobytes()


def counts(src: str, variant: str) -> tuple[list[int], list[int]]:
    c = np.frombuffer(src.encode(), dtype=np.uint8)
    t, s = dana.line_counts(c, dana.line_starts(c, 0), variant)
    return t.tolist(), s.tolist()


# ---------------------------------------------------------------------------------------------- counting
def test_dana_counts_non_ascii_characters_against_ascii_bytes_on_mixed_script_lines():
    # Line 1: Persian words in a paragraph: 8 letters (2 bytes each in UTF-8) vs "<p>", " ", "</p>" = 8 ASCII bytes.
    # Line 2: Latin with one accented letter: "é" is 1 non-ASCII character; the other 13 bytes are ASCII.
    # Line 3: CJK: 3 characters of 3 bytes each count 3, not 9.
    t1, t2 = counts("<p>سلام دنیا</p>\n<b>caf\u00e9</b> ok\n日本語\n", "dana")
    assert t1 == [8, 1, 3]
    assert t2 == [8 + 1, 13 + 1, 1]  # + the newline of each line


def test_danag_counts_content_characters_against_markup_on_mixed_script_lines():
    # Content counts characters (not bytes) outside tags; markup counts the bytes of the tags.
    t, s = counts('<p>سلام دنیا</p>\n<a href="/x">日本</a>x\n', "danag")
    assert t == [9 + 1, 3 + 1]  # "سلام دنیا" = 9 characters, "日本" + "x" = 3; + the newline
    assert s == [3 + 4, len('<a href="/x">') + 4]


@pytest.mark.parametrize("variant", ["dana", "danag"])
def test_line_counts_equal_per_line_sums_across_pieces(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Per-line counts come from a piecewise prefix count: with pieces smaller than a line, and lines of the source
    # or of fixed length, they must equal the plain per-line sums of the paper's definitions.
    monkeypatch.setattr(dana, "_PREFIX_PIECE", 7)
    src = ("<p>caf\u00e9 \u65e5\u672c\u8a9e</p>\n<div class=\"x\">\u0633\u0644\u0627\u0645 ok</div>\n\n"
           "<b>a < b</b>\n") * 5
    c = np.frombuffer(src.encode(), dtype=np.uint8)
    for length in (0, 5, 16):
        starts = dana.line_starts(c, length)
        t, s = dana.line_counts(c, starts, variant)
        lines = np.split(c, starts[1:])
        if variant == "dana":
            assert t.tolist() == [int((x >= 0xC0).sum()) for x in lines]
            assert s.tolist() == [int((x < 0x80).sum()) for x in lines]
        else:
            st, en = dana.tag_intervals(c)
            tag = np.zeros(c.size, dtype=bool)
            for a, b in zip(st.tolist(), en.tolist(), strict=True):
                tag[a:b] = True
            tags = np.split(tag, starts[1:])
            assert s.tolist() == [int(x.sum()) for x in tags]
            chars = [int(((x & 0xC0) != 0x80).sum()) for x in lines]
            assert t.tolist() == [n - int(y.sum()) for n, y in zip(chars, tags, strict=True)]


def test_line_counts_need_no_temporary_much_larger_than_the_source() -> None:
    # On a large page every temporary as long as the source counts (the host's peak memory is bounded per page
    # size, issue #23): counting lines must not build
    # an int64 array as long as the source (eight times its size).
    c = np.frombuffer(("<p>caf\u00e9 " + "x" * 90 + "</p>\n").encode() * 40_000, dtype=np.uint8)
    starts = dana.line_starts(c, 100)
    for variant in ("dana", "danag"):
        tracemalloc.start()
        try:
            dana.line_counts(c, starts, variant)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 3 * c.size, (variant, peak, c.size)


@pytest.mark.parametrize("piece", [1, 3, 64])
def test_count_before_is_the_prefix_count_across_pieces(piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # The prefix count is taken piece by piece (bounded memory on a large source); it must equal the whole-array
    # prefix sum at every offset, piece edges included.
    monkeypatch.setattr(dana, "_PREFIX_PIECE", piece)
    rng = np.random.default_rng(piece)
    for size in (0, 1, 2, 63, 64, 65, 200):
        mask = rng.random(size) < 0.4
        pos = np.sort(rng.integers(0, size + 1, 30))
        whole = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))
        assert dana.count_before(mask, pos).tolist() == whole[pos].tolist()


def test_tag_mask_follows_the_html_tokenizer():
    src = b'a < b <i title="<x>">y</i> c > d'
    start, end = dana.tag_intervals(np.frombuffer(src, dtype=np.uint8))
    inside = "".join(src[a:b].decode() for a, b in zip(start.tolist(), end.tolist(), strict=True))
    # "a < b" is text; the '<' inside the open tag opens nothing; the tag ends at the first '>' (quotes are not
    # tracked, so '">' after it is text); "c > d" is text.
    assert inside == '<i title="<x></i>'


def test_scripts_styles_comments_are_removed_in_document_order():
    src = (b"A<script>if (a<b) { x = '<!--'; }</script>B<!-- <script>not a script</script> -->C"
           b"<STYLE type=x>p{}</style >D<scripts>E</scripts><noscript><img></noscript>F<!-- unclosed <p>G")
    assert dana.remove_code(src) == b"AB" + b"C" + b"D<scripts>E</scripts>F"


def test_empty_comment_form_is_a_comment():
    assert dana.remove_code(b"a<!-->b<!--->c") == b"abc"


# ---------------------------------------------------------------------------------------------- smoothing
def test_smoothing_sums_the_line_and_its_two_neighbours():
    t = np.array([6, 0, 3, 2, 0])
    s = np.array([1, 1, 3, 0, 4])  # T - S = [5, -1, 0, 2, -4]
    assert dana.smooth(t, s, 1).tolist() == [4, 4, 1, -2, -2]
    assert dana.smooth(t, s, 0).tolist() == [5, -1, 0, 2, -4]


def test_regions_are_maximal_positive_runs_sized_by_content():
    diff = np.array([-1, 3, 2, 0, 5, -2, 1])
    content = np.array([0, 10, 20, 99, 7, 0, 4])
    starts, ends, sizes = dana.find_regions(diff, content)
    assert starts.tolist() == [1, 4, 6] and ends.tolist() == [3, 5, 7] and sizes.tolist() == [30, 7, 4]


# ---------------------------------------------------------------------------------------------- merging
@pytest.mark.parametrize("sep,merged", [(19, True), (20, True), (21, False)])
def test_region_merging_at_gap_minus_one_gap_and_gap_plus_one(sep: int, merged: bool):
    # Best region: lines 100..149; a neighbour on each side separated by `sep` lines; gap = 20.
    starts = np.array([100 - sep - 10, 100, 150 + sep])
    ends = np.array([100 - sep, 150, 150 + sep + 10])
    sizes = np.array([10, 500, 10])
    best, first, last = dana.merge_regions(starts, ends, sizes, gap=20)
    assert best == 1
    assert (first, last) == ((0, 2) if merged else (1, 1))


def test_merging_chains_until_the_first_separation_beyond_gap():
    starts = np.array([0, 30, 60, 200])
    ends = np.array([10, 50, 70, 210])
    sizes = np.array([1, 100, 1, 1])  # separations 20, 10, 130
    assert dana.merge_regions(starts, ends, sizes, gap=20) == (1, 0, 2)
    assert dana.merge_regions(starts, ends, sizes, gap=19) == (1, 1, 2)
    assert dana.merge_regions(starts, ends, sizes, gap=160) == (1, 0, 3)


def _gap_page(sep_lines: int) -> str:
    # Source lines as written (line_length=0, smoothing=0): 5 text lines, `sep_lines` markup-only lines, then 3
    # text lines. Each text line has T > S, each markup line T < S, so the regions are exactly the two blocks.
    text = "<p>" + "word " * 20 + "</p>\n"
    markup = '<div class="spacer"><span class="x"></span></div>\n'
    return "<html><body>\n" + text * 5 + markup * sep_lines + "<p>" + "tail " * 20 + "</p>\n" * 1 + text * 2 + "</body>"


@pytest.mark.parametrize("sep,merged", [(19, True), (20, True), (21, False)])
def test_run_source_merges_blocks_separated_by_up_to_gap_lines(sep: int, merged: bool):
    cfg = dana.Config(line_length=0, smoothing=0, gap=20)
    r = dana.run_source(_gap_page(sep), cfg, "danag")
    assert "word" in (r.text or "")
    assert ("tail" in (r.text or "")) is merged
    assert r.debug["regions_total"] == 2


# ---------------------------------------------------------------------------------------------- AdDANAg
def test_hyperlink_normalization_on_the_papers_example():
    src = b'<a href="http://www.BBC.com/">BBC Web Site </a>'
    out = normalize_links(src)
    # LT = len("BBC Web Site ") = 13, so the attributes become a placeholder of LT - 5 = 8 characters
    # (a space and seven x).
    assert out == b"<a xxxxxxx>BBC Web Site </a>"
    assert len(out) - len(b"<a></a>BBC Web Site ") == 13 - 5
    # Counting: the markup of the line drops from 30 + 4 to 11 + 4 bytes; the content stays 13.
    t, s = counts(src.decode(), "danag")
    t2, s2 = counts(out.decode(), "danag")
    assert (t, s) == ([13], [34]) and (t2, s2) == ([13], [15])


def test_link_normalization_handles_short_nested_unclosed_and_non_ascii_anchors():
    src = ('<a href="/a">Hi</a> <A HREF=x><b>Longer text</b></A> <a>outer <a href=y>z</a> <abbr>q</abbr>'
           '<a\n href=1>café café é</a> <a href="/never/closed">x').encode()
    out = normalize_links(src).decode()
    # "Hi": LT = 2 <= 5, no placeholder. "Longer text": LT = 11 (the <b> tags are not text) -> 6 = " xxxxx".
    # <a>outer <a href=y>z</a>: the first <a> pairs with the first </a>; LT = len("outer z") = 7 -> 2 = " x"; the
    # inner <a href=y> is part of the anchor's content and stays. <abbr> is not an anchor. "café café é": 11
    # characters (not 14 bytes) -> 6. An anchor never closed is left alone.
    assert out == ('<a>Hi</a> <A xxxxx><b>Longer text</b></A> <a x>outer <a href=y>z</a> <abbr>q</abbr>'
                   '<a xxxxx>café café é</a> <a href="/never/closed">x')


def test_addanag_maps_anchor_ids_into_their_normalized_tags():
    # Offsets of collector ids inside removed attributes land at the end of the placeholder, inside the same tag.
    c = np.frombuffer(b'<p><a href="/long/url">Anchor text here</a> tail</p>', dtype=np.uint8)
    out, remap = dana.normalize_links_array(c)
    assert out.tobytes() == b"<p><a xxxxxxxxxx>Anchor text here</a> tail</p>"
    old = np.array([1, 8, 23, 30])  # in <p>, inside the href, at the text, inside the text
    assert remap(old).tolist() == [1, 16, 17, 24]


def test_addanag_keeps_a_link_rich_paragraph_that_danag_loses():
    # A wiki-like paragraph: every other phrase is a link with a long URL. DANAg sees more markup than text on
    # those lines; AdDANAg's placeholders shrink the markup to the anchor text length minus 5.
    link = '<a href="https://en.wikipedia.org/wiki/Some_Long_Article_Title_{0}" title="Article {0}">topic {0}</a>'
    para = "<p>" + " ".join(f"see {link.format(i)} and" for i in range(40)) + "</p>"
    nav = "<ul>" + "".join(f'<li><a href="/nav/section/{i}/index.html">N{i}</a></li>' for i in range(60)) + "</ul>"
    src = f"<html><body>{nav}<div>{para}</div>{nav}</body></html>"
    r_g = dana.run_source(src, None, "danag")
    r_a = dana.run_source(src, None, "addanag")
    assert "topic 20" in (r_a.text or "") and "N30" not in (r_a.text or "")
    assert "topic 20" not in (r_g.text or "")


# ---------------------------------------------------------------------------------------------- normalization
def test_line_length_normalization_makes_the_result_independent_of_wrapping():
    body = "".join("<p>" + f"Sentence number {i} is here. " * 6 + "</p>" for i in range(8))
    nav = "".join(f'<li><a href="/section/{i}/page.html" class="nav-link">S{i}</a></li>' for i in range(40))
    one_line = f"<html><body><ul>{nav}</ul><article>{body}</article><ul>{nav}</ul></body></html>"
    wrapped = one_line.replace("><", ">\n   <").replace(". ", ".\n        ")
    a = dana.run_source(one_line)
    b = dana.run_source(wrapped)
    assert a.text and a.text.split() == b.text.split()
    assert "Sentence number 7" in a.text and "S39" not in a.text


# ---------------------------------------------------------------------------------------------- snapshots
def _article_page(paragraphs: list[str], lang_nav: str = "Home") -> E:
    nav = [E("li", B, [E("a", B, [T(f"{lang_nav} {i}")], attrs={"href": f"/category/section-{i}/index.html"})])
           for i in range(30)]
    # Banners (markup only, 3+ lines of source each) separate the blocks, so the smoothing window of the text
    # lines does not reach the menus.
    def banner() -> E:
        return E("div", B, [E("img", B, attrs={"src": "/static/images/" + "banner-" * 40 + ".png", "alt": ""})])

    return E("html", (0, 0, 1200, 3000), [E("body", (0, 0, 1200, 3000), [
        E("div", B, [E("ul", B, nav)], cls="navigation menu", name="nav"),
        banner(),
        E("div", (0, 200, 800, 2000), [E("h1", B, [T("Title of the story")])]
          + [E("p", B, [T(p)]) for p in paragraphs], cls="story", name="article"),
        banner(),
        E("div", B, [E("ul", B, [E("li", B, [E("a", B, [T(f"footer link {i}")],
                                                  attrs={"href": f"/footer/more/link-{i}.html"})])
                                 for i in range(30)])], name="footer"),
    ])])


def test_snapshot_lines_map_back_to_the_top_most_article_element():
    paragraphs = [f"Paragraph {i} tells the story in plain sentences, without links, long enough to matter. " * 3
                  for i in range(6)]
    b = built_with_source(_article_page(paragraphs))
    for name in ("danag", "addanag"):
        r = algorithms.run(name, b.snapshot)
        assert r.nodes == [b.ids["article"]], (name, r.message, r.debug.get("merged"))
        assert "Paragraph 5 tells" in (r.text or "") and "Home 3" not in (r.text or "")
        assert r.candidates[0].nodes == r.nodes and r.candidates[0].label.startswith("merged")


def test_wrapper_whose_opening_tag_is_selected_is_not_chosen_when_most_of_it_is_outside():
    # The article and the footer share a wrapper; the wrapper's data-cx lies in the selected lines but most of its
    # serialized subtree (the long link list) does not, so the article, not the wrapper, is the answer.
    paragraphs = [f"Paragraph {i} tells the story in plain sentences. " * 4 for i in range(6)]
    page = _article_page(paragraphs)
    body = page.children[0]
    assert isinstance(body, E)
    wrapper = E("div", B, body.children[1:], name="wrapper")
    body.children = [body.children[0], wrapper]
    b = built_with_source(page)
    r = algorithms.run("danag", b.snapshot)
    assert r.nodes == [b.ids["article"]]


def test_multilingual_arabic_article_with_english_navigation():
    # DANA's own case: Arabic content (multi-byte UTF-8) between English, ASCII-only menus. Every paragraph line has
    # more non-ASCII than ASCII characters, every menu line fewer, so DANA and DANAg pick the Arabic paragraphs.
    ar = "هذه فقرة عربية طويلة تروي القصة بجمل بسيطة دون روابط وهي كافية لتكون المحتوى الرئيسي للصفحة. "
    b = built_with_source(_article_page([ar * 3 for _ in range(5)]), lang="ar", dir="rtl")
    for name in ("dana", "danag", "addanag"):
        r = algorithms.run(name, b.snapshot)
        assert r.nodes == [b.ids["article"]], (name, r.message)
        assert "فقرة عربية" in (r.text or "")


def test_dana_has_no_answer_on_an_ascii_page_and_says_why():
    b = built_with_source(_article_page(["Plain English text only. " * 10 for _ in range(4)]))
    r = algorithms.run("dana", b.snapshot)
    assert r.nodes == [] and "non-Latin" in r.message


def test_cjk_page_with_danag_picks_the_chinese_text():
    zh = "这是一个很长的中文段落，讲述了故事的主要内容，没有任何链接，足以成为页面的主要内容。" * 3
    b = built_with_source(_article_page([zh] * 5, lang_nav="首页"), lang="zh")
    r = algorithms.run("danag", b.snapshot)
    assert r.nodes == [b.ids["article"]]


def test_missing_source_is_no_result_with_a_message():
    b = build(_article_page(["text"]))
    r = algorithms.run("danag", b.snapshot)
    assert r.nodes == [] and "source" in r.message


def test_odd_inputs_do_not_raise():
    for src in ["", "   \n  ", "<html></html>", "no markup at all, just words", "<", ">", "<a", "<!--",
                "<frameset><frame src=a></frameset>", "<script>only script"]:
        for v in dana.VARIANTS:
            r = dana.run_source(src, None, v)
            assert isinstance(r.text, str)


def test_params_reach_the_config_and_debug_is_bounded_json():
    b = built_with_source(_article_page(["Some paragraph text here. " * 8 for _ in range(4)]))
    r = algorithms.run("danag", b.snapshot, {"gap": 160, "line_length": 50})
    assert r.debug["gap"] == 160 and r.debug["line_length"] == 50
    assert set(r.debug["counts"]) == {"T", "S"} and len(r.debug["diff"]) == r.debug["lines"]
    import json
    json.dumps(r.debug)


# ---------------------------------------------------------------------------------------------- decoding
def test_source_bytes_transcodes_only_what_the_sniffer_reads_as_another_charset():
    utf8 = "<p>Привет, мир</p>".encode()
    assert dana.source_bytes(utf8) is utf8  # valid UTF-8 is not decoded and re-encoded
    assert dana.source_bytes(b"<p>ascii</p>") == b"<p>ascii</p>"
    assert dana.source_bytes(codecs.BOM_UTF16_LE + "<p>мир</p>".encode("utf-16-le")) == "<p>мир</p>".encode()
    cp = b'<meta charset="windows-1251"><p>' + "мир".encode("cp1251") + b"</p>"
    assert dana.source_bytes(cp) == charset.decode(cp).encode()
    declared_latin_but_utf8 = '<meta charset="iso-8859-1">café'.encode()
    assert dana.source_bytes(declared_latin_but_utf8) == declared_latin_but_utf8
    # Declared UTF-8 with an invalid byte stays bytes (read as UTF-8 with U+FFFD either way: same text out).
    bad = b'<meta charset="utf-8">\n<p>bad \xff byte and some more words here</p>'
    assert dana.source_bytes(bad) == bad
    same = dana.run_source(charset.decode(bad)).text
    assert dana.run_source(bad).text == same == "bad \ufffd byte and some more words here"
    # Undeclared invalid UTF-8 is windows-1252, as the renderer serves it.
    assert dana.run_source(b"<p>caf\xe9 byte</p>").text == "café byte"


def test_html_text_breaks_at_blocks_collapses_spaces_and_decodes_entities_last():
    frag = "<div>Один  <b>два</b>\n три</div><p>&lt;x&gt; &amp;&nbsp;y</p><br><span> </span><li>last</li>"
    assert dana.html_text(frag) == "Один два три\n<x> &\u00a0y\nlast"
    assert dana.html_text(frag.encode()) == dana.html_text(frag)
    assert dana.html_text("a\x00b") == "ab"  # a NUL in the source never splits a line


def test_trim_edges_drops_lines_selected_only_through_the_smoothing_window():
    # Source lines (line_length=0): heavy markup, light markup, 4 text lines, light markup, heavy markup.
    # Light markup line 1: T - S = -10; smoothed = -60 - 10 + (text line: 80 - 7) = 3 > 0, so the run starts there;
    # its own balance is negative, so trimming starts the selection at the first text line.
    heavy = "<div " + "x" * 53 + ">\n"  # S = 59; the newline is outside the tag, so T = 1
    light = "<i " + "y" * 5 + ">\n"
    text = "<p>" + "w" * 79 + "</p>\n"
    src = heavy + light + text * 4 + light + heavy
    cfg = dana.Config(line_length=0, gap=20)
    c = np.frombuffer(src.encode(), dtype=np.uint8)
    t, s = dana.line_counts(c, dana.line_starts(c, 0), "danag")
    assert (t - s).tolist() == [1 - 59, 1 - 9, 80 - 7, 80 - 7, 80 - 7, 80 - 7, 1 - 9, 1 - 59]
    r = dana.run_source(src, cfg, "danag")
    assert r.debug["merged"]["lines"] == [1, 7]  # smoothed diff of lines 1 and 6: -58 - 8 + 73 = 7 > 0
    r = dana.run_source(src, dana.Config(line_length=0, gap=20, trim_edges=True), "danag")
    assert r.debug["merged"]["lines"] == [2, 6]


def test_element_owning_its_text_directly_is_selected_not_its_line_breaks():
    # <div>text<br>text<br>...</div>, the layout of many old news pages: the text nodes belong to the div itself,
    # so the div must be chosen (its <br> children alone carry no text).
    sentences = [f"Sentence {i} of an old-style article written with line breaks instead of paragraphs." * 2
                 for i in range(12)]
    children: list[E | T] = []
    for sentence in sentences:
        children += [T(sentence), E("br", B), E("br", B)]
    page = _article_page([])
    body = page.children[0]
    assert isinstance(body, E)
    body.children[2] = E("div", B, children, name="article")
    b = built_with_source(page)
    r = algorithms.run("danag", b.snapshot)
    assert r.nodes == [b.ids["article"]]
    assert "Sentence 11 of" in (r.text or "")
