"""The bench's real-page row (`centrum bench`'s last table) on pages served from 127.0.0.1 with the real extension
and host: a page that navigates itself away fails alone, and the pages after it are pressed and measured, each
press split by stage (the stages add up to the press) and the row's median split reported."""

from __future__ import annotations

import math
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from centrum.bench.benchmark import real_pages
from centrum.bench.pipeline import run_real_pages
from centrum.evaluation.peers import readability_js_extra

REPO = Path(__file__).resolve().parents[2]
# As a saved page whose script sends it to its https address (the bench's server speaks http only): an error page.
AWAY = """<!doctype html><html><head><title>Away</title>
<script>location.replace("https://" + location.host + "/elsewhere.html")</script></head>
<body><p>This page leaves before anyone reads it.</p></body></html>"""


def test_a_page_that_leaves_fails_alone(tmp_path: Path) -> None:
    pages = tmp_path / "set" / "pages"
    pages.mkdir(parents=True)
    shutil.copy(REPO / "tests/fixtures/sample/article.html", pages / "1.html")
    (pages / "2.html").write_text(AWAY, encoding="utf-8")
    shutil.copy(REPO / "tests/fixtures/pages/table-code.html", pages / "3.html")
    shutil.copy(REPO / "tests/fixtures/sample/article.html", pages / "4.html")
    # In a thread of its own: the bench drives Playwright's sync API, which refuses a thread where the suite's
    # pytest-playwright fixtures run an event loop.
    with ThreadPoolExecutor(1) as pool:
        report = pool.submit(run_real_pages, tmp_path, real_pages(tmp_path, 4),
                             readability_js_extra()["readability_js"], 30).result()
    rows = {r["page"]: r for r in report["pages"]}
    assert set(rows) == {f"set/pages/{k}.html" for k in range(1, 5)}
    left = rows["set/pages/2.html"]
    assert "error" in left or not math.isfinite(left.get("press_ms", math.nan)), left
    for k in (1, 3, 4):
        row = rows[f"set/pages/{k}.html"]
        assert "error" not in row and math.isfinite(row["press_ms"]) and row["readability_ms"] > 0, row
        split = row["split"]
        assert split["collect"] > 0 and split["algorithm"] > 0 and split["paint"] >= 0, split
        staged = sum(v for k, v in split.items() if k != "pack")  # pack is part of collect
        assert math.isclose(staged, row["press_ms"], abs_tol=1.0), (staged, row["press_ms"])
    assert report["measured"] == 3 and report["ratio_median"] > 0
    assert set(report["split_median"]) == set(rows["set/pages/1.html"]["split"])
