"""GitHub-flavoured Markdown from the clean tree of ``centrum.output.outputs`` (never from the raw page).

Headings (ARIA headings arrive as h1-h6), paragraphs with hard line breaks, nested lists (``start`` kept), block
quotes, fenced code with its whitespace exactly as on the page (leading spaces, tabs, blank lines; the fence grows
past any backtick run inside; the language from a ``language-x`` class), GFM tables (colspan/rowspan expanded into
empty cells, pipes escaped, line breaks as ``<br>``; layout tables that hold headings, quotes, figures or other
tables come out as blocks), links and images with absolute URLs and alt text, ``<sup>``/``<sub>`` kept as HTML,
footnote references as ``[^n]`` with their texts at the end. Text is escaped so that nothing on the page turns into
Markdown syntax. A document starts with YAML front matter holding the metadata.

Linear in the size of the clean tree, whose depth ``outputs`` bounds (the recursion here stays shallow).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ..core.html import BLOCK_TAGS
from .clean_tree import CODE_LANG, FN_BODY, FN_REF, Content, allowlist, shows_title

if TYPE_CHECKING:
    from lxml.html import HtmlElement

    from ..core.metadata import Metadata

CONTAINERS = BLOCK_TAGS - {"pre", "hr", "table", "ul", "ol", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6",
                           "colgroup", "col", "dt"}
EMPHASIS = {"em": "*", "i": "*", "cite": "*", "var": "*", "dfn": "*", "strong": "**", "b": "**", "s": "~~",
            "del": "~~"}
CODE_TAGS = frozenset({"code", "kbd", "samp"})
LAYOUT_MARKERS = ("table", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "figure")
MAX_TABLE_CELLS = 200_000
BR = "\x01"  # a <br> until the paragraph is finished (survives whitespace collapsing)
_ESCAPE = re.compile(r"([\\`*_\[\]<~])")
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
_SPACE = re.compile(r"[ \t\n\r\f\v]+")
_LINE_START = re.compile(r"^(#{1,6}(?=\s|$)|[-+=](?=\s|$)|>|-+\s*$|=+\s*$)")
_ORDERED_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")


def escape(text: str) -> str:
    """Page text as Markdown text: the characters that could start inline syntax are escaped."""
    text = text.replace(BR, "")
    return _ENTITY.sub(r"\\&", _ESCAPE.sub(r"\\\1", text))


def _escape_line_start(line: str) -> str:
    m = _ORDERED_START.match(line)
    if m:
        return f"{m.group(1)}\\{line[len(m.group(1)):]}"
    if _LINE_START.match(line):
        return "\\" + line
    return line


def _url(url: str) -> str:
    return (url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C")
            .replace(">", "%3E"))


def _wrap(inner: str, mark: str) -> str:
    """``mark`` around the text with surrounding whitespace moved outside (``* x*`` would not be emphasis)."""
    strip = " \t\n\r\f\v" + BR
    core = inner.strip(strip)
    if not core:
        return inner
    lead = inner[: len(inner) - len(inner.lstrip(strip))]
    trail = inner[len(inner.rstrip(strip)):]
    return f"{lead}{mark}{core}{mark}{trail}"


def _code_span(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _pre_text(el: HtmlElement) -> str:
    """The text of a <pre> exactly, <br> as a newline."""
    parts: list[str] = []
    if el.text:
        parts.append(el.text)
    stack = [(child, False) for child in reversed(el)]
    while stack:
        node, done = stack.pop()
        if done:
            if node.tail:
                parts.append(node.tail)
            continue
        if node.tag == "br":
            parts.append("\n")
        elif node.text:
            parts.append(node.text)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    return "".join(parts)


def _finish(inline: str) -> list[str]:
    """Paragraphs of a run of inline Markdown: whitespace collapsed as a browser does, <br> a hard break, two or
    more <br> in a row a paragraph break, a line that would start a block escaped."""
    text = _SPACE.sub(" ", inline)
    paragraphs: list[list[str]] = [[]]
    for line in text.split(BR):
        line = line.strip(" ")
        if line:
            paragraphs[-1].append(_escape_line_start(line))
        elif paragraphs[-1]:
            paragraphs.append([])
    return ["\\\n".join(lines) for lines in paragraphs if lines]


class _Converter:
    def __init__(self) -> None:
        self.in_cell = 0

    # ---- blocks ----
    def blocks(self, el: HtmlElement) -> list[str]:
        """The Markdown blocks of a container's content."""
        out: list[str] = []
        run: list[str] = []

        def flush() -> None:
            if run:
                out.extend(_finish("".join(run)))
                run.clear()

        if el.text:
            run.append(escape(el.text))
        for child in el:
            if child.get(FN_BODY) is not None:
                pass  # a footnote's text: written at the end, after its number
            elif child.tag in BLOCK_TAGS:
                flush()
                out.extend(self.block(child))
            else:
                run.append(self.inline(child))
            if child.tail:
                run.append(escape(child.tail))
        flush()
        return out

    def block(self, el: HtmlElement) -> list[str]:
        tag = el.tag
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            text = " ".join(_SPACE.sub(" ", self.inline_children(el).replace(BR, " ")).split())
            if not text:
                return []
            text = re.sub(r"(#+)$", r"\\\1", text)
            return [f"{'#' * int(tag[1])} {text}"]
        if tag in ("ul", "ol"):
            return self.list_block(el)
        if tag == "pre":
            return [self.code_block(el)]
        if tag == "hr":
            return ["---"]
        if tag == "blockquote":
            inner = "\n\n".join(self.blocks(el))
            if not inner:
                return []
            return ["\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))]
        if tag == "table":
            return self.table(el)
        if tag == "dt":
            return [_wrap(b, "**") if "\n" not in b else b for b in self.blocks(el)]
        if tag in ("colgroup", "col"):
            return []
        return self.blocks(el)

    def list_block(self, el: HtmlElement) -> list[str]:
        ordered = el.tag == "ol"
        # GFM list numbers are 0-999999999.
        number = min(max(int(el.get("start", "1")), 0), 999_999_999) if ordered else 0
        items: list[list[str]] = []
        # Text written directly in the list (outside any <li>) is shown by browsers: it becomes an item too.
        loose = _finish(escape(el.text)) if el.text and el.text.strip() else []
        if loose:
            items.append(loose)
        for child in el:
            if child.get(FN_BODY) is not None:
                pass
            elif child.tag in ("ul", "ol") and items:
                items[-1].extend(self.list_block(child))  # a list written directly in a list belongs to the item
            else:
                body = self.blocks(child) if child.tag in BLOCK_TAGS else _finish(self.inline(child))
                if body:
                    items.append(body)
            if child.tail and child.tail.strip():
                items.append(_finish(escape(child.tail)))
        if not items:
            return []
        lines: list[str] = []
        for body in items:
            marker = f"{number}. " if ordered else "- "
            number += 1
            text = body[0]
            for prev, block in zip(body, body[1:], strict=False):
                # A nested list right under the item's text keeps the list tight.
                tight = block.startswith(("- ", "1. ")) or bool(re.match(r"\d+\. ", block))
                text += ("\n" if tight and not prev.startswith("```") else "\n\n") + block
            pad = " " * len(marker)
            first, *rest = text.split("\n")
            lines.append(marker + first)
            lines.extend(pad + line if line else "" for line in rest)
        return ["\n".join(lines)]

    def code_block(self, el: HtmlElement) -> str:
        code = _pre_text(el)
        if code.endswith("\n"):
            code = code[:-1]
        if self.in_cell:
            return _code_span(code)
        longest = max((len(r) for r in re.findall(r"`{3,}", code)), default=0)
        fence = "`" * max(3, longest + 1)
        lang = re.sub(r"[^\w+#.-]", "", el.get(CODE_LANG) or "")
        return f"{fence}{lang}\n{code}\n{fence}"

    # ---- tables ----
    def table(self, el: HtmlElement) -> list[str]:
        rows: list[tuple[list[HtmlElement], bool]] = []
        caption: list[str] = []
        for child in el:
            if child.tag == "caption":
                caption = self.blocks(child)
            elif child.tag in ("thead", "tbody", "tfoot"):
                for tr in child:
                    if tr.tag == "tr":
                        rows.append((self._cells(tr), child.tag == "thead"))
            elif child.tag == "tr":
                rows.append((self._cells(child), False))
        rows = [r for r in rows if r[0]]
        n_cells = sum(len(cells) for cells, _ in rows)
        width = max((len(cells) for cells, _ in rows), default=0)
        layout = (n_cells <= 1 or len(rows) * width > MAX_TABLE_CELLS
                  or any(sub is not el for sub in el.iter(*LAYOUT_MARKERS)))
        if layout:
            # A table used for layout: its cells are blocks of the text, in reading order.
            out = list(caption)
            for cells, _ in rows:
                for cell in cells:
                    out.extend(self.blocks(cell))
            return out
        grid: list[list[str | None]] = [[None] * width for _ in rows]
        for r, (cells, _) in enumerate(rows):
            c = 0
            for cell in cells:
                while c < width and grid[r][c] is not None:
                    c += 1
                if c >= width:
                    break
                colspan = min(_span(cell.get("colspan")), width - c)
                rowspan = min(_span(cell.get("rowspan")), len(rows) - r)
                grid[r][c] = self._cell_text(cell)
                for dr in range(rowspan):
                    for dc in range(colspan):
                        if (dr or dc) and grid[r + dr][c + dc] is None:
                            grid[r + dr][c + dc] = ""  # a spanned position: empty, the text is in the first one
                c += colspan
        lines = ["| " + " | ".join(v or "" for v in row) + " |" for row in grid]
        lines.insert(1, "|" + "|".join(" --- " for _ in range(width)) + "|")
        return [*caption, "\n".join(lines)]

    @staticmethod
    def _cells(tr: HtmlElement) -> list[HtmlElement]:
        return [c for c in tr if c.tag in ("td", "th")]

    def _cell_text(self, cell: HtmlElement) -> str:
        self.in_cell += 1
        try:
            blocks = self.blocks(cell)
        finally:
            self.in_cell -= 1
        text = "<br>".join(b.replace("\\\n", "<br>").replace("\n", "<br>") for b in blocks)
        return text.replace("|", "\\|")

    # ---- inline ----
    def inline_children(self, el: HtmlElement) -> str:
        parts = [escape(el.text)] if el.text else []
        for child in el:
            if child.get(FN_BODY) is None:
                parts.append(self.inline(child))
            if child.tail:
                parts.append(escape(child.tail))
        return "".join(parts)

    def inline(self, el: HtmlElement) -> str:
        tag = el.tag
        if tag == "br":
            return BR
        if tag == "wbr":
            return ""
        if tag == "img":
            alt = (el.get("alt") or "").replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
            return f"![{' '.join(alt.split())}]({_url(el.get('src', ''))})"
        if tag == "a":
            if el.get(FN_REF):
                return f"[^{el.get(FN_REF)}]"
            inner = self.inline_children(el)
            href = el.get("href")
            if not href:
                return inner
            if not inner.strip():
                return ""
            return _wrap(inner, "\x00").replace("\x00", "[", 1).replace("\x00", f"]({_url(href)})", 1)
        if tag in CODE_TAGS:
            return _code_span(el.text_content())
        if tag in ("sup", "sub"):
            refs = [a for a in el.iter("a") if a.get(FN_REF)]
            if refs:
                return "".join(f"[^{a.get(FN_REF)}]" for a in refs)
            inner = self.inline_children(el).strip()
            return f"<{tag}>{inner}</{tag}>" if inner else ""
        if tag in EMPHASIS:
            return _wrap(self.inline_children(el), EMPHASIS[tag])
        if tag == "pre":
            return _code_span(_pre_text(el))
        if tag in BLOCK_TAGS:
            return " " + self.inline_children(el) + " "  # a block inside a link or emphasis: its words, spaced
        return self.inline_children(el)


def _span(value: str | None) -> int:
    try:
        return max(1, min(int(value or 1), 999))
    except ValueError:
        return 1


def convert(content: Content) -> str:
    """The Markdown of the clean tree: its blocks, then the footnotes."""
    conv = _Converter()
    blocks: list[str] = []
    for block in content.blocks:
        blocks.extend(conv.block(block) if block.tag in BLOCK_TAGS else _finish(conv.inline(block)))
    notes = []
    for n, body in content.footnotes:
        text = "\n\n".join(conv.blocks(body))
        if not text:
            continue
        first, *rest = text.split("\n")
        notes.append("\n".join([f"[^{n}]: {first}", *("    " + line if line else "" for line in rest)]))
    if notes:
        blocks.append("\n".join(notes))
    return "\n\n".join(blocks)


# In a front-matter value, the characters written as \uXXXX escapes: a Markdown renderer that does not know front
# matter (CommonMark, markdown-it's default) shows it as text, where < > & would open a live tag, entity or
# autolink (a page title "<img src=x onerror=...>") and [ ] a link or image; and the characters YAML would not give
# back as they are (line breaks it folds: U+0085, U+2028, U+2029; controls, lone surrogates, non-characters and the
# BOM that YAML refuses or strips), which json.dumps leaves raw.
_FRONT_MATTER_ESCAPE = re.compile("[<>&\\[\\]\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def yaml_string(value: str) -> str:
    """``value`` as a double-quoted YAML scalar (JSON string syntax, which YAML reads as it is) that no Markdown
    renderer turns into markup."""
    return _FRONT_MATTER_ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def front_matter(meta: Metadata) -> str:
    """YAML front matter (values as escaped JSON strings, see :func:`yaml_string`); the URL only when it is
    public."""
    fields = (("title", meta.title), ("author", meta.author), ("date", meta.date),
              ("sitename", meta.sitename), ("language", meta.language),
              ("url", meta.url if meta.url and allowlist().safe_link.match(meta.url) else None),
              ("image", meta.image), ("description", meta.description))
    lines = [f"{k}: {yaml_string(v)}" for k, v in fields if v]
    return "---\n" + "\n".join(lines) + "\n---\n" if lines else ""


def document(content: Content, meta: Metadata) -> str:
    """A Markdown document: front matter, the title as a heading (unless the content opens with it), the content."""
    parts = []
    if shows_title(content, meta.title):
        parts.append("# " + escape(meta.title or ""))
    body = convert(content)
    if body:
        parts.append(body)
    return front_matter(meta) + ("\n" if front_matter(meta) else "") + "\n\n".join(parts) + "\n"

