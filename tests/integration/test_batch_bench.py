"""``centrum bench --batch``'s measurement and report on a small synthetic crawl: the extractors alone and the local
engine at one and two workers, real worker processes (no Ray needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from centrum.batch.bench import format_batch_table, run_batch_bench
from centrum.commands.bench import _write_report


@pytest.fixture(scope="module")
def report() -> dict:
    return run_batch_bench(source_pages=24, extractor_pages=12, actors=(1, 2), engines=("local",), progress=False,
                           rounds=3)


def test_every_run_extracts_every_page(report: dict) -> None:
    runs = report["runs"]
    assert [(r["engine"], r["actors"]) for r in runs] == [("local", 1), ("local", 2)]
    for r in runs:
        assert "error" not in r, r
        assert r["pages"] == 24 and r["failed"] == 0
        assert r["rows"] == 24 + 4  # the crawl's static records get rows too (skipped: not HTML)
        assert r["steady_pages_per_s"] > 0 and r["seconds"] > 0
    assert runs[0]["speedup"] == 1.0 and runs[1]["speedup"] > 0


def test_extractors_are_timed_on_the_same_pages(report: dict) -> None:
    by_name = {e["extractor"]: e for e in report["extractors"]}
    assert by_name["source"]["pages"] == 12 and by_name["source"]["empty"] == 0
    assert by_name["source"]["cpu_ms_per_page"] > 0
    for name in ("trafilatura", "resiliparse"):  # both in the test install: CPU is compared with resiliparse
        assert by_name[name]["pages"] == 12
    assert by_name["resiliparse"]["cpu_ratio"] == pytest.approx(1.0)
    assert by_name["source"]["cpu_ratio"] == pytest.approx(
        by_name["source"]["cpu_ms_per_page"] / by_name["resiliparse"]["cpu_ms_per_page"], rel=0.02)
    # three rounds; the reported one is the median by source's ratio, and every extractor's figures are its
    rounds = by_name["source"]["cpu_ratio_rounds"]
    assert len(rounds) == 3 and by_name["source"]["cpu_ratio"] == sorted(rounds)[1]
    assert by_name["resiliparse"]["cpu_ratio_rounds"] == [1.0, 1.0, 1.0]
    assert len(by_name["trafilatura"]["cpu_ratio_rounds"]) == 3


def test_report_files_hold_the_table_and_the_numbers(report: dict, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    table = format_batch_table(report)
    assert _write_report(tmp_path, "batch", report, table) == 0
    assert capsys.readouterr().out.strip() == table
    assert (tmp_path / "batch.md").read_text(encoding="utf-8") == table + "\n"
    assert json.loads((tmp_path / "batch.json").read_text(encoding="utf-8"))["runs"] == report["runs"]
    lines = table.splitlines()
    assert sum(line.startswith("| no-render | local | source |") for line in lines) == 2
    source_row = next(line for line in lines if line.startswith("| source | 12 | 0 |"))
    assert "(rounds: " in source_row and source_row.count(", ") == 2
