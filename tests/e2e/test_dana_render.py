"""DANA family on pages rendered by real Chromium: the collector's ``source`` serialization (``data-cx`` ids) is
what the line densities are computed on, and the chosen lines map back to the live article element. Uses the
session ``renderer`` of ``tests/e2e/conftest.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from centrum import algorithms
from centrum.algorithms import dana
from centrum.core.snapshot import parse_snapshot

TEXTS = {
    "en": ("The committee published its findings after a year of hearings across the region. "
           "Researchers measured the effect on small farms and found a steady rise in yields. "),
    "ar": ("نشرت اللجنة نتائجها بعد عام من جلسات الاستماع في جميع أنحاء المنطقة. "
           "قاس الباحثون التأثير على المزارع الصغيرة ووجدوا ارتفاعا مطردا في المحاصيل. "),
}

PAGE = """<!doctype html><html lang="{lang}" dir="{dir}"><head><meta charset="utf-8"><title>t</title>
<style>nav a {{ margin: 4px; }} footer a {{ display: inline-block; }}</style>
<script>window.analytics = {{ "enabled": true, "endpoint": "https://example.invalid/collect" }};</script>
</head><body>
<nav>{nav}</nav>
<div class="ad"><img alt="" src="/static/images/{banner}.png"></div>
<article id="story"><h1>{title}</h1>{paras}</article>
<div class="ad"><img alt="" src="/static/images/{banner}.png"></div>
<footer>{footer}</footer>
</body></html>"""


def _page(lang: str) -> str:
    nav = "".join(f'<a class="menu-item" href="/section/{i}/index.html">Section {i}</a>' for i in range(40))
    footer = "".join(f'<a class="footer-link" href="/about/page-{i}.html">About {i}</a>' for i in range(40))
    return PAGE.format(lang=lang, dir="rtl" if lang == "ar" else "ltr", nav=nav, footer=footer,
                       banner="banner-" * 40, title="Headline",
                       paras="".join(f"<p>{TEXTS[lang] * 3}</p>" for _ in range(6)))


@pytest.mark.parametrize("lang,names", [("en", ("danag", "addanag")), ("ar", ("dana", "danag", "addanag"))])
def test_rendered_page_lines_map_back_to_the_article(renderer, tmp_path: Path, lang: str, names: tuple[str, ...]):
    path = tmp_path / f"dana-{lang}.html"
    path.write_text(_page(lang), encoding="utf-8")
    snap = parse_snapshot(renderer.render(path, source=True).raw)
    assert snap.source and 'data-cx="' in snap.source
    story = [i for i, v in enumerate(snap.attr("id")) if v == "story"]
    for name in names:
        r = algorithms.run(name, snap)
        assert r.nodes == story, (name, r.message, r.debug.get("merged"))
        assert r.text is not None and r.text.startswith("Headline")
        assert "Section 3" not in r.text and "About 3" not in r.text
    # Without a browser, on the file itself, the same variants find the same text.
    raw = dana.run_source(path.read_bytes(), None, names[-1])
    assert raw.text is not None and TEXTS[lang].split()[3] in raw.text and "About 3" not in raw.text


def test_dana_has_no_answer_on_a_rendered_latin_page(renderer, tmp_path: Path):
    path = tmp_path / "dana-en-only.html"
    path.write_text(_page("en"), encoding="utf-8")
    snap = parse_snapshot(renderer.render(path, source=True).raw)
    r = algorithms.run("dana", snap)
    assert r.nodes == [] and "non-Latin" in r.message
