"""End to end: the real ``centrum eval`` process on the bundled tiny data set, real Chromium and renderer."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from centrum import algorithms
from centrum.algorithms import BASE_ALGORITHMS
from centrum.algorithms.ensemble import blocks as B
from centrum.algorithms.ensemble import features as F
from centrum.algorithms.ensemble import proposers_of, trained_names
from centrum.algorithms.ensemble.model import load_model_file

REPO = Path(__file__).resolve().parents[2]
TINYSET = REPO / "tests" / "fixtures" / "tinyset"


def centrum_eval(out: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "centrum.cli", "eval", str(TINYSET), "--out", str(out), "--cache", str(cache),
           "--algorithms", "all", "--peers", "trafilatura,readability_lxml,readability_js,wholepage", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("eval")
    out, cache = root / "out", root / "snapshots"
    proc = centrum_eval(out, cache, "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, cache, proc


def rows(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (out / "results.csv").open(encoding="utf-8") as f:
        return {(r["id"], r["extractor"]): r for r in csv.DictReader(f)}


def test_every_page_and_extractor_is_scored(first_run: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    out, _, _ = first_run
    table = rows(out)
    extractors = {e for _, e in table}
    assert {"trafilatura", "readability_lxml", "wholepage", "semantic"} <= extractors
    if shutil.which("npm"):
        assert "readability_js" in extractors
    assert len(table) == 3 * len(extractors)
    # Styled = its stylesheet loaded and none failed; a missing stylesheet or none at all = unstyled.
    assert table[("styled-article", "semantic")]["render_class"] == "styled"
    assert table[("unstyled-divs", "semantic")]["render_class"] == "unstyled"
    assert table[("ja-article", "semantic")]["render_class"] == "unstyled"


def test_scores_follow_the_pages(first_run: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    out, _, _ = first_run
    table = rows(out)
    # <article> / <main> hold exactly the gold: the semantic baseline is (nearly) perfect there ...
    assert float(table[("styled-article", "semantic")]["f1"]) > 0.95
    assert float(table[("ja-article", "semantic")]["f1"]) > 0.95
    # ... and has no answer on the <div>-only page: scored 0 and listed as a failure, not dropped.
    assert float(table[("unstyled-divs", "semantic")]["f1"]) == 0.0
    assert table[("unstyled-divs", "semantic")]["failure"] == "empty"
    with (out / "failures.csv").open(encoding="utf-8") as f:
        fails = {(r["id"], r["extractor"]) for r in csv.DictReader(f)}
    assert ("unstyled-divs", "semantic") in fails
    # The whole-page baseline keeps all the gold but also the navigation and footer.
    whole = table[("styled-article", "wholepage")]
    assert float(whole["r"]) == 1.0 and float(whole["p"]) < 0.95
    if ("styled-article", "readability_js") in table:
        assert float(table[("styled-article", "readability_js")]["f1"]) > 0.8
    # Node-level gold (meta node_paths, the <article>) found again in the render: semantic picks exactly it,
    # the whole-page text has no nodes to compare.
    assert float(table[("styled-article", "semantic")]["node_f1"]) == 1.0
    assert table[("styled-article", "wholepage")]["node_f1"] == ""
    assert table[("unstyled-divs", "semantic")]["node_f1"] == ""  # no node gold on that page
    # Japanese is scored by character: thousands of characters would be "one word" otherwise.
    assert int(table[("ja-article", "semantic")]["gold_tokens"]) > 100


def test_report_files(first_run: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    out, _, proc = first_run
    report = (out / "report.md").read_text(encoding="utf-8")
    for heading in ("## All pages", "## Styled renders", "## Unstyled renders", "## Time per page (ms)",
                    "## Failures (scored 0)", "### Per language", "ja (1)", "### DOM-node F1 (all)"):
        assert heading in report
    # Registered algorithms that cannot load are reported, not silently skipped.
    for name in set(algorithms.REGISTRY) - set(algorithms.available()):
        assert f"`{name}`" in report.split("## All pages")[0]
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["summary"]["render"]["pages"] == 3
    assert doc["summary"]["datasets"]["all"]["tinyset"]["semantic"]["pages"] == 3
    for plot in ("f1_per_dataset.png", "precision_recall.png", "time_vs_size.png"):
        assert (out / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "mean F1" in proc.stdout


def test_second_run_reuses_the_snapshot_cache(first_run: tuple[Path, Path, subprocess.CompletedProcess[str]],
                                              tmp_path: Path) -> None:
    _, cache, _ = first_run
    assert len(list(cache.glob("*.json.gz"))) == 3
    proc = centrum_eval(tmp_path / "out2", cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads((tmp_path / "out2" / "results.json").read_text(encoding="utf-8"))
    assert doc["summary"]["render"]["from_cache"] == 3
    assert "snapshots from cache: 3" in (tmp_path / "out2" / "report.md").read_text(encoding="utf-8")


def test_bad_dataset_is_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "centrum.cli", "eval", str(tmp_path / "missing")],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 2
    assert "does not exist" in proc.stderr


def test_a_page_that_hangs_the_browser_is_a_failure_and_the_run_goes_on(tmp_path: Path) -> None:
    ds = tmp_path / "hangset"
    (ds / "pages").mkdir(parents=True)
    (ds / "gold").mkdir()
    # The loop never yields: "load" never fires and the collector can never run in that renderer.
    (ds / "pages" / "a-hang.html").write_text("<p>before the loop</p><script>while (true) {}</script>")
    (ds / "gold" / "a-hang.txt").write_text("before the loop")
    (ds / "pages" / "b-ok.html").write_text("<nav>Home | News</nav><article><p>A normal page whose paragraph of "
                                            "text is the gold.</p></article><footer>Contact</footer>")
    (ds / "gold" / "b-ok.txt").write_text("A normal page whose paragraph of text is the gold.")
    cmd = [sys.executable, "-m", "centrum.cli", "eval", str(ds), "--out", str(tmp_path / "out"), "--cache",
           str(tmp_path / "snaps"), "--timeout", "2", "--page-timeout", "20", "--algorithms", "semantic",
           "--peers", "wholepage"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = rows(tmp_path / "out")
    hang = table[("a-hang", "semantic")]
    assert hang["failure"] == "crash" and "timed out" in hang["error"] and float(hang["f1"]) == 0.0
    # The worker (and its browser) was replaced: the next page is rendered and scored normally.
    assert table[("b-ok", "semantic")]["failure"] == ""
    assert float(table[("b-ok", "semantic")]["f1"]) > 0.9


def test_resume_keeps_finished_pages(first_run: tuple[Path, Path, subprocess.CompletedProcess[str]],
                                     tmp_path: Path) -> None:
    out, cache, _ = first_run
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    journal = (copy / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(journal) == 3
    # Keep two finished pages and half of the third line, as a run killed mid-write leaves it.
    (copy / "pages.jsonl").write_text("\n".join(journal[:2]) + "\n" + journal[2][: len(journal[2]) // 2])
    proc = centrum_eval(copy, cache, "--resume")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 pages taken from" in proc.stderr
    assert len((copy / "pages.jsonl").read_text(encoding="utf-8").splitlines()) == 3
    assert json.loads((copy / "results.json").read_text(encoding="utf-8"))["summary"]["render"]["pages"] == 3
    assert rows(copy).keys() == rows(out).keys()


def test_train_on_the_tiny_set_twice_writes_the_same_model_bytes(
        first_run: tuple[Path, Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """`centrum train` from the eval's snapshot cache: LightGBM runs deterministic, so a retrain (records
    recomputed) and one from the cached Parquet records write byte-identical candidate and block models; --cv prints
    the site-grouped table."""
    _, cache, _ = first_run
    env = {**os.environ, "CENTRUM_CACHE": str(tmp_path / "records")}

    def train(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "centrum.cli", "train", str(TINYSET), "--cache", str(cache),
                               "--peers", "none", "--out", str(out), *extra], capture_output=True, text=True,
                              timeout=600, cwd=REPO, env=env)

    first = train(tmp_path / "a.lgb.txt", "--cv", "--folds", "2")
    assert first.returncode == 0, first.stderr[-3000:]
    second = train(tmp_path / "b.lgb.txt", "--no-record-cache")
    assert second.returncode == 0, second.stderr[-3000:]
    third = train(tmp_path / "c.lgb.txt", "--models-only")  # every record read back from its Parquet tables
    assert third.returncode == 0, third.stderr[-3000:]
    assert len(list((tmp_path / "records" / "ensemble" / "candidates").glob("*.parquet"))) == 3
    a, b = (tmp_path / "a.lgb.txt").read_bytes(), (tmp_path / "b.lgb.txt").read_bytes()
    assert a.startswith(b"tree\n") and a == b == (tmp_path / "c.lgb.txt").read_bytes()
    assert (tmp_path / "a-blocks.lgb.txt").read_bytes() == (tmp_path / "b-blocks.lgb.txt").read_bytes() \
        == (tmp_path / "c-blocks.lgb.txt").read_bytes()
    assert "## Site-grouped 2-fold cross-validation" in first.stdout and "| tinyset |" in first.stdout
    assert "### Per language" in first.stdout and "| ja |" in first.stdout
    assert "### Block threshold (site CV, final outputs)" in first.stdout and "Nested: each fold at" in first.stdout
    # --cv site: the site-grouped tables alone (no in-sample, no leave-one-data-set-out), the same models.
    site = train(tmp_path / "s.lgb.txt", "--cv", "site", "--folds", "2", "--pages-out", str(tmp_path / "pages.jsonl"))
    assert site.returncode == 0, site.stderr[-3000:]
    # --pages-out: one row per page of the site CV, its fold and the ensemble's F1 beside every algorithm's.
    rows = [json.loads(line) for line in (tmp_path / "pages.jsonl").read_text().splitlines()]
    ids = sorted(p.stem for p in (TINYSET / "pages").glob("*.html"))
    assert sorted(r["id"] for r in rows) == ids and {r["fold"] for r in rows} == {"fold0", "fold1"}
    assert all(0.0 <= r["ensemble"] <= 1.0 and "gce" in r and r["dataset"] == "tinyset" for r in rows)
    assert "## Site-grouped 2-fold cross-validation" in site.stdout and "in-sample" not in site.stdout
    assert "Leave-one-data-set-out" not in site.stdout and "Leave-one-data-set-out" in first.stdout
    assert (tmp_path / "s.lgb.txt").read_bytes() == (tmp_path / "a.lgb.txt").read_bytes()
    # Without zoning: records of their own (a key of their own), and models that run without it.
    fourth = train(tmp_path / "d.lgb.txt", "--models-only", "--without", "zoning")
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert len(list((tmp_path / "records" / "ensemble" / "candidates").glob("*.parquet"))) == 6
    no_zoning = tuple(a for a in BASE_ALGORITHMS if a != "zoning")
    assert proposers_of(load_model_file(tmp_path / "d.lgb.txt"), load_model_file(tmp_path / "d-blocks.lgb.txt")) \
        == no_zoning
    # The default leaves the DANA family out (ensemble-v15's recipe); --without none keeps every base algorithm.
    no_dana = tuple(a for a in BASE_ALGORITHMS if a not in ("dana", "danag", "addanag"))
    assert proposers_of(load_model_file(tmp_path / "a.lgb.txt"), load_model_file(tmp_path / "a-blocks.lgb.txt")) \
        == no_dana
    every = train(tmp_path / "g.lgb.txt", "--models-only", "--without", "none")
    assert every.returncode == 0, every.stderr[-3000:]
    assert proposers_of(load_model_file(tmp_path / "g.lgb.txt")) == BASE_ALGORITHMS
    bad = train(tmp_path / "e.lgb.txt", "--models-only", "--without", "zonin")
    assert bad.returncode == 2 and "--without zonin: not a base algorithm" in bad.stderr
    # A folder given as --out is refused before any page record is made (not after minutes of work).
    folder = train(tmp_path, "--models-only")
    assert folder.returncode == 2 and "is a folder; give the model file's path" in folder.stderr, folder.stderr
    assert "Traceback" not in folder.stderr
    # The former recipe (ensemble-v13's: feature set v13, shingle labels): records of their own (the labels are in
    # the key), models that read v13's columns only; the default (v14, node-level labels) reads the shape features
    # after them.
    v13 = train(tmp_path / "f.lgb.txt", "--models-only", "--feature-set", "v13", "--block-labels", "shingles")
    assert v13.returncode == 0, v13.stderr[-3000:]
    assert len(list((tmp_path / "records" / "ensemble" / "candidates").glob("*.parquet"))) == 12
    assert load_model_file(tmp_path / "f.lgb.txt").feature_names == trained_names(F.feature_names("v13"), no_dana)
    assert load_model_file(tmp_path / "f-blocks.lgb.txt").feature_names \
        == trained_names(B.feature_names("v13"), no_dana)
    assert load_model_file(tmp_path / "a.lgb.txt").feature_names == trained_names(F.feature_names("v14"), no_dana)
    assert load_model_file(tmp_path / "a-blocks.lgb.txt").feature_names \
        == trained_names(B.feature_names("v14"), no_dana)
