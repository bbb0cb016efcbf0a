"""Page records as Parquet tables (``centrum train``'s record cache): exact round trips, named columns, misses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from centrum.algorithms.ensemble import blocks as B
from centrum.algorithms.ensemble import features as F
from centrum.training import learner as T
from centrum.training import records as R

NAMES, BLOCK_NAMES = F.feature_names(), B.feature_names()


def _records(pages: int = 24) -> list[R.PageRecord]:
    """Pages of two data sets with learnable candidates and blocks, values that are not short decimals (so a lossy
    round trip would show), NaN gold shares, a block group without rows, a page without blocks and one without
    candidates."""
    rng = np.random.default_rng(7)
    best_col, words = NAMES.index("semantic_exact"), BLOCK_NAMES.index("log_words")
    recs = []
    for p in range(pages):
        ds, k = ("a", "b")[p % 2], 3 + p % 5
        X = rng.random((k, len(NAMES))) / 3.0
        X[:, best_col] = 0.0
        X[p % k, best_col] = 1.0
        y = rng.random(k) / 2.0
        y[p % k] = 0.9 + rng.random() / 20.0
        counts = [tuple(float(v) for v in rng.random(3)) for _ in range(k)]
        rec = R.PageRecord(ds, f"{ds}{p}", "text", X, y, counts, 100 + p, (0.0, 0.0, 1.0),
                           {"r4": (float(y[0]), counts[0]), "semantic": (0.25, (0.5, 0.25, 0.25))})
        if p % 6 != 5:
            bX = rng.random((8, len(BLOCK_NAMES)))
            bX[:, words] = rng.integers(1, 6, 8)
            share = (bX[:, 0] > 0.5).astype(np.float64)
            share[p % 8] = np.nan  # unknown gold share (snippet gold holding neither kind of snippet)
            rec.blocks.append((p % k, bX, share))
            rec.blocks.append((0, np.zeros((0, len(BLOCK_NAMES))), np.zeros(0)))  # a candidate without blocks
        recs.append(rec)
    recs.append(R.PageRecord("b", "empty", "snippets", np.zeros((0, len(NAMES))), np.zeros(0), [], 3,
                             (0.0, 0.0, 0.0, 0.0), {"r4": (0.0, (0.0, 0.0, 0.0, 2.0))}))
    return recs


def assert_same(a: R.PageRecord, b: R.PageRecord) -> None:
    """Equal field for field and array for array: values bit for bit (NaN where NaN), shapes and dtypes."""
    def same(x: np.ndarray, y: np.ndarray) -> None:
        assert x.shape == y.shape and x.dtype == y.dtype
        assert x.tobytes() == y.tobytes()

    assert (a.dataset, a.id, a.kind, a.n_elements, a.empty) == (b.dataset, b.id, b.kind, b.n_elements, b.empty)
    same(a.X, b.X)
    same(a.y, b.y)
    assert a.counts == b.counts and a.extractors == b.extractors
    assert len(a.blocks) == len(b.blocks)
    for (ja, xa, sa), (jb, xb, sb) in zip(a.blocks, b.blocks, strict=True):
        assert ja == jb
        same(xa, xb)
        same(sa, sb)


def test_a_record_reads_back_equal_array_for_array(tmp_path: Path) -> None:
    recs = _records(12)
    for i, rec in enumerate(recs):
        R.store_record(tmp_path, f"k{i}", rec, NAMES, BLOCK_NAMES)
        got = R.load_record(tmp_path, f"k{i}", NAMES, BLOCK_NAMES)
        assert got is not None
        assert_same(got, rec)
    assert any(np.isnan(s).any() for r in recs for _, _, s in r.blocks)
    assert recs[5].blocks == [] and recs[-1].X.shape == (0, len(NAMES))


def test_a_model_trained_from_the_tables_is_byte_identical(tmp_path: Path) -> None:
    """The shipped models must be reproducible: records read from Parquet train the same model bytes (candidate
    scorer and block filter, LightGBM and stumps) as the records in memory."""
    recs = _records()
    for i, rec in enumerate(recs):
        R.store_record(tmp_path / "cache", f"k{i}", rec, NAMES, BLOCK_NAMES)
    loaded = [R.load_record(tmp_path / "cache", f"k{i}", NAMES, BLOCK_NAMES) for i in range(len(recs))]
    assert all(r is not None for r in loaded)
    for learner in ("lightgbm", "stumps"):
        opts = T.FitOptions(learner=learner, lgb_rounds=15, lgb_min_leaf=5, rounds=15, min_leaf=5, block_min_leaf=5)
        for name, fit in (("candidates", T.fit), ("blocks", T.fit_blocks)):
            suffix = ".lgb.txt" if learner == "lightgbm" else ".json"
            a, b = tmp_path / f"{learner}-{name}-mem{suffix}", tmp_path / f"{learner}-{name}-parquet{suffix}"
            fit(recs, opts).save(a)
            fit(loaded, opts).save(b)  # type: ignore[arg-type]
            assert a.read_bytes() == b.read_bytes(), (learner, name)


def test_the_tables_name_every_column_and_a_reader_does_not_depend_on_their_order(tmp_path: Path) -> None:
    recs = _records(3)
    for i, rec in enumerate(recs):
        R.store_record(tmp_path, f"k{i}", rec, NAMES, BLOCK_NAMES)
    cands = pq.read_table(tmp_path / "candidates")  # the whole folder, as a researcher opens it
    assert cands.column_names[:3] == ["dataset", "id", "candidate"] and set(NAMES) <= set(cands.column_names)
    assert cands.num_rows == sum(r.X.shape[0] for r in recs) and cands.column("tn").null_count == cands.num_rows
    blocks = pq.read_table(tmp_path / "blocks")
    assert set(BLOCK_NAMES) <= set(blocks.column_names) and "gold_share" in blocks.column_names
    # Columns in reverse order, metadata kept: the same record.
    cand_path, block_path = R.record_paths(tmp_path, "k0")
    for path in (cand_path, block_path):
        table = pq.read_table(path)
        pq.write_table(table.select(table.column_names[::-1]).replace_schema_metadata(table.schema.metadata), path)
    got = R.load_record(tmp_path, "k0", NAMES, BLOCK_NAMES)
    assert got is not None
    assert_same(got, recs[0])


def test_unreadable_mismatched_or_stale_tables_are_misses(tmp_path: Path) -> None:
    rec = _records(1)[0]
    for key in ("truncated", "no-blocks", "stale", "foreign"):
        R.store_record(tmp_path, key, rec, NAMES, BLOCK_NAMES)
    cand, _ = R.record_paths(tmp_path, "truncated")
    cand.write_bytes(cand.read_bytes()[:100])
    R.record_paths(tmp_path, "no-blocks")[1].unlink()
    cand, _ = R.record_paths(tmp_path, "foreign")
    pq.write_table(pa.table({"x": [1.0]}), cand)
    for key in ("truncated", "no-blocks", "foreign", "missing"):
        assert R.load_record(tmp_path, key, NAMES, BLOCK_NAMES) is None, key
    assert R.load_record(tmp_path, "stale", [*NAMES, "a_new_feature"], BLOCK_NAMES) is None
    assert R.load_record(tmp_path, "stale", NAMES, BLOCK_NAMES[:-1]) is None
    assert R.load_record(tmp_path, "stale", NAMES, BLOCK_NAMES) is not None
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_record_the_tables_cannot_hold_is_refused_not_misstored(tmp_path: Path) -> None:
    rec = _records(1)[0]
    with pytest.raises(ValueError, match="clash"):
        R.store_record(tmp_path, "k", rec, ["y", *NAMES[1:]], BLOCK_NAMES)
    with pytest.raises(ValueError, match="feature matrix"):
        R.store_record(tmp_path, "k", rec, NAMES[:-1], BLOCK_NAMES)
    assert not list(tmp_path.rglob("*.parquet"))


def test_extractor_scores_round_trip(tmp_path: Path) -> None:
    scores = {"trafilatura": (0.123456789012345, (0.1, 0.2, 0.7)), "readability_js": (1.0 / 3.0, (0.3, 0.3, 0.4))}
    R.store_scores(tmp_path / "s.parquet", scores)
    assert R.load_scores(tmp_path / "s.parquet") == scores
    R.store_scores(tmp_path / "snippets.parquet", {"justext": (0.5, (1.0, 2.0, 3.0, 4.0))})
    assert R.load_scores(tmp_path / "snippets.parquet") == {"justext": (0.5, (1.0, 2.0, 3.0, 4.0))}
    R.store_scores(tmp_path / "none.parquet", {})
    assert R.load_scores(tmp_path / "none.parquet") == {}
    assert R.load_scores(tmp_path / "missing.parquet") is None
