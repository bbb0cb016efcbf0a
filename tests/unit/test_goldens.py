"""Golden real-page cases (tests/pages/<slug>/): every algorithm's answer on stored Chromium snapshots of pages written
for the repository equals expected.json, and the default's Markdown equals expected.md. After an intended change:
`python tests/helpers/goldens.py --regenerate` and review the diff."""

from __future__ import annotations

import json
import re

import pytest
from helpers import goldens

from centrum import algorithms
from centrum.core.result import OVERLAY_KINDS

SLUGS = goldens.slugs()
REGENERATE = goldens.REGENERATE
# Algorithms that draw their own overlays (the debugger has nothing else to show for them).
DRAWN = ("semantic", "gce", "zoning", "r4", "dana", "danag", "addanag", "ensemble")


def expected(slug: str) -> dict[str, dict]:
    data: dict[str, dict] = json.loads((goldens.PAGES / slug / goldens.EXPECTED).read_text(encoding="utf-8"))
    return data


def test_the_pages_are_varied_and_were_rendered_from_their_source() -> None:
    assert len(SLUGS) >= 6
    langs = set()
    for slug in SLUGS:
        snap = goldens.load_snapshot(slug)
        html = (goldens.PAGES / slug / "page.html").read_text(encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", html, re.S)
        assert snap.page.title == (title.group(1).replace("&amp;", "&") if title else ""), slug
        assert snap.source and snap.n > 30 and snap.m > 10, slug
        langs.add(snap.page.lang.split("-")[0])
    assert {"en", "zh", "ar"} <= langs


@pytest.mark.parametrize("slug", SLUGS)
def test_answers_match_the_goldens(slug: str) -> None:
    want = expected(slug)
    names = set(algorithms.available())
    assert names <= set(want), f"{slug}: no golden answer for {sorted(names - set(want))}; run {REGENERATE}"
    assert set(want) <= set(algorithms.REGISTRY), f"{slug}: goldens of unknown algorithms; run {REGENERATE}"
    snap = goldens.load_snapshot(slug)
    diffs = []
    for name in sorted(names):
        got = goldens.answer(name, snap)
        if got != want[name]:
            diffs.append(f"{name}: expected {json.dumps(want[name], ensure_ascii=False)[:300]}\n"
                         f"{' ' * len(name)}  got      {json.dumps(got, ensure_ascii=False)[:300]}")
    assert not diffs, f"{slug} changed (if intended, run {REGENERATE} and review the diff):\n" + "\n".join(diffs)


@pytest.mark.parametrize("slug", SLUGS)
def test_markdown_matches_the_golden(slug: str) -> None:
    want = (goldens.PAGES / slug / goldens.EXPECTED_MD).read_text(encoding="utf-8")
    got = goldens.markdown(goldens.load_snapshot(slug))
    assert got == want, f"{slug}: the default's Markdown changed (if intended, run {REGENERATE} and review the diff)"


@pytest.mark.parametrize("slug", SLUGS)
def test_each_algorithm_draws_typed_overlays(slug: str) -> None:
    snap = goldens.load_snapshot(slug)
    for name in DRAWN:
        r = algorithms.run(name, snap)
        data = r.to_json()["overlays"]
        assert all(o["kind"] in OVERLAY_KINDS and ("nodes" in o) != ("box" in o) for o in data), name
        assert all(0 <= v < snap.n for o in data for v in o.get("nodes", [])), name
        assert all(len(o["box"]) == 4 for o in data if "box" in o), name
        answers = [o for o in data if o["kind"] == "answer"]
        if r.nodes:
            assert answers and {v for o in answers for v in o["nodes"]} <= set(r.nodes), name


META_SLUGS = [s for s in SLUGS if (goldens.PAGES / s / goldens.METADATA).is_file()]


def test_the_metadata_cases_have_golden_pages() -> None:
    # A page without <title>, a site suffix in another script (with the site's logo as its only <h1>), a story dated
    # past UTC midnight in its own zone, a date written only in the text, a thread whose posting item dates its
    # first post (the last reply shown first, replies' authors in Comment items), a post whose date sits next to its
    # <h2> headline while the blog's name is the <h1>.
    assert {"no-title-notice", "site-suffix-cjk", "date-past-midnight", "text-date-blog", "thread-first-post-date",
            "logo-heading-dated-post"} <= set(META_SLUGS)


@pytest.mark.parametrize("slug", META_SLUGS)
def test_metadata_matches_the_goldens(slug: str) -> None:
    want = json.loads((goldens.PAGES / slug / goldens.METADATA).read_text(encoding="utf-8"))
    got = goldens.metadata(slug)
    assert {k: got[k] for k in want} == want, slug


def test_regenerate_command_refuses_unknown_pages() -> None:
    with pytest.raises(SystemExit):
        goldens.main(["--regenerate", "no-such-page"])
    with pytest.raises(SystemExit):
        goldens.main([])
