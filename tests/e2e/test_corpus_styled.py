"""``centrum corpus styled`` with the real engines: every theme builds, every page loads in real Chromium with no
blocked or failed request and counts as styled, the inserted body is on the page word for word, and two builds are
the same bytes. Bodies come from a small data set made here (with markup characters every engine must leave
alone), so this runs without the shared data sets.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from centrum.cli import main
from centrum.core.render import Renderer
from centrum.corpus.engines import THEMES, available
from centrum.evaluation.runner import render_class
from centrum.gold.datasets import load_dataset

TEXTS = [
    ["Council approves the new harbour plan",
     "The city council approved on Tuesday a plan to rebuild the old harbour, after three years of debate "
     "about its cost and its effect on the fishing fleet.",
     "What the plan includes",
     "The plan covers the *north pier*, the `ferry terminal` and a new_path for cyclists; costs are 4 < 5 & "
     "\"rising\" -- say critics, who call it a 'folly'.",
     "- new breakwater along the north side",
     "- 1.2 km of cycle lanes",
     "- a market hall for the fishing cooperative",
     "Work starts next spring and should end in 2027, the mayor said at a press conference in the town hall."],
    ["Flu season arrives early this year",
     "Doctors in the region report that the flu season has started four weeks earlier than usual, with "
     "schools the first to see absences rise sharply.",
     "1. Wash hands often and stay home with a fever, officials advise every resident this week.",
     "Vaccination centres will open on Saturdays until the end of January to meet demand from families.",
     "Health officials said hospital capacity is sufficient for now, but asked people to avoid emergency "
     "rooms for mild symptoms |like a cold| and to call their doctor first."],
    ["Library reopens after renovation",
     "After eighteen months of work the central library reopened its doors with a new reading room, a "
     "children's floor and longer opening hours on weekdays.",
     "Visitors queued from early morning; the first hundred received a tote bag and a voucher for the café.",
     "The renovation cost less than planned because the roof could be repaired instead of replaced, the "
     "architect explained to the council's building committee."],
]
ENGINES = sorted(THEMES)
PER_ENGINE = {e: 2 * len(THEMES[e]) for e in ENGINES}  # two pages for each theme


def _source_set(root: Path) -> Path:
    ds = root / "datasets" / "mini"
    (ds / "pages").mkdir(parents=True)
    (ds / "gold").mkdir()
    rows = []
    for i, lines in enumerate(TEXTS):
        (ds / "pages" / f"p{i}.html").write_text(f"<html><body>{lines[1]}</body></html>", encoding="utf-8")
        (ds / "gold" / f"p{i}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        rows.append({"id": f"p{i}", "language": "en", "url": f"https://news{i}.co.uk/a"})
    (ds / "meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root / "datasets"


def _engines() -> list[str]:
    missing = {e: why for e in ENGINES if (why := available(e))}
    if missing and os.environ.get("CI"):
        pytest.fail(f"engines missing in CI: {missing}")
    if missing:
        pytest.skip(f"engines not installed here: {missing}")
    return ENGINES


def _build(root: Path, out: Path, engine: str) -> int:
    os.environ["CENTRUM_CACHE"] = str(root / "cache")
    return main(["corpus", "styled", "--out", str(out), "--datasets", str(root / "datasets"), "--engines", engine,
                 "--limit-per-engine", str(PER_ENGINE[engine]), "--languages", "en", "--seed", "7"])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("styled")
    _source_set(root)
    old = os.environ.get("CENTRUM_CACHE")
    try:
        for engine in _engines():
            for name in ("a", "b"):
                assert _build(root, root / name / engine, engine) == 0
    finally:
        if old is None:
            os.environ.pop("CENTRUM_CACHE", None)
        else:
            os.environ["CENTRUM_CACHE"] = old
    return root / "a", root / "b"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_theme_builds_and_two_builds_are_byte_identical(corpus: tuple[Path, Path]) -> None:
    a, b = corpus
    for engine in ENGINES:
        rows = [json.loads(x) for x in (a / engine / "meta.jsonl").read_text(encoding="utf-8").splitlines()]
        assert {r["theme"] for r in rows} == set(THEMES[engine])
        assert all(r["source_set"] == "mini" and r["source_site"].startswith("news") for r in rows)
        fa, fb = _files(a / engine), _files(b / engine)
        assert fa.keys() == fb.keys()
        differ = [k for k in fa if fa[k] != fb[k]]
        assert not differ, f"{engine}: rebuild changed {differ[:5]}"


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_every_page_loads_offline_styled_with_its_body_intact(corpus: tuple[Path, Path]) -> None:
    a, _ = corpus
    text_of = {"text": "() => document.body.textContent"}
    with Renderer(timeout_s=20) as r:
        for engine in ENGINES:
            ds = load_dataset(a / engine)
            assert len(ds.pages) == PER_ENGINE[engine]
            for item in ds.pages:
                out = r.render(item.html_path, extra=text_of)
                where = f"{engine}/{item.id}"
                assert out.blocked == 0 and out.failed == [], f"{where}: blocked or failed: {out.failed}"
                assert render_class(out.stylesheets) == "styled", f"{where}: {out.stylesheets}"
                page = _norm(out.extra["text"])
                assert item.gold.text is not None
                for line in item.gold.text.splitlines():
                    assert _norm(line) in page, f"{where}: gold line not on the page: {line!r}"
                assert item.meta["title"] in page
                assert not re.search(r"[“”‘’–—]", page.split("comments")[0]), f"{where}: typography changed text"


def test_stylesheets_blocked_render_is_unstyled(corpus: tuple[Path, Path]) -> None:
    a, _ = corpus
    item = load_dataset(a / "sphinx").pages[0]
    with Renderer(block_stylesheets=True) as r:
        out = r.render(item.html_path)
    assert out.stylesheets["loaded"] == 0 and out.stylesheets["failed"] > 0
    assert render_class(out.stylesheets) == "unstyled"
    assert any("stylesheets off" in w for w in out.warnings)


def test_eval_styles_both_reports_each_extractor_on_both_renders(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = corpus
    out, cache = tmp_path / "eval", tmp_path / "snapshots"
    code = main(["eval", str(a / "pelican"), "--styles", "both", "--algorithms", "gce,zoning", "--peers",
                 "wholepage", "--out", str(out), "--cache", str(cache)])
    assert code == 0
    n = len(load_dataset(a / "pelican").pages)
    on = [json.loads(x) for x in (out / "styles-on" / "pages.jsonl").read_text(encoding="utf-8").splitlines()]
    off = [json.loads(x) for x in (out / "styles-off" / "pages.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(on) == len(off) == n
    assert {p["render_class"] for p in on} == {"styled"} and {p["render_class"] for p in off} == {"unstyled"}
    # Each page has two cache entries: the blocked render never overwrites (or is served as) the styled one.
    assert len(list(cache.glob("*.json.gz"))) == 2 * n
    result = json.loads((out / "styles.json").read_text(encoding="utf-8"))
    assert set(result["extractors"]) == {"gce", "zoning", "wholepage"}
    for e, row in result["extractors"].items():
        assert row["pages"] == n
        assert abs(row["diff"] - (row["f1_on"] - row["f1_off"])) < 1e-9, e
    table = (out / "styles.md").read_text(encoding="utf-8")
    assert "| gce |" in table and "| zoning |" in table
