"""Raw HTML as bytes, read without a parse: the page's UTF-8 bytes as the charset sniffer reads them, code removal,
tag stripping and the plain text of a fragment. Shared by DANA (its pre-processing and text output), the renderer's
re-render rules and the outputs, so that they count and clean text the same way."""

from __future__ import annotations

import html as htmllib
import re

from . import charset

# The elements that make blocks of text (a line of their own in Markdown, a break in a heading's shown text).
BLOCK_TAGS = frozenset({
    "p", "div", "section", "article", "main", "header", "footer", "aside", "details", "summary", "figure",
    "figcaption", "blockquote", "pre", "hr", "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th",
    "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "colgroup", "col",
})

# A page whose <noscript> elements hold at least NOSCRIPT_MIN_CHARS non-blank characters of text while it shows under
# NOSCRIPT_SHARE of them with its scripts running is an empty shell that its scripts were to fill (a Discourse forum
# holds its posts there): it is read as a browser without scripts shows it. The renderer renders it again with its
# scripts off; the source-only parse enters its <noscript> elements.
NOSCRIPT_MIN_CHARS = 500
NOSCRIPT_SHARE = 0.2


def shown_only_without_scripts(shown: int, held: int) -> bool:
    """The <noscript> rule on counts of non-blank characters: ``shown`` with scripts, ``held`` in <noscript>."""
    return held >= NOSCRIPT_MIN_CHARS and shown < NOSCRIPT_SHARE * held


# Characters HTML text never holds (C0 controls but tab and newlines, lone surrogates, non-characters): bytes that
# were not text decode to them.
BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def source_bytes(html: str | bytes) -> bytes:
    """UTF-8 bytes of a page, read as :func:`centrum.core.charset.decode` reads it, without decoding UTF-8 pages.

    Raw HTML is the input of the ``--no-render`` path, and DANA counts bytes: decoding a UTF-8 page to ``str``
    (and encoding it back) costs two full passes for nothing. Bytes pass through untouched when they are ASCII or
    the sniffer reads them as UTF-8 without a BOM (invalid sequences become U+FFFD in the text output); anything
    else is transcoded.
    """
    if isinstance(html, str):
        return html.encode("utf-8", "surrogatepass")
    if html.isascii():
        return html
    if charset.bom(html) is None and charset.codec(charset.sniff(html)) == "utf-8":
        return html
    return charset.decode(html).encode("utf-8", "surrogatepass")


_OPENER = re.compile(rb"<(script|style|noscript|!--)")
_NAME_END = frozenset(b" \t\n\r\f/>")
_CLOSER = {b"script": b"</script", b"style": b"</style", b"noscript": b"</noscript"}


def remove_code(data: bytes, noscript: bool = True) -> bytes:
    """Drop ``<script>``, ``<style>``, comments (and ``<noscript>``) with their content.

    A regex search for the next opener and ``bytes.find`` for its closer, on a lower-cased copy: C-speed scans
    instead of a regex stepping through every byte of every script. The next search starts after the removed
    span, so a ``<script>`` inside a comment (or ``<!--`` inside a script) is treated as the browser does. An
    unclosed element runs to the end of the file; ``<!-->`` is an (empty) comment as in HTML.
    """
    low = data.lower()
    n = len(data)
    # Views, not copies, of the kept spans: only the joined result is a second copy of the page.
    view = memoryview(data)
    parts: list[memoryview] = []
    cur = 0
    search, find = _OPENER.search, low.find
    m = search(low)
    while m is not None:
        p, q, name = m.start(), m.end(), m.group(1)
        if name == b"!--":
            e = find(b"-->", p + 2)
            end = n if e < 0 else e + 3
        elif (q < n and low[q] not in _NAME_END) or (name == b"noscript" and not noscript):
            m = search(low, q)  # <scripts>, <style-x>: another element
            continue
        else:
            e = find(_CLOSER[name], q)
            gt = find(b">", e) if e >= 0 else -1
            end = n if gt < 0 else gt + 1
        parts.append(view[cur:p])
        cur = end
        m = search(low, end)
    if not parts:
        return data
    del low
    parts.append(view[cur:])
    return b"".join(parts)


_BLOCK_B = re.compile(
    rb"<(?:/?(?:p|div|li|h[1-6]|tr|table|ul|ol|dl|dt|dd|section|article|header|footer|blockquote|pre|main|aside|nav|"
    rb"figure|figcaption|form|fieldset|address|title|td|th)\b|br\b|hr\b)[^>]*>", re.I)
_TAG_B = re.compile(rb"<[^>]*>")


def _sub_tags(pattern: re.Pattern[bytes], repl: bytes, data: bytes) -> bytes:
    """``pattern.sub`` for a pattern that ends at a tag's ``>``: no match starts after the last ``>``, so the search
    stops there. Otherwise every ``<`` of a hostile tail without ``>`` would rescan to the end (quadratic)."""
    end = data.rfind(b">") + 1
    return pattern.sub(repl, data[:end]) + data[end:]


def strip_tags(data: bytes) -> bytes:
    """The bytes without their tags (``<...>``), in one pass."""
    return _sub_tags(_TAG_B, b"", data)


def html_text(fragment: str | bytes) -> str:
    """Plain text of an HTML fragment: block tags become line breaks, other tags vanish, entities decoded.

    Works on UTF-8 bytes (bytes regexes and ``bytes.split`` are about twice as fast as their ``str`` forms on
    non-Latin text): block breaks travel as NUL marks (HTML parsing never keeps a NUL, so none is real text) and
    each block's whitespace is collapsed by ``split``/``join``. Entities are decoded last, so ``&nbsp;`` stays
    a no-break space as in the rendered text.
    """
    b = fragment.encode("utf-8", "surrogatepass") if isinstance(fragment, str) else fragment
    b = strip_tags(_sub_tags(_BLOCK_B, b"\x00", b.replace(b"\x00", b"")))
    lines = [b" ".join(part.split()) for part in b.split(b"\x00")]
    s = b"\n".join(filter(None, lines)).decode("utf-8", "replace")
    return htmllib.unescape(s) if "&" in s else s
