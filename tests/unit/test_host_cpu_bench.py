"""``centrum bench --host-cpu`` (centrum.bench.host_cpu): every stage of the host's press is reported in CPU time on
given snapshots, real pages come from render-cache entries, and the table and slopes are written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from helpers import goldens

from centrum.bench.host_cpu import cached_snapshots, format_host_cpu, press_stages, run_host_cpu

STAGES = ("parse", "features", "scorer", "blocks+output", "host")


def test_press_stages_cover_the_host_press() -> None:
    stages = press_stages(goldens.read_raw("product"))
    assert set(STAGES) <= set(stages) and all(v >= 0 for v in stages.values())
    assert {"zoning", "r4", "gce"} <= set(stages)  # the proposers the shipped models read, each timed


def test_report_rows_real_pages_and_slopes(tmp_path: Path) -> None:
    slugs = goldens.slugs()[:2]
    for k, slug in enumerate(slugs):  # render-cache entries ({"raw": snapshot, ...}) stand for the real pages
        with gzip.open(tmp_path / f"{k:02d}.json.gz", "wt", encoding="utf-8") as f:
            json.dump({"raw": goldens.read_raw(slug)}, f)
    (tmp_path / "broken.json.gz").write_bytes(b"not gzip")
    assert len(cached_snapshots(2, tmp_path)) == 2
    report = run_host_cpu([], 3, 1, {s: goldens.read_raw(s) for s in slugs}, cache=tmp_path)
    assert [r["page"] for r in report["rows"]] == slugs and "slopes" in report
    assert report["real"]["pages"] == 2  # the broken entry is left out
    assert report["real"]["host"]["p90"] >= report["real"]["host"]["median"] > 0
    table = format_host_cpu(report)
    assert "| parse ms |" in table and "2 cached real pages (p90)" in table and "log-log slopes" in table
