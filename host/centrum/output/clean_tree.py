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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lxml.html import HtmlElement

ALLOWLIST_PATH = Path(__file__).resolve().parents[1] / "assets" / "allowlist.json"
# Private marks on the clean tree, read by the Markdown converter and removed before HTML is written.
FN_REF = "data-centrum-fn"  # on <a>: footnote number n of a reference
FN_BODY = "data-centrum-fnbody"  # on the element that is footnote n's text (shown at the end in Markdown)
CODE_LANG = "data-centrum-lang"  # on <pre>: the language its class names (language-x / lang-x)
PRIVATE = (FN_REF, FN_BODY, CODE_LANG)


@dataclass(frozen=True)
class ThreadWords:
    """How threads and comment lists read (allowlist.json "thread", the reader's clean.js threadRole): class and id
    words of elements that go, user cards, author-and-date lines, quote boxes and member names, and the whole texts
    of links that are a post's actions."""

    drop: re.Pattern[str]
    card: re.Pattern[str]
    meta: re.Pattern[str]
    quote: re.Pattern[str]
    name: re.Pattern[str]
    actions: re.Pattern[str]
    inline: frozenset[str]
    max_card_chars: int
    max_meta_chars: int
    max_name_chars: int


def _thread_words(data: dict[str, Any]) -> ThreadWords:
    # As clean.js builds them: each word an alternative between word edges; a quote word ends the class word.
    def words(key: str, end: str = r"($|[\s_-])") -> re.Pattern[str]:
        whole = data.get(f"{key}_whole") or []
        return re.compile(r"(^|[\s_-])(" + "|".join(data[key]) + ")" + end
                          + (r"|(^|\s)(" + "|".join(whole) + r")($|\s)" if whole else ""), re.I)

    return ThreadWords(
        drop=words("drop"), card=words("card"), meta=words("meta"), quote=words("quote", r"($|\s)"),
        name=words("name"), actions=re.compile(r"^\s*(\+\s*)?(" + "|".join(data["actions"]) + r")\s*$", re.I),
        inline=frozenset(data["inline"]), max_card_chars=int(data["max_card_chars"]),
        max_meta_chars=int(data["max_meta_chars"]), max_name_chars=int(data["max_name_chars"]))


@dataclass(frozen=True)
class AllowList:
    keep: frozenset[str]
    drop: frozenset[str]
    attributes: dict[str, tuple[str, ...]]  # tag -> attribute names; "*" applies to every kept tag
    safe_link: re.Pattern[str]
    safe_image: re.Pattern[str]
    max_nodes: int
    thread: ThreadWords
    max_lazy_wrapped: int  # pictures taken out of wrappers only their box hides (outputs._Cleaner._lazy_images)

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
        max_nodes=int(data["max_nodes"]), thread=_thread_words(data["thread"]),
        max_lazy_wrapped=int(data["max_lazy_wrapped"]),
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
