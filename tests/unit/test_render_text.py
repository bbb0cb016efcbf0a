"""How much text a saved page holds, as the renderer's re-render rules count it (no browser involved)."""

from __future__ import annotations

from centrum.core import render


def test_noscript_text_counts_closed_elements_up_to_their_first_closing_tag() -> None:
    page = b"<noscript>ab</noscript >cd<NOSCRIPT x=1><p>ef</p></NoScript><noscripts>zz</noscripts>"
    assert render._noscript_text_chars(page) == 4  # "ab" and "ef"; <noscripts> is another element
    assert render._noscript_text_chars(b"<noscript>a</noscriptx> b</noscript>") == len("ab")  # not a closing tag
    assert render._noscript_text_chars(b"<p>x</p><noscript>never closed") == 0


def test_noscript_text_is_counted_as_a_saved_bodys_text_is() -> None:
    """Non-blank characters of decoded text, styles and scripts left out: a web font's CSS in <noscript> (130 KB on one
    shared page, counted as text before renderer version 7) is not text, and a character is one whatever its bytes."""
    css = b"<style>@font-face{font-family:x;src:url(a.woff)}" + b"p{color:red}" * 1000 + b"</style>"
    assert render._noscript_text_chars(b"<noscript>" + css + b"<p>x  y</p><script>z()</script></noscript>") == 2
    assert render._noscript_text_chars("<noscript><p>中文字</p></noscript>".encode()) == 3
    page = "<meta charset=windows-1251><noscript>Привет &amp;</noscript>"
    assert render._noscript_text_chars(page.encode("cp1251")) == len("Привет&")
    body = b"<html><body><noscript><p>Some text</p></noscript></body></html>"
    assert render._noscript_text_chars(body) == render._text_chars(b"<p>Some text</p>") == len("Sometext")


def test_hostile_markup_is_counted_in_one_pass() -> None:
    # Thousands of unclosed tags: a lazy regex up to the closing tag rescans to the end from each one (tens of
    # seconds here); these counts read the page once.
    assert render._noscript_text_chars(b"<noscript>" * 20_000 + b"x" * 100_000) == 0
    assert render._saved_text_chars(b"<body>" + b"<select>" * 20_000 + b"<!--" + b"<p>hidden</p>" * 100) == 0
    # A tail of '<' without any '>' after them: no tag can start there, and no search rescans it.
    assert render._saved_text_chars(b"<body><p>ok</p>" + b"<a" * 200_000) == 2 + 2 * 200_000
    assert render._noscript_text_chars(b"<noscript>" + b"<a" * 200_000 + b"</noscript>") == 2 * 200_000


def test_html_text_keeps_a_lone_less_than_sign_as_text() -> None:
    from centrum.algorithms.dana import html_text

    assert html_text(b"<<p>" * 3 + b"x") == "<\n<\n<\nx"
    assert html_text(b"<p>a</p><b>b</b> <i") == "a\nb <i"


def test_saved_text_is_the_bodys_shown_text_without_code() -> None:
    page = ("<html><head><title>Not counted</title></head><body><p>Hello  world</p><script>var x = 1;</script>"
            "<style>p {}</style><!-- a comment --><noscript>Enable scripts</noscript><p>&amp; more</p></body>")
    assert render._saved_text_chars(page.encode()) == len("Helloworld&more")
