"""Deterministic synthetic pages for benchmarks: realistic shape, any size, several scripts.

A page has a header with navigation, a main ``<article>`` (headings, paragraphs with inline links, figures,
tables, lists), an aside of link lists, a comments section and a footer of link groups. Paragraph text cycles
through English, Japanese, Arabic, Russian and Hindi so that every script path of the algorithms is exercised.
The article takes about a third of the elements, as on real news pages, and the layout comes from a small inline
stylesheet so that the page renders the same offline.
"""

from __future__ import annotations

import html
import random

SENTENCES = {
    "en": [
        "The committee published its findings after a year of hearings across the region.",
        "Researchers measured the effect on small farms and found a steady rise in yields.",
        "Local officials said the new bridge would open to traffic before the winter.",
        "Critics argued that the plan ignored the costs borne by families in rural areas.",
    ],
    "ja": [
        "委員会は地域全体での一年間の公聴会を経て調査結果を発表した。",
        "研究者たちは小規模農家への影響を測定し、収穫量の着実な増加を確認した。",
        "地元当局は新しい橋が冬までに開通すると述べた。",
    ],
    "ar": [
        "نشرت اللجنة نتائجها بعد عام من جلسات الاستماع في جميع أنحاء المنطقة.",
        "قاس الباحثون التأثير على المزارع الصغيرة ووجدوا ارتفاعا مطردا في المحاصيل.",
    ],
    "ru": [
        "Комиссия опубликовала свои выводы после года слушаний по всему региону.",
        "Исследователи измерили влияние на небольшие фермы и обнаружили устойчивый рост урожайности.",
    ],
    "hi": [
        "समिति ने पूरे क्षेत्र में एक वर्ष की सुनवाई के बाद अपने निष्कर्ष प्रकाशित किए।",
        "शोधकर्ताओं ने छोटे खेतों पर प्रभाव को मापा और पैदावार में लगातार वृद्धि पाई।",
    ],
}
LANGS = list(SENTENCES)
NAV_WORDS = ["Home", "World", "Politics", "Business", "Science", "Sport", "Culture", "Opinion", "Video", "Travel"]

STYLE = """
body { margin: 0; font: 16px/1.5 sans-serif; }
header { height: 120px; background: #eee; }
header nav a { display: inline-block; margin: 8px; }
.wrap { display: flex; width: 1200px; margin: 0 auto; }
main { width: 800px; }
aside { width: 360px; margin-left: 40px; font-size: 14px; }
figure { margin: 16px 0; }
figure .img { width: 640px; height: 200px; background: #ccd; }
table { border-collapse: collapse; }
td, th { border: 1px solid #999; padding: 2px 6px; }
.comments { margin-top: 40px; font-size: 14px; }
footer { background: #222; color: #ddd; padding: 20px; }
footer ul { display: inline-block; vertical-align: top; width: 180px; }
.cookie { position: fixed; bottom: 0; left: 0; right: 0; height: 60px; background: #ffd; }
"""


class _Writer:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.elements = 0

    def open(self, tag: str, attrs: str = "") -> None:
        self.elements += 1
        self.parts.append(f"<{tag}{' ' + attrs if attrs else ''}>")

    def close(self, tag: str) -> None:
        self.parts.append(f"</{tag}>")

    def leaf(self, tag: str, text: str, attrs: str = "") -> None:
        self.open(tag, attrs)
        self.parts.append(html.escape(text, quote=False))
        self.close(tag)

    def text(self, text: str) -> None:
        self.parts.append(html.escape(text, quote=False))


def synthetic_html(n_elements: int, seed: int = 0) -> str:
    """A page of about ``n_elements`` elements (within a few percent), the same for the same arguments."""
    rng = random.Random(seed)
    w = _Writer()
    w.parts.append("<!DOCTYPE html>")
    w.open("html", 'lang="en"')
    w.open("head")
    w.leaf("title", f"Synthetic page {n_elements}")
    w.leaf("style", STYLE)
    w.close("head")
    w.open("body")
    _header(w)
    w.open("div", 'class="wrap"')
    # Budget: article ~35%, aside ~25%, comments ~20%, footer the rest.
    budget = max(n_elements - w.elements - 20, 50)
    w.open("main")
    _article(w, rng, budget)
    _comments(w, rng, budget)
    w.close("main")
    _aside(w, rng, budget)
    w.close("div")
    _footer(w, n_elements)
    w.close("body")
    w.close("html")
    return "".join(w.parts)


def _header(w: _Writer) -> None:
    w.open("header")
    w.leaf("div", "The Daily Synthetic", 'class="logo"')
    w.open("nav", 'class="menu"')
    for word in NAV_WORDS:
        w.leaf("a", word, 'href="#"')
    w.close("nav")
    w.close("header")
    w.leaf("div", "We use cookies.", 'class="cookie"')


def _article(w: _Writer, rng: random.Random, budget: int) -> None:
    w.open("article", 'class="story"')
    w.leaf("h1", "Findings published after a year of hearings")
    target = w.elements + int(budget * 0.35)
    k = 0
    while w.elements < target:
        lang = LANGS[k % len(LANGS)]
        kind = k % 9
        if kind == 4:
            w.open("figure")
            w.open("div", 'class="img" role="img"')
            w.close("div")
            w.leaf("figcaption", SENTENCES[lang][0][:60])
            w.close("figure")
        elif kind == 7:
            _table(w)
        elif kind == 8:
            w.leaf("h2", f"Section {k // 9 + 2}")
        else:
            _paragraph(w, rng, lang, k)
        k += 1
    w.close("article")


def _table(w: _Writer) -> None:
    w.open("table")
    for r in range(3):
        w.open("tr")
        for c in range(3):
            w.leaf("td", f"{r * 3 + c}")
        w.close("tr")
    w.close("table")


def _paragraph(w: _Writer, rng: random.Random, lang: str, k: int) -> None:
    w.open("p", f'lang="{lang}"')
    sentences = SENTENCES[lang]
    for s in range(3):
        w.text(sentences[(k + s) % len(sentences)] + " ")
        if s == 1 and rng.random() < 0.5:
            w.leaf("a", "more", 'href="#"')
            w.text(" ")
        if s == 2 and rng.random() < 0.3:
            w.leaf("em", "emphasis")
    w.close("p")


def _comments(w: _Writer, rng: random.Random, budget: int) -> None:
    w.open("section", 'class="comments"')
    w.leaf("h2", "Comments")
    target = w.elements + int(budget * 0.2)
    while w.elements < target:
        w.open("div", 'class="comment"')
        w.leaf("span", f"user{rng.randrange(1000)}", 'class="author"')
        w.leaf("p", SENTENCES["en"][rng.randrange(4)][:70])
        w.leaf("a", "Reply", 'href="#"')
        w.close("div")
    w.close("section")


def _aside(w: _Writer, rng: random.Random, budget: int) -> None:
    w.open("aside", 'class="sidebar"')
    target = w.elements + int(budget * 0.25)
    while w.elements < target:
        w.leaf("h3", "Most read")
        w.open("ul")
        for _ in range(8):
            w.open("li")
            w.leaf("a", SENTENCES["en"][rng.randrange(4)][:40], 'href="#"')
            w.close("li")
        w.close("ul")
    w.close("aside")


def _footer(w: _Writer, n_elements: int) -> None:
    w.open("footer")
    while w.elements < n_elements - 1:
        w.open("ul")
        for word in NAV_WORDS[: max(1, min(8, n_elements - 2 - w.elements))]:
            w.open("li")
            w.leaf("a", word, 'href="#"')
            w.close("li")
        w.close("ul")
    w.close("footer")
