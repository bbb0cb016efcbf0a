"""`centrum eval --metadata` (centrum.evaluation.metadata_eval): a small data set in the shared layout, built here
from the metadata fixture pages (one of them gzipped as in wcxb-dev2), scored for Centrum and the real peers
trafilatura and htmldate; the scoring rules on hand-made answers; the message for a missing data set."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from centrum.cli import main
from centrum.evaluation.metadata_eval import MetadataDataError, author_f1, evaluate, load_pages, score, summary

PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"
GOLD = [
    ("meta-date-past-midnight", "https://courier.example.org/night-trains", "article",
     {"title": "Night trains return to the coast line", "author": "Rhian Price", "publish_date": "2026-07-19"}),
    ("meta-text-date", "https://trailnotes.example.org/rain-jackets", "article",
     {"title": "Choosing a rain jacket for hill walking", "author": "Sean Peek", "publish_date": "2025-11-12"}),
    ("meta-no-title", "http://127.0.0.1:8000/meta-no-title.html", "service",
     {"title": "Harbour ferry timetable changes for winter", "author": None, "publish_date": None}),
]


def make_dataset(root: Path) -> Path:
    (root / "pages").mkdir(parents=True)
    (root / "gold").mkdir()
    lines = []
    for k, (name, url, kind, gold) in enumerate(GOLD):
        data = (PAGES / f"{name}.html").read_bytes()
        if k == 0:  # wcxb-dev2 keeps its pages gzipped
            (root / "pages" / f"p{k}.html.gz").write_bytes(gzip.compress(data))
        else:
            (root / "pages" / f"p{k}.html").write_bytes(data)
        (root / "gold" / f"p{k}.txt").write_text("main text", encoding="utf-8")  # the layout's; unused here
        lines.append(json.dumps({"id": f"p{k}", "url": url, "page_type": kind, **gold}))
    (root / "meta.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_metadata_table_for_centrum_and_peers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(tmp_path / "cache"))
    root = make_dataset(tmp_path / "set")
    pages = load_pages([root])
    assert [p.path.name for p in pages] == ["p0.html.gz", "p1.html", "p2.html"] and pages[0].html().startswith(b"<!")
    table, results = evaluate([root], ["trafilatura", "htmldate"])
    every = results["groups"]["all"]
    assert every["centrum"]["title"] == 1.0 and every["centrum"]["author"] == 1.0
    assert every["centrum"]["date"] == 1.0 and every["centrum"]["date_false"] == 0.0
    assert every["centrum"]["gold"] == {"title": 3, "author": 2, "date": 2, "no_date": 1}
    assert set(every) == {"centrum", "trafilatura", "htmldate"} and "title_diff" in every["trafilatura"]
    assert set(results["groups"]) == {"all", "set", "article", "service"}
    assert table.startswith("| pages | extractor | title exact |") and "| centrum | 100.0 % |" in table
    # The peers' answers are cached by page: a second run reads them back.
    assert any((tmp_path / "cache" / "metadata-peers").glob("trafilatura-*.jsonl"))
    assert evaluate([root], ["trafilatura", "htmldate"])[0] == table


def test_scores_count_what_could_go_wrong() -> None:
    pages = load_pages([make_dataset(Path(__import__("tempfile").mkdtemp()) / "s")])
    answers = [{"title": "night trains return to the  coast line", "author": "By Rhian Price", "date": "2026-07-18"},
               {"title": "Choosing a rain jacket", "author": None, "date": "2025-11-12T23:00:00-05:00"},
               {"title": "Harbour ferry timetable changes for winter", "author": "Admin", "date": "2020-01-01"}]
    s = score(pages, answers)
    assert s.title_ok.tolist() == [1.0, 0.0, 1.0]  # case and spaces do not count, a shorter title does
    assert s.date_ok[:2].tolist() == [0.0, 1.0]  # the day as written, not converted
    assert np.isnan(s.date_false[:2]).all() and s.date_false[2] == 1.0
    m = summary({"centrum": s}, np.arange(3))["centrum"]
    # author: precision over the 2 pages naming someone (0.8 + 0), recall over the 2 gold names (0.8 + 0)
    assert m["author_p"] == pytest.approx(0.4) and m["author_r"] == pytest.approx(0.4)
    assert author_f1("Jared Newman, Sam Singleton", "Jared Newman and Sam Singleton") == pytest.approx(8 / 9)


def test_missing_data_set_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(MetadataDataError, match="does not exist.*../shared/datasets"):
        load_pages([tmp_path / "absent"])
    assert main(["eval", str(tmp_path / "absent"), "--metadata", "--out", str(tmp_path / "o")]) == 2
    assert "absent: data set folder does not exist" in capsys.readouterr().err
    bare = make_dataset(tmp_path / "bare")
    (bare / "meta.jsonl").write_text('{"id": "p0"}\n', encoding="utf-8")  # a text-only data set
    with pytest.raises(MetadataDataError, match="no metadata gold"):
        load_pages([bare])


def test_centrum_reads_the_cached_render_when_there_is_one(tmp_path: Path) -> None:
    from helpers import goldens

    from centrum.evaluation.cache import SnapshotCache, snapshot_key
    from centrum.evaluation.metadata_eval import WINDOW, centrum_answer

    slug = "date-past-midnight"
    html = (goldens.PAGES / slug / "page.html").read_bytes()
    url = "https://herald.example.org/night-buses"
    cache = SnapshotCache(tmp_path / "snapshots")
    assert centrum_answer(html, url, cache)[1] is False  # nothing cached: the source
    raw = goldens.read_raw(slug)
    raw["page"]["url"] = "file:///pages/date-past-midnight.html"  # as `centrum eval` renders a saved page
    cache.dir.mkdir()
    cache.store(snapshot_key(html, WINDOW, {}), {"raw": raw})
    answer, rendered = centrum_answer(html, url, cache)
    assert rendered and answer == {"title": "Night buses return to the harbour line", "author": "Anna Kovacs",
                                   "date": "2025-07-19T00:30:00+01:00"}
    raw["page"]["url"] = "chrome-error://chromewebdata/"  # a script sent the page away: its render is not the page's
    cache.store(snapshot_key(html, WINDOW, {}), {"raw": raw})
    assert centrum_answer(html, url, cache)[1] is False
