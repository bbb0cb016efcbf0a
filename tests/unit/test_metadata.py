"""Metadata (centrum.core.metadata) from each source: JSON-LD, OpenGraph / meta tags, <time>, a visible byline, the
title without its site name; on fixture pages (English, Chinese without a lang attribute, Arabic RTL) and small
pages written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from centrum.core.builders import E, T, build
from centrum.core.metadata import Metadata, extract_metadata, iso_date, strip_site_name
from centrum.core.result import Result
from centrum.output.outputs import Outputs, from_html

PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"


def meta_of(html: str, url: str = "https://news.example.org/a/story", nodes: list[int] | None = None) -> Metadata:
    return extract_metadata(from_html(html, url), nodes)


def test_json_ld_graph_with_trailing_comma_and_author_list() -> None:
    m = meta_of((PAGES / "table-code.html").read_text(encoding="utf-8"))
    assert m.title == "Measuring tide gauges with a ten-line script"  # headline; " | Field Notes" never appears
    assert m.author == "Ana Ferreira"
    assert m.date == "2026-10-02T09:15:00+02:00"
    assert m.sitename == "Field Notes"
    assert m.language == "en"
    assert m.image == "https://fieldnotes.example.org/media/gauge-hero.jpg"  # og:image against <base href>
    assert m.description == "How we read three harbour tide gauges with a short script, and what the numbers said."


def test_rtl_page_json_ld_in_a_comment_with_type_list() -> None:
    m = meta_of((PAGES / "meta-rtl.html").read_text(encoding="utf-8"))
    assert m.title == "افتتاح مكتبة الميناء بعد ترميم دام ثلاث سنوات"  # the site name was a prefix
    assert m.author == "سلمى حداد"  # meta author is only a profile URL
    assert m.date == "2026-11-19T18:00:00+00:00"
    assert m.sitename == "جريدة الساحل"
    assert m.language == "ar"
    assert m.image == "https://sahel.example.org/media/library.jpg"
    assert m.url == "https://sahel.example.org/ar/2026/library"  # <link rel=canonical>
    assert m.direction == "rtl"


def test_cjk_page_without_lang_opengraph_and_visible_byline() -> None:
    html = (PAGES / "meta-cjk.html").read_text(encoding="utf-8")
    page = from_html(html, "https://haibin.example.cn/news/1")
    article = next(page.root.iter("article"))
    m = extract_metadata(page, [page.node_id(article) or 0])
    assert m.title == "港口图书馆今日开放"  # og:title minus " - 海滨日报" (og:site_name)
    assert m.sitename == "海滨日报"
    assert m.language == "zh-CN"  # og:locale zh_CN: no <html lang>
    assert m.author == "李明"  # itemprop=author's itemprop=name
    # article:published_time (2026年11月20日, see iso_date) is an article's own date even where the page never
    # writes it; a generic WebPage's is not (test_declared_date_the_page_never_shows_is_dropped).
    assert m.date == "2026-11-20"
    assert m.image == "https://haibin.example.cn/img/library.jpg"
    assert m.description is not None and m.description.startswith("在北码头空置了十一年的渡轮码头")  # first paragraph


def test_broken_json_ld_falls_back_to_meta_tags() -> None:
    m = meta_of('<html><head><script type="application/ld+json">{"@type": "NewsArticle", "headline": </script>'
                '<meta property="og:title" content="Real title"><meta name="author" content="Kim Lee">'
                '<meta property="article:published_time" content="Fri, 20 Nov 2026 08:00:00 +0100">'
                '<meta http-equiv="content-language" content="de-AT"></head><body><p>x, 20.11.2026</p></body></html>')
    assert (m.title, m.author, m.date, m.language) == ("Real title", "Kim Lee", "2026-11-20T08:00:00+01:00",
                                                            "de-AT")


def test_json_ld_nested_list_and_weaker_webpage() -> None:
    m = meta_of('<script type="application/ld+json">[{"@type": "WebPage", "name": "Page name"}, {"@type": '
                '"schema:NewsArticle", "headline": "Story", "author": "https://x.org/me", "creator": "Ada",'
                ' "image": {"url": "/i.jpg"}, "datePublished": "2026-01-05"}]</script><title>T</title>'
                "<p>5 Jan 2026</p>")
    assert m.title == "Story" and m.image == "https://news.example.org/i.jpg" and m.date == "2026-01-05"
    assert m.author is None  # an author given only as a URL names nobody


def test_hostile_json_ld_is_bounded() -> None:
    deep = "[" * 100000 + "]" * 100000
    wide = '{"@graph": [' + ",".join('{"@type": "Thing"}' for _ in range(50000)) + "]}"
    m = meta_of(f'<script type="application/ld+json">{deep}</script><script type="application/ld+json">{wide}'
                "</script><title>Plain</title>")
    assert m.title == "Plain"


def test_time_element_marked_published_wins() -> None:
    m = meta_of('<body><time datetime="2020-01-01">old</time><article><p>By x</p>'
                '<time itemprop="datePublished" datetime="2026-03-04T05:06:07Z">then</time></article></body>')
    assert m.date == "2026-03-04T05:06:07+00:00"


def test_time_and_byline_near_the_main_content() -> None:
    html = ('<body><aside><span class="author">Sidebar Person</span><time datetime="2019-05-05">x</time></aside>'
            '<article id="main"><h1>T</h1><p class="byline-name">Main Person</p><time datetime="2026-07-08">8 July'
            ' 2026</time><p>text</p></article></body>')
    page = from_html(html, "https://x.org/")
    main = page.node_id(page.by_html_id("main"))  # type: ignore[arg-type]
    m = extract_metadata(page, [main] if main is not None else [])
    assert m.author == "Main Person" and m.date == "2026-07-08"


def test_rel_author_beats_class_author() -> None:
    m = meta_of('<h1>T</h1><div class="author-box">About the writer: long bio</div><a rel="author" href="/p">'
                "Jo Doe</a>")
    assert m.author == "Jo Doe"


@pytest.mark.parametrize(("title", "sites", "host", "headings", "expected"), [
    ("Story title | WIRED", [], "www.wired.com", None, "Story title"),
    ("Coastal Courier - Harbour opens", ["Coastal Courier"], "", None, "Harbour opens"),
    ("港口图书馆 - 哔哩哔哩", ["哔哩哔哩"], "www.bilibili.com", None, "港口图书馆"),
    ("Story :: Section :: Site", ["Site"], "", ["Story"], "Story"),
    ("Story — The Paper", [], "", ["Story"], "Story"),
    ("Only The Site", ["Only The Site"], "", None, "Only The Site"),
    ("Pre-war art - a - review", [], "", None, "Pre-war art - a - review"),
])
def test_title_without_site_name(title: str, sites: list[str], host: str, headings: list[str] | None,
                                 expected: str) -> None:
    assert strip_site_name(title, sites, host, headings) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-11-20", "2026-11-20"),
    ("2026-11-20T08:30:00Z", "2026-11-20T08:30:00+00:00"),
    ("2026-11-20T08:30:00.123+05:30", "2026-11-20T08:30:00.123000+05:30"),
    ("Fri, 20 Nov 2026 08:00:00 GMT", "2026-11-20T08:00:00+00:00"),
    ("2026/11/20", "2026-11-20"),
    ("2026年11月20日", "2026-11-20"),
    ("20 novembre", None),
    ("2026-13-45", None),
    ("", None),
])
def test_iso_dates(value: str, expected: str | None) -> None:
    assert iso_date(value) == expected


def test_hidden_byline_is_not_used_and_metadata_reaches_the_outputs() -> None:
    source = ('<html lang="fi" data-cx="0"><head data-cx="1"><title data-cx="2">Otsikko | Lehti</title></head>'
              '<body data-cx="3"><span itemprop="author" data-cx="4">Hidden Name</span><article data-cx="5">'
              '<h1 data-cx="6">Otsikko</h1><span itemprop="author" data-cx="7">Näkyvä Nimi</span>'
              '<p data-cx="8">Teksti joka on tarpeeksi pitkä ollakseen kappale tässä testissä.</p></article></body>'
              "</html>")
    page = E("html", (0, 0, 1000, 1000), [
        E("head", children=[E("title", children=[T("Otsikko | Lehti")])]),
        E("body", (0, 0, 1000, 1000), [
            E("span", (0, 0, 0, 0), [T("Hidden Name")], display="none", attrs={"itemprop": "author"}),
            E("article", (0, 0, 800, 400), [
                E("h1", (0, 0, 800, 40), [T("Otsikko")]),
                E("span", (0, 40, 100, 20), [T("Näkyvä Nimi")], attrs={"itemprop": "author"}),
                E("p", (0, 60, 800, 20), [T("Teksti joka on tarpeeksi pitkä ollakseen kappale tässä testissä.")]),
            ]),
        ]),
    ])
    built = build(page, source=source, url="https://lehti.example.fi/a", title="Otsikko | Lehti", lang="fi")
    out = Outputs(built.snapshot, Result("test", [8]))
    m = out.metadata()
    assert m.author == "Näkyvä Nimi" and m.title == "Otsikko" and m.language == "fi"
    md = out.markdown()
    assert md.startswith('---\ntitle: "Otsikko"\nauthor: "Näkyvä Nimi"\nlanguage: "fi"\nurl: "https://lehti.example.fi/a"')
    assert "\n# Otsikko\n" in md  # the answer (a paragraph) has no title of its own
    payload = out.get("json")
    assert isinstance(payload, dict) and payload["metadata"]["author"] == "Näkyvä Nimi"
    assert payload["metadata"]["reading_minutes"] == 1 and payload["metadata"]["direction"] == "ltr"
    assert payload["nodes"] == [8] and "clean" in payload["timing_ms"]
    html = out.html()
    assert '<meta name="author" content="Näkyvä Nimi">' in html and '<html lang="fi" dir="ltr">' in html


def test_reading_time_is_script_fair() -> None:
    from centrum.core.metadata import reading_minutes

    assert reading_minutes("word " * 2380) == 10  # 238 words a minute
    assert reading_minutes("港" * 5000) == 10  # 500 characters a minute, not "one word"
    assert reading_minutes("short") == 1 and reading_minutes("  ") is None
    assert reading_minutes("word " * 1190 + "字" * 2500) == 10


# ---- #44 item 1: metadata that is right ---------------------------------------------------------------------------
def test_page_without_title_has_its_heading_not_its_address() -> None:
    source = (PAGES / "meta-no-title.html").read_text(encoding="utf-8")
    m = meta_of(source, "http://127.0.0.1:8000/meta-no-title.html")
    assert m.title == "Harbour ferry timetable changes for winter" and m.sitename is None
    # Rendered, the browser names the page by its address: that is no title either.
    page = E("html", (0, 0, 1000, 1000), [E("body", (0, 0, 1000, 1000), [E("p", (0, 0, 800, 20), [T("x")])])])
    built = build(page, source="<html><body><p>x</p></body></html>", url="http://127.0.0.1:8000/meta-no-title.html",
                  title="127.0.0.1:8000/meta-no-title.html")
    assert Outputs(built.snapshot, Result("test", [2])).metadata().title is None


def test_non_latin_section_and_site_suffix_go_by_what_the_page_declares() -> None:
    m = meta_of((PAGES / "meta-cjk-suffix.html").read_text(encoding="utf-8"), "https://finance.sina.com.cn/a")
    assert m.title == "港口图书馆今日开放"  # "__商贸_产业资讯_新浪网": two breadcrumb sections and og:site_name
    assert m.sitename == "新浪网"


def test_date_past_utc_midnight_keeps_the_pages_own_day() -> None:
    m = meta_of((PAGES / "meta-date-past-midnight.html").read_text(encoding="utf-8"))
    assert m.date == "2026-07-19T00:30:00+01:00"  # 18 July in UTC; the page says 19 July
    assert m.author == "Rhian Price"


def test_text_only_date_and_glued_byline() -> None:
    m = meta_of((PAGES / "meta-text-date.html").read_text(encoding="utf-8"), "https://trailnotes.example.org/rain")
    assert m.date == "2025-11-12"  # published, not the later "Updated", nor the footer's year
    assert m.author == "Sean Peek"  # "Written by: " dropped
    assert m.title == "Choosing a rain jacket for hill walking"


def test_declared_date_the_page_never_shows_is_dropped() -> None:
    body = "<body><h1>Plumbing services</h1><p>Call us for a quote today.</p></body>"
    head = ('<head><script type="application/ld+json">{"@type": "WebPage", '
            '"datePublished": "2021-03-04T10:00:00+00:00"}</script></head>')
    assert meta_of(head + body).date is None  # a template's date on a service page
    shown = body.replace("today.", "today. Page of 4 March 2021.")
    assert meta_of(head + shown).date == "2021-03-04T10:00:00+00:00"


@pytest.mark.parametrize(("headings", "declared", "expected"), [
    (["Top 10: Best Language Learning App (tested by experts)"],
     ["Best Apps to Learn a Language in 2025 – Top 10 Picks"],
     "Top 10: Best Language Learning App (tested by experts)"),
    (["Menu", "Night trains return"], ["Night trains return to the coast line"], "Night trains return"),
    (["Subscribe to our newsletter"], ["Night trains return to the coast line"],
     "Night trains return to the coast line"),
    (["Harbour opens"], ["Home"], "Harbour opens"),  # a generic og:title
    ([], ["Home"], "Home"),
    ([], [], None),
])
def test_headline_is_the_heading_that_agrees_with_a_declared_title(headings: list[str], declared: list[str],
                                                                    expected: str | None) -> None:
    from centrum.core.metadata import headline

    assert headline(headings, declared) == expected


@pytest.mark.parametrize(("title", "sites", "host", "expected"), [
    ("Electrical - Overview | Occupational Safety and Health Administration", [], "www.osha.gov",
     "Electrical - Overview"),
    ("Amd RX7800XT Wrong refresh rate ... - Doom9's Forum", [], "forum.doom9.org",
     "Amd RX7800XT Wrong refresh rate ..."),
    ("Forum thread about engines - Page 3", [], "", "Forum thread about engines"),
    ("Γυμναστική στο σπίτι - υγεία + fitness", ["υγεία + fitness"], "", "Γυμναστική στο σπίτι"),
    ("Page 3 of the rules", [], "", "Page 3 of the rules"),
])
def test_site_suffixes_by_host_initials_and_page_numbers(title: str, sites: list[str], host: str,
                                                         expected: str) -> None:
    assert strip_site_name(title, sites, host) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("By Scott Pletcher", "Scott Pletcher"),
    ("Written by: Sean Peek", "Sean Peek"),
    ("Post by Arny » Mon May 14, 2012 6:25 pm", "Arny"),
    ("AuthorZoe Epstein", "Zoe Epstein"),
    ("Luke KimDecember 17, 2025", "Luke Kim"),
    ("By Dr. Vahid Osman - Mar 27, 2024", "Dr. Vahid Osman"),
    ("BySummer Swann-June 12, 2025", "Summer Swann"),
    ("Byron Smith", "Byron Smith"),  # a name that starts like a prefix
    ("Craig McDaniel", "Craig McDaniel"),
    ("Written by", None), ("Name *", None), ("Jiobal says:", None), ("undefined", None), ("12 Nov 2025", None),
    ("Автор: Иван Петров", "Иван Петров"),
])
def test_byline_without_prefixes_and_glued_neighbours(raw: str, expected: str | None) -> None:
    from centrum.core.metadata import clean_byline

    assert clean_byline(raw) == expected


@pytest.mark.parametrize(("text", "is_address"), [
    ("127.0.0.1", True), ("127.0.0.1:8000/meta-no-title.html", True), ("[::1]:8080", True), ("localhost:3000", True),
    ("report-2024.html", True), ("file:///home/me/page.html", True),
    ("Deaf:Cafe", False), ("Node.js 22 released", False), ("10.5 reasons", False), ("ASP.NET tips", False),
])
def test_an_address_is_no_title(text: str, is_address: bool) -> None:
    from centrum.core.metadata import _not_an_address

    assert (_not_an_address(text) is None) == is_address

def test_one_metadata_vocabulary_in_api_json_and_front_matter() -> None:
    """#45 item 4: the API's field names are the JSON's keys, the front matter uses the same names, and they are
    trafilatura's where they mean the same thing."""
    import dataclasses

    from centrum.output.markdown import front_matter

    names = [f.name for f in dataclasses.fields(Metadata)]
    assert names == ["title", "author", "date", "sitename", "language", "image", "description", "url", "direction",
                     "reading_minutes"]
    full = Metadata(**{n: ("5" if n == "reading_minutes" else f"https://x.org/{n}") for n in names})
    assert list(full.to_json()) == names
    keys = [line.split(":", 1)[0] for line in front_matter(full).strip("-\n").splitlines()]
    assert sorted(keys) == sorted(n for n in names if n not in ("direction", "reading_minutes"))
    docs = (Path(__file__).resolve().parents[2] / "docs" / "outputs.md").read_text(encoding="utf-8")
    assert all(f"| `{n}` |" in docs for n in names)


# ---- dates of threads, questions and headlines (#44) ----------------------------------------------------------------
_THREAD = ('<html><head><meta property="og:type" content="website"><title>Suggestions for a beginner bike | Forum'
           '</title></head><body><div itemscope itemtype="https://schema.org/DiscussionForumPosting">'
           '<meta itemprop="datePublished" content="2024-06-02T20:22:24-04:00">'
           '<h1 itemprop="headline">Suggestions for a beginner bike</h1>'
           '<p>Last post <time datetime="2024-06-05T15:58:03-0400">Jun 5, 2024</time></p>'
           '<article><time datetime="2024-06-02T20:22:24-0400">Jun 3, 2024</time><p>First post text.</p></article>'
           '<div itemprop="comment" itemscope itemtype="https://schema.org/Comment">'
           '<meta itemprop="datePublished" content="2024-06-03T20:51:40-04:00"><p>A reply.</p></div>'
           '</div></body></html>')


def test_a_threads_posting_item_gives_its_first_posts_date_in_its_own_offset() -> None:
    # The thread shows the last post's date first and the first post's in the server's UTC day ("Jun 3"): the
    # microdata posting declares when it was started, and its -04:00 day is the page's.
    assert meta_of(_THREAD).date == "2024-06-02T20:22:24-04:00"


def test_a_questions_asking_date_not_its_answers() -> None:
    html = ('<body><div itemscope itemtype="https://schema.org/QAPage"><div itemscope itemprop="mainEntity" '
            'itemtype="https://schema.org/Question"><h1 itemprop="name">Why is RAID not a backup?</h1>'
            '<p>Asked <time itemprop="dateCreated" datetime="2009-05-02 10:00:00Z">16 years ago</time>, modified '
            '<span title="2014-08-01">Aug 1, 2014</span></p><div itemscope itemprop="suggestedAnswer" '
            'itemtype="https://schema.org/Answer"><time itemprop="dateCreated" datetime="2009-05-03 11:00:00Z">'
            '</time><p>Because.</p></div></div></div></body>')
    assert meta_of(html).date == "2009-05-02T10:00:00+00:00"


def test_several_posting_items_date_nothing() -> None:
    # Related stories, each an Article item with its own date: none of them is the page's.
    items = "".join(f'<div itemscope itemtype="https://schema.org/Article"><h3>Story {k}</h3><span itemprop='
                    f'"datePublished" content="2026-03-1{k}T10:00:00+00:00">Mar 1{k}, 2026</span></div>'
                    for k in range(3))
    text = "A guide that runs long before its related stories. " * 15
    assert meta_of(f"<body><h1>Guide</h1><p>{text}</p>{items}</body>").date is None


def test_a_posting_date_written_as_text_is_read() -> None:
    html = ('<body><div itemscope itemtype="http://schema.org/BlogPosting"><h1>Notes</h1>'
            '<span itemprop="datePublished">2018-10-17</span></div></body>')
    assert meta_of(html).date == "2018-10-17"


def test_the_date_next_to_the_heading_that_carries_the_title() -> None:
    # The first <h1> is the site's logo; the story's heading and its date come after a long menu.
    menu = "".join(f'<li><a href="/s{k}">Section number {k}</a></li>' for k in range(60))
    html = ('<html><head><meta property="og:title" content="Reflections on a pixel-perfect pipeline"></head><body>'
            f'<h1>Playful Tones</h1><ul>{menu}</ul><h2>Reflections on a pixel-perfect pipeline</h2>'
            '<time datetime="2025-12-02">December 02, 2025</time><p>Text.</p></body></html>')
    assert meta_of(html).date == "2025-12-02"


def test_template_indentation_is_no_distance_from_the_headline() -> None:
    indent = "\n" + " " * 200
    html = (f'<body><h1>Story of the day</h1>{indent.join("<div></div>" for _ in range(20))}'
            '<time datetime="2026-01-05">5 January 2026</time></body>')
    assert meta_of(html).date == "2026-01-05"


def test_a_utc_timestamp_gives_the_day_written_one_with_an_offset_keeps_its_own() -> None:
    head = '<meta property="article:published_time" content="{}"><meta property="og:type" content="article">'
    body = "<h1>Night buses</h1><p>By Anna, 19 July 2025</p>"
    assert meta_of(head.format("2025-07-18T23:30:00Z") + body).date == "2025-07-19"
    # -05:00 is the page's own clock: the 18th it declares is its day, whatever else it writes.
    assert meta_of(head.format("2025-07-18T20:30:00-05:00") + body).date == "2025-07-18T20:30:00-05:00"


def test_a_product_page_has_no_article_date() -> None:
    html = ('<head><meta property="og:type" content="article"><meta property="article:published_time" '
            'content="2018-12-21T10:00:00+00:00"><script type="application/ld+json">{"@type": "Product", "name": '
            '"Kettle"}</script></head><body><h1>Kettle</h1><p>Buy it.</p></body>')
    assert meta_of(html).date is None


def test_iso_date_reads_nanoseconds() -> None:
    assert iso_date("2025-12-19T11:07:13.157234586Z") == "2025-12-19T11:07:13.157234+00:00"


# ---- titles (#44) ---------------------------------------------------------------------------------------------------
def test_a_heading_in_capitals_gives_the_declared_title() -> None:
    html = ('<head><meta property="og:title" content="Best Drip Coffee Maker 2026: Buying Tips From Coffee Pros">'
            '</head><body><h1>BEST DRIP COFFEE MAKER IN 2026: BUYING TIPS FROM COFFEE PROS</h1></body>')
    assert meta_of(html).title == "Best Drip Coffee Maker 2026: Buying Tips From Coffee Pros"


def test_a_site_slogan_after_the_site_name_gives_way_to_the_heading() -> None:
    html = ("<head><title>Reddit - The heart of the internet</title></head><body><h1>Enameled cast iron pan and "
            "metal</h1></body>")
    assert meta_of(html, "https://www.reddit.com/r/castiron/comments/1/x/").title == "Enameled cast iron pan and metal"


def test_a_replys_author_is_not_the_pages() -> None:
    html = ('<body><div itemscope itemtype="https://schema.org/DiscussionForumPosting"><h1>Which saw?</h1>'
            '<p>I only own a circular saw.</p><div itemprop="comment" itemscope itemtype="https://schema.org/Comment">'
            '<span itemprop="author">marguerite</span><p>A pull saw will do.</p></div></div></body>')
    assert meta_of(html).author is None


def test_a_titles_tail_after_a_pipe_is_no_part_of_the_headline() -> None:
    html = ('<head><meta property="og:title" content="How to help babies sleep through the night | Patient Education">'
            '</head><body><p>Text.</p></body>')
    assert meta_of(html).title == "How to help babies sleep through the night"
    # A one-word head is a brand's name, not a headline: the title stays whole.
    html = '<head><title>Stripe | Payments for the internet</title></head><body><p>Text.</p></body>'
    assert meta_of(html, "https://example.com/").title == "Stripe | Payments for the internet"


def test_a_few_words_after_a_titles_last_dash_qualify_it() -> None:
    html = '<head><title>2025 Top Insurance Company Rankings - Infographic</title></head><body><p>x</p></body>'
    assert meta_of(html).title == "2025 Top Insurance Company Rankings"
    html = '<head><title>Player - Squad 2024 - 2025</title></head><body><p>x</p></body>'
    assert meta_of(html).title == "Player - Squad 2024 - 2025"  # a range of years is the title's own


# (og:type, declared title, heading, the title named). og:type website or product: the heading is a reworded label or
# a slogan, and the declared name wins. An article keeps its heading, as does a page that declares no kind; so does a
# heading that is a piece of the declared title (a short label), one under a declared title cut short, and one that
# writes a number the declared title does not. A generic declared title ("Home") names nothing.
NO_ARTICLE_TITLES = [
    ("website", "Managed Data Analytics Services | ScienceSoft", "Managed Analytics Services",
     "Managed Data Analytics Services"),
    ("product", "Summit 24™ Smokeless Fire Pit", "Summit 24\" Fire Pit", "Summit 24™ Smokeless Fire Pit"),
    ("article", "Video Production Trends 2025 for Brands", "Video Production Trends to Watch in 2025",
     "Video Production Trends to Watch in 2025"),
    ("", "Video Production Trends 2025 for Brands", "Video Production Trends to Watch in 2025",
     "Video Production Trends to Watch in 2025"),
    ("website", "Camping Tents: Large Tents for Family & Car Camping", "Camping Tents", "Camping Tents"),
    ("website", "Wedding Checklist Wedding Planning Checklists…", "Wedding Checklist: A Timeline",
     "Wedding Checklist: A Timeline"),
    ("website", "Guide to filing your taxes in 2024", "Guide to filing your taxes in 2025",
     "Guide to filing your taxes in 2025"),
    ("website", "Home", "Support Small, Buy Artisan", "Support Small, Buy Artisan"),
]


@pytest.mark.parametrize(("og_type", "declared", "heading", "expected"), NO_ARTICLE_TITLES)
def test_a_page_that_is_no_article_is_named_by_its_declared_title(og_type: str, declared: str, heading: str,
                                                                  expected: str) -> None:
    html = (f'<head><meta property="og:type" content="{og_type}"><meta property="og:title" content="{declared}">'
            f"</head><body><h1>{heading}</h1><p>Text.</p></body>")
    assert meta_of(html, "https://www.scnsoft.com/analytics").title == expected


def test_a_declared_title_that_is_only_the_sites_name_names_no_page() -> None:
    html = ('<head><meta property="og:type" content="website"><meta property="og:title" content="Robomow">'
            "<title>Which mower suits which lawn? | Robomow</title></head><body><h1>Which mower suits which lawn?</h1>"
            "</body>")
    assert meta_of(html, "https://robomow.com/en-GB/blog/lawn").title == "Which mower suits which lawn?"
    html = ('<head><meta property="og:site_name" content="Bombas"><meta property="og:title" content="Bombas">'
            "<title>All Men's Socks</title></head><body><p>Socks.</p></body>")
    assert meta_of(html, "https://bombas.com/collections/mens-socks").title == "All Men's Socks"
    # The site's name stays the title of a page that declares nothing else.
    html = '<head><title>Bombas</title></head><body><p>Socks.</p></body>'
    assert meta_of(html, "https://bombas.com/").title == "Bombas"


def test_a_books_name_in_its_bar_is_no_chapters_title() -> None:
    # A documentation book: its name is the bar's h1, the chapter an h2, the title "Chapter - Book".
    html = ("<head><title>What is Ownership? - The Rust Programming Language</title></head><body>"
            "<div class='menu-bar'><h1 class='menu-title'>The Rust Programming Language</h1></div>"
            "<main><h2>What is Ownership?</h2><p>Text.</p></main></body>")
    assert meta_of(html, "https://doc.rust-lang.org/book/ch04-01.html").title == "What is Ownership?"
    # Without the chapter shown as an h2, the h1 that the title's tail repeats is the page's heading.
    html = ("<head><title>Tips - ProxMox or Debian for virtualization?</title></head><body>"
            "<h1>ProxMox or Debian for virtualization?</h1><h2>Replies</h2></body>")
    assert meta_of(html).title == "ProxMox or Debian for virtualization?"


def test_a_site_name_after_a_word_ending_in_symbols_keeps_them() -> None:
    assert strip_site_name("Convert The Kernel From C To Modern C++ - Slashdot", ["Slashdot"]) == (
        "Convert The Kernel From C To Modern C++")
    assert strip_site_name("Why C# - Dev Blog", ["Dev Blog"]) == "Why C#"


def test_the_page_an_article_names_as_its_own_is_no_product_page() -> None:
    # A blog platform declares the post's page as an ItemPage inside the BlogPosting: the page is the article's.
    ld = ('{"@type": "BlogPosting", "headline": "Five new cameras", "datePublished": "2025-01-24T02:37:28Z", '
          '"mainEntityOfPage": {"@type": "ItemPage", "url": "https://blog.example.org/post/cameras"}}')
    html = (f'<head><meta property="og:type" content="article"><script type="application/ld+json">{ld}</script>'
            '</head><body><h1>Five new cameras</h1><p>Gabo · 11 min read</p></body>')
    assert meta_of(html).date == "2025-01-24T02:37:28+00:00"
    product = ld.replace('"BlogPosting"', '"Product"')
    assert meta_of(html.replace(ld, product)).date is None


@pytest.mark.parametrize(("url", "expected"), [
    ("https://blog.example.org/2025/12/19/what-people-love", "2025-12-19"),
    ("https://blog.example.org/articles/2025-12-15+Rust+backend", "2025-12-15"),
    ("https://forum.example.org/t/2024-4-4-release-stuck/724779", None),  # a version number, no day
    ("https://shop.example.org/2025/13/40/item", None),
])
def test_the_day_a_pages_address_names(url: str, expected: str | None) -> None:
    assert meta_of("<body><h1>Notes</h1><p>Text without a date.</p></body>", url=url).date == expected


def test_the_addresss_day_settles_a_timestamp_a_day_away_and_no_other() -> None:
    head = ('<meta property="og:type" content="article"><meta property="article:published_time" content="{}">'
            '<body><h1>Night buses</h1><p>Text.</p></body>')
    url = "https://news.example.org/2025/12/18/night-buses"
    assert meta_of(head.format("2025-12-19T03:05:00Z"), url=url).date == "2025-12-18"
    # A month away: the address names another day (a republished story), the declared date stands.
    assert meta_of(head.format("2026-01-19T03:05:00Z"), url=url).date == "2026-01-19T03:05:00+00:00"


def test_a_utc_stamp_moves_only_to_a_day_some_zone_shows() -> None:
    head = '<meta property="article:published_time" content="{}"><meta property="og:type" content="article">'
    body = "<h1>Graphic design courses</h1><p>Updated 8 May 2025</p>"
    # 09:39 UTC is the 7th everywhere west of UTC+14:21: the 8th written is another date (an update).
    assert meta_of(head.format("2025-05-07T09:39:32Z") + body).date == "2025-05-07T09:39:32+00:00"
    # 10:30 UTC is already the 8th at UTC+14:00 (Kiribati): the day written is the page's.
    assert meta_of(head.format("2025-05-07T10:30:00Z") + body).date == "2025-05-08"


def test_an_authored_page_has_the_date_its_markup_declares_and_it_writes_far_from_the_headline() -> None:
    text = "Indexing makes a journal easier to find and to trust. " * 20  # far more than the headline's window
    page = ('<head>{}</head><body><h1>Guide to journal indexing</h1><p>{}</p><div class="meta">{}'
            '<p>Posted on <time datetime="2023-04-13">April 13, 2023</time></p></div></body>')
    byline = '<span class="author-bio">Danielle Padula</span>'
    assert meta_of(page.format("", text, byline)).date == "2023-04-13"
    assert meta_of(page.format("", text, "")).date is None  # no author: a page's date far from its headline
    product = '<meta property="og:type" content="product">'
    assert meta_of(page.format(product, text, byline)).date is None  # a reviewer on a product page


def test_addresses_that_cannot_be_read_cost_their_value_not_the_metadata() -> None:
    html = ('<head><meta property="og:image" content="http://[x/a.png"><meta name="author" content="http://[x">'
            '<link rel="canonical" href="http://[x/story"></head><body><h1>Night buses</h1><p class="byline">'
            '<a href="http://[x/author/jo">Jo Park</a></p></body>')
    m = meta_of(html)
    assert (m.title, m.author, m.image, m.url) == ("Night buses", "Jo Park", None, "https://news.example.org/a/story")
    assert meta_of("<body><h1>Notes</h1></body>", url="http://[::1/2025/12/18/x").date is None


def _steps(html: str, title: str) -> dict[str, str]:
    from centrum.core.metadata import _meta_tags, date_steps, json_ld

    page = from_html(html, "https://news.example.org/a/story")
    return dict(date_steps(page, _meta_tags(page.root), json_ld([]), [], title))


def test_the_one_day_written_next_to_the_headline() -> None:
    text = "I did it again, and had a really good time with the puzzles of the second week. " * 10
    page = ('<body><h1>Advent of Code, week 2</h1><p>{}</p><p>' + text + '</p>'
            '<footer>Older posts: <span>1 March 2019</span> <span>2 March 2019</span> <span>3 March 2019</span>'
            '</footer></body>')
    # htmldate takes the oldest day on the page (an older post's), which is not next to the headline.
    assert _steps(page.format("Published: 20 December 2025"), "Advent of Code, week 2") == {
        "written-near-headline": "2025-12-20"}
    # Two days next to it (published, updated): this rule does not choose between them.
    two = page.format("Published: 20 December 2025</p><p>Updated: 22 December 2025")
    assert "written-near-headline" not in _steps(two, "Advent of Code, week 2")


def test_a_day_after_today_is_written_but_no_publication_date() -> None:
    from centrum.core.metadata import written_date

    assert written_date("2018-10-17") == "2018-10-17"
    assert written_date("9999-11-20") is None
    assert written_date("2999/01/01") is None
