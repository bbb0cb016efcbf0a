"""What the clean tree's producer (``centrum.output.outputs``) and its Markdown converter (``centrum.output.markdown``)
agree on:
the allow-list shared with the reader view, the private marks the cleaner leaves for the converter, the
:class:`Content` holding the tree, and whether an output adds the page title. Kept apart so the converter reads the
tree without importing the cleaner, which imports the converter to make its Markdown.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml.html import HtmlElement

ALLOWLIST_PATH = Path(__file__).resolve().parents[1] / "assets" / "allowlist.json"
# Private marks on the clean tree, read by the Markdown converter and removed before HTML is written.
FN_REF = "data-centrum-fn"  # on <a>: footnote number n of a reference
FN_BODY = "data-centrum-fnbody"  # on the element that is footnote n's text (shown at the end in Markdown)
CODE_LANG = "data-centrum-lang"  # on <pre>: the language its class names (language-x / lang-x)
PRIVATE = (FN_REF, FN_BODY, CODE_LANG)


@dataclass(frozen=True)
class AllowList:
    keep: frozenset[str]
    drop: frozenset[str]
    attributes: dict[str, tuple[str, ...]]  # tag -> attribute names; "*" applies to every kept tag
    safe_link: re.Pattern[str]
    safe_image: re.Pattern[str]
    max_nodes: int

    def attrs_of(self, tag: str) -> tuple[str, ...]:
        return self.attributes.get(tag, ()) + self.attributes.get("*", ())


@functools.cache
def allowlist() -> AllowList:
    """The allow-list shared with ``extension/src/clean.js`` (one data file, read once)."""
    data = json.loads(ALLOWLIST_PATH.read_text(encoding="utf-8"))
    return AllowList(
        keep=frozenset(data["keep"]), drop=frozenset(data["drop"]),
        attributes={k: tuple(v) for k, v in data["attributes"].items()},
        # The patterns are JavaScript regexes used with the i flag; these ones mean the same in Python.
        safe_link=re.compile(data["safe_link"], re.I), safe_image=re.compile(data["safe_image"], re.I),
        max_nodes=int(data["max_nodes"]),
    )


@dataclass
class Content:
    """The clean tree of the answer: one block per outermost chosen node, plus footnote texts (number, element)."""

    blocks: list[HtmlElement] = field(default_factory=list)
    footnotes: list[tuple[int, HtmlElement]] = field(default_factory=list)


def _first_heading(content: Content) -> tuple[str, str] | None:
    for block in content.blocks:
        for el in block.iter("h1", "h2", "h3", "h4", "h5", "h6"):
            return el.tag, " ".join(el.text_content().split())
    return None


def shows_title(content: Content, title: str | None) -> bool:
    """Whether an output should add the title: not when the content opens with its own title already (an <h1>, or
    any heading saying the same), so a reader never sees two titles."""
    if not title:
        return False
    first = _first_heading(content)
    return not (first and (first[0] == "h1" or first[1].casefold() == " ".join(title.split()).casefold()))
