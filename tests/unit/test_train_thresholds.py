"""The site-CV report's block-threshold sweep: per-threshold means and wins, and the nested choice that picks each
fold's threshold on the other folds' pages only."""

from __future__ import annotations

import numpy as np

from centrum.commands import train
from centrum.training.records import PageRecord


def _record(ds: str, i: int, peer_f1: float) -> PageRecord:
    # Text gold: counts are AEB (tp, fp, fn) shares; a peer scored peer_f1 on every page.
    tp = peer_f1
    return PageRecord(ds, f"p{i}", "text", np.zeros((0, 1)), np.zeros(0), [], 1, (0.0, 0.0, 1.0),
                      extractors={"peer": (peer_f1, (tp, 1.0 - tp, 1.0 - tp))})


def _counts(f1: float) -> tuple[float, float, float]:
    return (f1, 1.0 - f1, 1.0 - f1)


def test_threshold_table_scores_each_threshold_and_validates_the_choice_per_fold() -> None:
    records = [_record(ds, i, 0.8) for ds in ("a", "b") for i in range(4)] + [_record("readability-testpages", 9, 1.0)]
    fold_of = {f"{r.dataset}/{r.id}": f"fold{int(r.id[1:]) % 2}" for r in records}
    sweep = []
    for t in train.THRESHOLD_SWEEP:
        # 0.55 is best on fold0's pages, 0.6 on fold1's; 0.4 ties with the peer; the rest are below it.
        per_page = {}
        for r in records:
            fold = fold_of[f"{r.dataset}/{r.id}"]
            best = 0.55 if fold == "fold0" else 0.6
            f1 = 0.95 if t == best else (0.8 if t == 0.4 else 0.7)
            per_page[f"{r.dataset}/{r.id}"] = _counts(f1)
        sweep.append(per_page)
    run = train._Run(records, [], None, None, ("peer",), {})  # type: ignore[arg-type]
    lines = train._threshold_table(run, sweep, fold_of)
    text = "\n".join(lines)
    rows = {line.split(" | ")[0].strip("| "): line for line in lines if line.startswith("| 0.")}
    assert set(rows) == {str(t) for t in train.THRESHOLD_SWEEP}
    assert "| 2 of 2 |" in rows["0.4"] and "| 0 of 2 |" in rows["0.45"]  # at the peer counts; readability-testpages not
    # Each fold gets the threshold that is best on the *other* fold: 0.6 for fold0, 0.55 for fold1, so every page
    # is scored 0.7 and no set reaches its peer; choosing on the same fold would have scored 0.95 everywhere.
    assert "fold0 0.6, fold1 0.55" in text
    assert "mean 0.7000, 0 of 2 sets" in text


def test_without_peers_no_set_is_counted_as_won() -> None:
    records = [_record("a", i, 0.8) for i in range(4)]
    fold_of = {f"{r.dataset}/{r.id}": f"fold{i % 2}" for i, r in enumerate(records)}
    sweep = [{f"{r.dataset}/{r.id}": _counts(0.9) for r in records} for _ in train.THRESHOLD_SWEEP]
    lines = train._threshold_table(train._Run(records, [], None, None, (), {}), sweep, fold_of)  # type: ignore[arg-type]
    assert all(" | - | " in line for line in lines if line.startswith("| 0."))
    assert "mean 0.9000 (no peer ran to compare with)." in "\n".join(lines)


def test_pages_out_rows_give_each_pages_cv_score_beside_its_peers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    records = [_record("a", i, 0.8) for i in range(3)]
    records[1].page_type, records[1].site, records[1].language = "product", "example.org", "de"
    final = {"a/p0": _counts(0.9), "a/p1": _counts(0.5)}  # p2 has no final output: scored as an empty answer
    fold_of = {"a/p0": "0", "a/p1": "1", "a/p2": "0"}
    rows = train.page_rows(train._Run(records, [], None, None, ("peer",), {}), final, fold_of,  # type: ignore[arg-type]
                           ["peer", "gce"])
    assert [(r["id"], r["ensemble"], r["peer"], r["fold"]) for r in rows] == [
        ("p0", 0.9, 0.8, "0"), ("p1", 0.5, 0.8, "1"), ("p2", 0.0, 0.8, "0")]
    assert rows[1]["page_type"] == "product" and rows[1]["site"] == "example.org" and rows[1]["language"] == "de"
    assert all("gce" not in r for r in rows)  # an extractor that did not run on the page has no column
    out = tmp_path / "pages.jsonl"
    train.write_page_rows(out, rows)
    import json

    assert [json.loads(line) for line in out.read_text().splitlines()] == rows


def test_pages_out_needs_cv(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from centrum import cli

    (tmp_path / "ds").mkdir()
    code = cli.main(["train", str(tmp_path / "ds"), "--pages-out", str(tmp_path / "p.jsonl")])
    assert code == 2 and "--pages-out writes the site-CV scores: add --cv" in capsys.readouterr().err
