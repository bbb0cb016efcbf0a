"""`centrum bench --api` as a real subprocess on a two-page data set made of the fixtures: the table it prints and the
figures it writes (never judged for speed: the bench reports)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_api_reports_the_api_on_one_browser(tmp_path: Path) -> None:
    pages = tmp_path / "fixtures-set" / "pages"
    pages.mkdir(parents=True)
    shutil.copy(REPO / "tests/fixtures/sample/article.html", pages / "a.html")
    shutil.copy(REPO / "tests/fixtures/pages/table-code.html", pages / "b.html")
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "centrum.cli", "bench", "--api", "--datasets", str(pages.parent),
                        str(REPO / "README.md"), "--pages", "2", "--out", str(out)],
                       capture_output=True, text=True, timeout=600, cwd=REPO)
    assert p.returncode == 0, p.stderr
    assert "2 pages from 1 data set (fixtures-set)" in p.stdout
    for row in ("extract(): first call (starts the browser)", "extract(): median of the next 1 calls",
                "extract_many(workers=2): pages/s", "render=False (source model, 1 worker): pages/s",
                "trafilatura.extract, same pages: pages/s"):
        assert f"| {row} |" in p.stdout
    report = json.loads((out / "api.json").read_text(encoding="utf-8"))
    assert report["pages"] == 2 and report["extract_calls"]["failed"] == 0
    assert report["extract_many"]["failed"] == 0 and report["extract_many"]["pages_per_s"] > 0
    assert report["source_only"]["failed"] == 0 and report["trafilatura"]["pages_per_s"] > 0
    assert (out / "api.md").read_text(encoding="utf-8") == p.stdout
    bad = subprocess.run([sys.executable, "-m", "centrum.cli", "bench", "--api"], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert bad.returncode == 2 and "--api needs --datasets" in bad.stderr
