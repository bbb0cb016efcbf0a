"""GCE on pages rendered by real headless Chromium with the extension's collector (no hand-built geometry)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from centrum import algorithms
from centrum.core.render import Renderer
from centrum.core.snapshot import parse_snapshot

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample" / "article.html"

SENTENCES = {
    "en": ("ltr", "The committee published its findings after a year of hearings across the region."),
    "ja": ("ltr", "委員会は地域全体での一年間の公聴会を経て調査結果を発表した。"),
    "ar": ("rtl", "نشرت اللجنة نتائجها بعد عام من جلسات الاستماع في جميع أنحاء المنطقة."),
    "ko": ("ltr", "위원회는 지역 전체에서 1년간의 청문회를 거친 후 조사 결과를 발표했다."),
    "ru": ("ltr", "Комиссия опубликовала свои выводы после года слушаний по всему региону."),
}


def layout(lang: str) -> str:
    """A page without semantic markup (no <article>, no content-like attribute): only geometry can find the text."""
    direction, sentence = SENTENCES[lang]
    paras = "".join(f"<p>{' '.join([sentence] * 7)}</p>" for _ in range(14))
    links = "".join(f'<a href="/s{i}">{sentence[:14]}</a>' for i in range(14))
    top = "".join(f'<a href="/t{i}">{sentence[:8]}</a>' for i in range(6))
    return f"""<!DOCTYPE html><html lang="{lang}" dir="{direction}"><head><meta charset="utf-8"><style>
body {{ margin: 0; font: 18px/1.6 sans-serif; }}
.top {{ height: 90px; background: #234; }} .top a {{ color: #fff; margin: 8px; }}
.wrap {{ display: flex; width: 1300px; margin: 20px auto; gap: 40px; }}
.col {{ width: 820px; }} .side {{ width: 360px; }} .side a {{ display: block; padding: 6px 0; }}
.bottom {{ height: 200px; background: #222; }}
.fix {{ position: fixed; left: 0; right: 0; bottom: 0; height: 300px; background: #ffd; }}
</style></head><body>
<div class="top">{top}</div>
<div class="wrap"><div class="col" id="c">{paras}</div><div class="side">{links}</div></div>
<div class="bottom"></div><div class="fix">{sentence} {sentence} {sentence}</div>
</body></html>"""


@pytest.fixture(scope="module")
def renderer() -> Iterator[Renderer]:
    with Renderer(window=(1920, 1080), timeout_s=15) as r:
        yield r


@pytest.mark.parametrize("preset", ["framework", "paper"])
def test_sample_article_found_without_navigation_comments_or_cookie_banner(renderer, preset):
    snap = parse_snapshot(renderer.render(str(SAMPLE)).raw)
    r = algorithms.run("gce", snap, {"preset": preset})
    assert len(r.nodes) == 1, r.message
    text = snap.text_of(r.nodes)
    assert "stood empty on the north pier" in text and "late opening on Thursdays" in text
    for boiler in ("Obituaries", "Storm closes coastal road", "We use cookies", "Will there be parking"):
        assert boiler not in text
    assert r.debug["removed"]["fixed_roots"], "the cookie banner is position: fixed"


def test_same_rendered_layout_in_five_scripts_gives_the_same_node(renderer, tmp_path):
    chosen = {}
    for lang in SENTENCES:
        page = tmp_path / f"{lang}.html"
        page.write_text(layout(lang), encoding="utf-8")
        snap = parse_snapshot(renderer.render(str(page)).raw)
        r = algorithms.run("gce", snap)
        assert len(r.nodes) == 1, (lang, r.message)
        assert snap.attrs["id"].get(r.nodes[0]) == "c", (lang, r.debug["winner"])
        chosen[lang] = r.nodes[0]
    assert len(set(chosen.values())) == 1, chosen
