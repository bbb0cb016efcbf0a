"""HTML zoning on pages laid out by real Chromium: computed display, real boxes and text rectangles."""

from __future__ import annotations

from pathlib import Path

import pytest

from centrum import algorithms
from centrum.core.snapshot import parse_snapshot

TEXTS = {
    "en": ("The committee published its findings after a year of hearings across the region. "
           "Researchers measured the effect on small farms and found a steady rise in yields."),
    "zh": "委员会在全区举行了一年的听证会后公布了调查结果。研究人员测量了对小农场的影响，发现产量稳步上升。",
    "ar": ("نشرت اللجنة نتائجها بعد عام من جلسات الاستماع في جميع أنحاء المنطقة. "
           "قاس الباحثون التأثير على المزارع الصغيرة ووجدوا ارتفاعا مطردا في المحاصيل."),
    "hi": ("समिति ने पूरे क्षेत्र में एक वर्ष की सुनवाई के बाद अपने निष्कर्ष प्रकाशित किए। "
           "शोधकर्ताओं ने छोटे खेतों पर प्रभाव को मापा और पैदावार में लगातार वृद्धि पाई।"),
}

PAGE = """<!doctype html><html lang="{lang}" dir="{dir}"><head><meta charset="utf-8"><title>t</title><style>
body {{ margin: 0; font: 16px/1.5 sans-serif; }}
header a {{ display: inline-block; margin: 8px; }}
.wrap {{ display: flex; width: 1100px; margin: 0 auto; }}
main {{ width: 720px; }}
aside {{ width: 320px; margin-inline-start: 40px; font-size: 14px; }}
aside a {{ display: block; }}
footer {{ background: #222; color: #ddd; padding: 20px; }}
</style></head><body>
<header><a href="#">Home</a><a href="#">World</a><a href="#">Sport</a><a href="#">Video</a></header>
<div class="wrap">
  <main id="main"><h1>Headline</h1>{paras}<div class="byline">Filed by a reporter<br>Updated today</div></main>
  <aside><a href="#">Related one</a><a href="#">Related two</a><a href="#">Related three</a>
    <p>{text}</p></aside>
</div>
<footer><a href="#">About</a> · <a href="#">Contact</a> · © 2026</footer>
</body></html>"""


@pytest.mark.parametrize("lang", list(TEXTS))
def test_zoning_finds_the_main_column_of_a_rendered_two_column_page(renderer, tmp_path: Path, lang: str) -> None:
    text = TEXTS[lang]
    html = PAGE.format(lang=lang, dir="rtl" if lang == "ar" else "ltr", text=text,
                       paras="".join(f"<p>{text}</p>" for _ in range(6)))
    page = tmp_path / f"zoning-{lang}.html"
    page.write_text(html, encoding="utf-8")
    snap = parse_snapshot(renderer.render(page, source=False).raw)
    main = [i for i, v in enumerate(snap.attr("id")) if v == "main"]
    r = algorithms.run("zoning", snap)
    assert r.nodes == main, (r.message, r.debug["path"])
    assert r.text is not None and r.text.startswith("Headline") and "Related one" not in r.text
    # Six paragraphs in <main>, one in the aside; headline, byline, menus and footer are not paragraphs.
    assert r.debug["paragraph_zones"] == 7
