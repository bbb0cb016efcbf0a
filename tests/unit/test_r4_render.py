"""R4 on pages rendered by real headless Chromium with the extension's collector (no hand-built geometry)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from centrum import algorithms
from centrum.core.render import Renderer
from centrum.core.snapshot import parse_snapshot

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample" / "article.html"

SENTENCES = {
    "en": "The committee published its findings after a year of hearings across the region.",
    "ja": "委員会は地域全体での一年間の公聴会を経て調査結果を発表した。",
    "zh": "委员会在整个地区举行了一年的听证会后公布了调查结果。",
    "th": "คณะกรรมการเผยแพร่ผลการศึกษาหลังจากการรับฟังความคิดเห็นทั่วภูมิภาคเป็นเวลาหนึ่งปี",
}


def layout(lang: str) -> str:
    """Menu, content column with a related-links block inside it, link sidebar and footer; no semantic markup."""
    s = SENTENCES[lang]
    paras = "".join(f"<p>{s} {s} {s} {s}</p>" for _ in range(10))
    related = "".join(f'<a href="/r{i}">{s[:12]} {i}</a> ' for i in range(9))
    menu = "".join(f'<li><a href="/m{i}">{s[:6]}{i}</a></li>' for i in range(8))
    side = "".join(f'<div><a href="/s{i}">{s[:15]}</a></div>' for i in range(12))
    return f"""<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><style>
body {{ margin: 0; font: 18px/1.6 sans-serif; }} .wrap {{ display: flex; width: 1300px; margin: 0 auto; }}
.col {{ width: 820px; }} .side {{ width: 400px; }} ul {{ display: flex; list-style: none; gap: 12px; }}
</style></head><body>
<div class="top"><ul>{menu}</ul></div>
<div class="wrap"><div class="col" id="c">{paras}<div class="related" id="rel">{related}</div></div>
<div class="side" id="side">{side}</div></div>
<div class="bottom"><p>(c) 2026</p></div>
</body></html>"""


@pytest.fixture(scope="module")
def renderer() -> Iterator[Renderer]:
    with Renderer(window=(1920, 1080), timeout_s=15) as r:
        yield r


def test_sample_article_found_without_navigation_or_teasers(renderer):
    snap = parse_snapshot(renderer.render(str(SAMPLE)).raw)
    r = algorithms.run("r4", snap)
    assert r.nodes, r.message
    assert "stood empty on the north pier" in r.text and "late opening on Thursdays" in r.text
    for boiler in ("Obituaries", "Storm closes coastal road"):
        assert boiler not in r.text


@pytest.mark.parametrize("lang", list(SENTENCES))
def test_content_column_found_and_its_link_group_removed_in_four_scripts(renderer, tmp_path, lang):
    page = tmp_path / f"{lang}.html"
    page.write_text(layout(lang), encoding="utf-8")
    snap = parse_snapshot(renderer.render(str(page)).raw)
    r = algorithms.run("r4", snap)
    ids = {v: k for k, v in snap.attrs["id"].items()}
    chosen = r.debug["select"]["chosen"]
    assert ids["c"] in chosen, (lang, r.debug["cset"])
    # Nine related links, all of the block's words inside links: a link group (Algorithm 5) inside the column;
    # the sidebar, when it came along as a c-SET sibling of the column, is a link group of its own.
    removed = {e["node"] for e in r.debug["postprocess"]["removed"]}
    assert removed == {ids["rel"]} | ({ids["side"]} & set(chosen))
    assert SENTENCES[lang] in r.text
    assert f"{SENTENCES[lang][:12]} 0" not in r.text and SENTENCES[lang][:15] not in r.text.replace(SENTENCES[lang], "")
    # The kept content: the column's paragraphs, as the column itself now holds a removed block.
    assert len(r.nodes) == 10 and all(snap.parent[x] == ids["c"] for x in r.nodes)
