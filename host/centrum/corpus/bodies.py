"""Article bodies for the styled corpus: the gold texts of the shared data sets, given back their structure.

A gold text is one block per line. A line becomes a heading when it is short, ends without sentence punctuation and
is followed by a longer line (how a subheading reads in running text); consecutive lines that start with a bullet
or an enumerator become a list (the marker is dropped: a browser draws it, it is not in the element's text). The
first line is the article's title when it reads as a heading (news gold often starts with the headline); the title is
kept apart from the body, as the generated page shows it in the theme's own title element.

The gold of a generated page is exactly the text of the blocks inserted, one block per line, so that the page's
main content and its gold are the same words by construction.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

_BULLET = re.compile(r"^\s*(?:[-*•·▪◦‣–—]|\(?\d{1,3}[.)])\s+")
_END_PUNCT = tuple(".!?。！？:;,…)»\"'”’、，；：")
HEADING_MAX = 90  # characters: longer lines are running text


@dataclass(frozen=True)
class Block:
    kind: str  # "h" heading, "p" paragraph, "li" list item
    text: str


@dataclass(frozen=True)
class Body:
    title: str
    blocks: tuple[Block, ...]

    @property
    def gold(self) -> str:
        """The page's gold: the inserted blocks' text, one per line."""
        return "\n".join(b.text for b in self.blocks) + "\n"


def clean_line(line: str) -> str:
    """Whitespace collapsed, control characters dropped (they would not survive HTML)."""
    line = "".join(ch for ch in line if unicodedata.category(ch)[0] != "C" or ch in "\t ")
    return " ".join(line.split())


def _heading_like(line: str) -> bool:
    return 0 < len(line) <= HEADING_MAX and not line.endswith(_END_PUNCT) and not _BULLET.match(line)


def structure(gold_text: str, fallback_title: str) -> Body:
    """Title and blocks of one gold text (see the module docstring)."""
    lines = [c for c in (clean_line(x) for x in gold_text.splitlines()) if c]
    title = fallback_title
    if len(lines) > 1 and _heading_like(lines[0]):
        title, lines = lines[0], lines[1:]
    blocks: list[Block] = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        m = _BULLET.match(line)
        if m and len(line) > m.end():
            blocks.append(Block("li", line[m.end():]))
        elif _heading_like(line) and len(nxt) > 2 * len(line) and not _BULLET.match(nxt) and i > 0:
            blocks.append(Block("h", line))
        else:
            blocks.append(Block("p", line))
    return Body(title=title, blocks=_lone_items_as_paragraphs(blocks))


def _lone_items_as_paragraphs(blocks: list[Block]) -> tuple[Block, ...]:
    """A single bulleted line is a dash-led sentence (dialogue, a byline), not a list."""
    out = []
    for i, b in enumerate(blocks):
        if b.kind == "li":
            near = [blocks[j].kind for j in (i - 1, i + 1) if 0 <= j < len(blocks)]
            if "li" not in near:
                b = Block("p", b.text)
        out.append(b)
    return tuple(out)


def groups(blocks: tuple[Block, ...]) -> list[tuple[str, list[str]]]:
    """Blocks with consecutive list items joined: ("h"|"p", [text]) or ("ul", [item, ...])."""
    out: list[tuple[str, list[str]]] = []
    for b in blocks:
        if b.kind == "li" and out and out[-1][0] == "ul":
            out[-1][1].append(b.text)
        else:
            out.append(("ul" if b.kind == "li" else b.kind, [b.text]))
    return out


def to_html(blocks: tuple[Block, ...], heading_level: int = 2) -> str:
    """The body as HTML blocks, one per line with blank lines between (Markdown passes such blocks through as they
    are, and no engine rewrites text inside them: no smart quotes, no emphasis from ``*``)."""
    parts = []
    for kind, texts in groups(blocks):
        if kind == "ul":
            items = "".join(f"<li>{html.escape(t, quote=False)}</li>" for t in texts)
            parts.append(f"<ul>{items}</ul>")
        elif kind == "h":
            parts.append(f"<h{heading_level}>{html.escape(texts[0], quote=False)}</h{heading_level}>")
        else:
            parts.append(f"<p>{html.escape(texts[0], quote=False)}</p>")
    return "\n\n".join(parts) + "\n"


def rst_escape(text: str) -> str:
    """Every ASCII punctuation character backslash-escaped: reStructuredText then reads no markup in the line
    (inline markup, enumerators, section adornments, targets) and shows the characters as they are."""
    return "".join("\\" + ch if ch.isascii() and not ch.isalnum() and not ch.isspace() else ch for ch in text)


def rst_width(text: str) -> int:
    """Columns of a title as docutils counts them (East Asian wide characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def rst_title(text: str, char: str) -> str:
    escaped = rst_escape(text)
    return f"{escaped}\n{char * (rst_width(escaped) + 2)}\n"


def to_rst(blocks: tuple[Block, ...]) -> str:
    parts = []
    for kind, texts in groups(blocks):
        if kind == "ul":
            parts.append("\n".join(f"- {rst_escape(t)}" for t in texts))
        elif kind == "h":
            parts.append(rst_title(texts[0], "-").rstrip("\n"))
        else:
            parts.append(rst_escape(texts[0]))
    return "\n\n".join(parts) + "\n"
