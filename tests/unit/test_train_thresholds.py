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
