"""Page records of ``centrum train`` and their cached form: Parquet tables that a researcher can open.

Parquet rather than pickle: a well-kept columnar format that pyarrow, pandas, DuckDB or polars read, where a pickle
only loads into this code (and runs code while it loads). One record is two files under the cache folder, named by
the record's cache key (``learner.extract_page``):

- ``candidates/<key>.parquet``, one row per candidate: ``dataset``, ``id``, ``candidate`` (its index on the page),
  every candidate feature as a column named by ``features.feature_names()``, ``y`` (page F1 of its
  rule-trimmed text) and its metric counts ``tp``, ``fp``, ``fn`` (AEB token-shingle shares, or snippet counts) and
  ``tn`` (snippet gold only; null for text gold);
- ``blocks/<key>.parquet``, one row per block of the block filter's training data: ``dataset``, ``id``,
  ``candidate`` (the candidate the blocks are relative to), ``block`` (its index among that candidate's rows), every
  block feature named by ``blocks.feature_names()`` and ``gold_share`` (NaN: unknown).

What is not a row (gold kind, element count, the counts of an empty answer, the base algorithms' scores, the
feature columns in matrix order, each block group's candidate and row count, so that a group without blocks
survives) is JSON in the candidates file's key-value metadata under ``centrum``. Parquet keeps float64 values as
their IEEE bytes and Python's JSON writes a float as its shortest round-tripping repr (NaN as ``NaN``), so a record
reads back bit for bit and a model trained from it is byte-identical to one trained from the record in memory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.paths import atomic_path

if TYPE_CHECKING:  # imported where used: `import centrum` and commands other than train do not load pyarrow
    import pyarrow as pa

# Bumped when the tables' layout changes: a file of another layout is a miss, never misread.
FORMAT = 1
META_KEY = b"centrum"
COUNT_COLUMNS = ("tp", "fp", "fn", "tn")  # AEB gold uses the first three, snippet gold all four
_CANDIDATE_FIXED = ("dataset", "id", "candidate", "y", *COUNT_COLUMNS)
_BLOCK_FIXED = ("dataset", "id", "candidate", "block", "gold_share")


@dataclass
class PageRecord:
    dataset: str
    id: str
    kind: str
    X: np.ndarray
    y: np.ndarray  # per candidate: page F1 of its (trimmed) output
    counts: list[tuple[float, ...]]  # per candidate metric counts
    n_elements: int
    empty: tuple[float, ...] = ()  # metric counts of an empty answer
    extractors: dict[str, tuple[float, tuple[float, ...]]] = field(default_factory=dict)  # algorithms and peers
    # Block filter training data: for the best candidate and every base algorithm's answer (a set that does not
    # depend on any learned model), (candidate index, block features, gold share per block; NaN = unknown).
    blocks: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)
    # Set from the data set on every load (not part of the cached features): rows of the per-language and
    # per-page-type tables, and the site that cross-validation keeps in one fold.
    language: str = "und"
    page_type: str | None = None
    site: str = ""


def record_paths(root: Path, key: str) -> tuple[Path, Path]:
    """(candidates file, blocks file) of the record cached under ``key``."""
    return root / "candidates" / f"{key}.parquet", root / "blocks" / f"{key}.parquet"


def _columns(fixed: dict[str, Any], names: Sequence[str], X: np.ndarray, tail: dict[str, Any]) -> dict[str, Any]:
    """Fixed columns, one column per feature, then ``tail``; a feature named like a fixed column is refused rather
    than silently shadowing it."""
    import pyarrow as pa

    if X.ndim != 2 or X.shape[1] != len(names):
        raise ValueError(f"feature matrix of shape {X.shape} for {len(names)} feature names")
    clash = (set(fixed) | set(tail)) & set(names)
    if clash or len(set(names)) != len(names):
        raise ValueError(f"feature names clash with the table's own columns or repeat: {sorted(clash)}")
    cols = {k: v if isinstance(v, pa.Array) else pa.array(v) for k, v in fixed.items()}
    cols.update({n: pa.array(np.ascontiguousarray(X[:, i])) for i, n in enumerate(names)})
    cols.update({k: v if isinstance(v, pa.Array) else pa.array(v) for k, v in tail.items()})
    return cols


def candidates_table(rec: PageRecord, names: Sequence[str]) -> pa.Table:
    """The record's candidates as a ``pyarrow.Table``, its page-level fields in the schema metadata."""
    import pyarrow as pa

    n = rec.X.shape[0]
    widths = {len(c) for c in rec.counts}
    width = widths.pop() if len(widths) == 1 else 0 if not widths else -1
    if not 0 <= width <= len(COUNT_COLUMNS) or (n and not width) or len(rec.counts) != n or rec.y.shape != (n,):
        raise ValueError(f"{rec.dataset}/{rec.id}: expected {n} labels and metric counts of at most "
                         f"{len(COUNT_COLUMNS)} values, as many for every candidate")
    counts = np.asarray(rec.counts, dtype=np.float64).reshape(n, width)
    tail: dict[str, Any] = {"y": rec.y}
    for i, c in enumerate(COUNT_COLUMNS):
        tail[c] = counts[:, i] if i < width else pa.nulls(n, pa.float64())
    cols = _columns({"dataset": pa.array([rec.dataset] * n, pa.string()), "id": pa.array([rec.id] * n, pa.string()),
                     "candidate": np.arange(n, dtype=np.int32)}, names, rec.X, tail)
    meta = {"format": FORMAT, "dataset": rec.dataset, "id": rec.id, "kind": rec.kind,
            "n_elements": int(rec.n_elements), "count_width": width, "empty": [float(x) for x in rec.empty],
            "candidate_features": list(names),
            "extractors": {k: [float(f1), [float(x) for x in c]] for k, (f1, c) in rec.extractors.items()},
            "block_groups": [[int(j), int(X.shape[0])] for j, X, _ in rec.blocks]}
    return pa.table(cols).replace_schema_metadata({META_KEY: json.dumps(meta)})


def blocks_table(rec: PageRecord, names: Sequence[str]) -> pa.Table:
    """The record's block-filter rows (every group's, in order) as a ``pyarrow.Table`` with the feature names in
    its metadata."""
    import pyarrow as pa

    empty = np.zeros((0, len(names)), dtype=np.float64)
    X = np.concatenate([b[1] for b in rec.blocks]) if rec.blocks else empty
    shares = np.concatenate([b[2] for b in rec.blocks]) if rec.blocks else np.zeros(0)
    if shares.shape != (X.shape[0],):
        raise ValueError(f"{rec.dataset}/{rec.id}: {shares.shape} gold shares for {X.shape[0]} blocks")
    n = X.shape[0]
    fixed = {"dataset": pa.array([rec.dataset] * n, pa.string()), "id": pa.array([rec.id] * n, pa.string()),
             "candidate": np.concatenate([np.full(b[1].shape[0], b[0], dtype=np.int32) for b in rec.blocks])
             if rec.blocks else np.zeros(0, dtype=np.int32),
             "block": np.concatenate([np.arange(b[1].shape[0], dtype=np.int32) for b in rec.blocks])
             if rec.blocks else np.zeros(0, dtype=np.int32)}
    table = pa.table(_columns(fixed, names, X, {"gold_share": shares}))
    return table.replace_schema_metadata({META_KEY: json.dumps({"format": FORMAT, "block_features": list(names)})})


def _matrix(table: pa.Table, names: Sequence[str]) -> np.ndarray:
    """The named columns as a row-major matrix in the order of ``names`` (never the file's column order)."""
    cols = [table.column(n).to_numpy() for n in names]
    return np.column_stack(cols) if cols else np.zeros((table.num_rows, 0))


def _array(table: pa.Table, name: str) -> np.ndarray:
    # A copy: pyarrow may hand out read-only views of its buffers, and a record's arrays are ordinary numpy arrays.
    return np.array(table.column(name).to_numpy())


def record_from_tables(candidates: pa.Table, blocks: pa.Table, names: Sequence[str] | None = None,
                       block_names: Sequence[str] | None = None) -> PageRecord:
    """The record that :func:`candidates_table` and :func:`blocks_table` wrote. ValueError when the two tables do
    not belong together, are of another layout, or hold other features than ``names`` / ``block_names`` (when
    given: today's features, so that features changed without the cache key changing are never served)."""
    meta = json.loads(candidates.schema.metadata[META_KEY])
    bmeta = json.loads(blocks.schema.metadata[META_KEY])
    if meta["format"] != FORMAT or bmeta["format"] != FORMAT:
        raise ValueError("another table layout")
    if (names is not None and meta["candidate_features"] != list(names)) or \
            (block_names is not None and bmeta["block_features"] != list(block_names)):
        raise ValueError("other features than today's")
    groups = meta["block_groups"]
    if sum(rows for _, rows in groups) != blocks.num_rows:
        raise ValueError("the blocks file does not belong to the candidates file")
    width = meta["count_width"]
    counts = list(zip(*(candidates.column(c).to_pylist() for c in COUNT_COLUMNS[:width]), strict=True))
    rec = PageRecord(meta["dataset"], meta["id"], meta["kind"], _matrix(candidates, meta["candidate_features"]),
                     _array(candidates, "y"), counts, meta["n_elements"], tuple(meta["empty"]),
                     {k: (f1, tuple(c)) for k, (f1, c) in meta["extractors"].items()})
    bX, shares = _matrix(blocks, bmeta["block_features"]), _array(blocks, "gold_share")
    start = 0
    for j, rows in groups:
        rec.blocks.append((j, bX[start:start + rows], shares[start:start + rows]))
        start += rows
    return rec


def write_table(path: Path, table: pa.Table) -> bool:
    """Write ``table`` to ``path`` through ``paths.atomic_path`` (a reader never sees half a file); False when the
    write failed (the entry stays uncached)."""
    import pyarrow.parquet as pq

    try:
        with atomic_path(path) as tmp:
            # Snappy (Parquet's usual codec) and no dictionary or statistics for the feature columns: a page's file
            # is small and read whole, so what counts is decoding ~200 short columns fast, not skipping or shrinking.
            pq.write_table(table, tmp, compression="snappy", write_statistics=False,
                           use_dictionary=[c for c in ("dataset", "id", "extractor") if c in table.column_names])
    except OSError:
        return False
    return True


def store_record(root: Path, key: str, rec: PageRecord, names: Sequence[str], block_names: Sequence[str]) -> None:
    """Cache the record's two tables. The blocks file goes first: the candidates file is what makes the record
    exist, so a reader never pairs it with a missing blocks file. A record the tables cannot hold raises
    ValueError."""
    cand_path, block_path = record_paths(root, key)
    cand, blocks = candidates_table(rec, names), blocks_table(rec, block_names)
    if write_table(block_path, blocks):
        write_table(cand_path, cand)


def _read(path: Path) -> pa.Table:
    import pyarrow.parquet as pq

    # One file, whole, on this thread: the dataset machinery of pq.read_table and a thread pool per call cost more
    # than a small file's decoding (workers of `centrum train --jobs` read in parallel already).
    with pq.ParquetFile(path) as f:
        return f.read(use_threads=False)


def load_record(root: Path, key: str, names: Sequence[str], block_names: Sequence[str]) -> PageRecord | None:
    """The record cached under ``key``, or None when it is missing, unreadable, of another layout or of other
    features than ``names`` / ``block_names``: a miss, recomputed."""
    try:
        cand_path, block_path = record_paths(root, key)
        return record_from_tables(_read(cand_path), _read(block_path), names, block_names)
    except Exception:  # noqa: BLE001 - missing, truncated or foreign file: a miss
        return None


def scores_table(scores: dict[str, tuple[float, tuple[float, ...]]]) -> pa.Table:
    """Extractors' scores on one page (the peers', cached apart from the record) as a ``pyarrow.Table``: one row per
    extractor, ``extractor``, ``f1`` and its metric counts (``tp``, ``fp``, ``fn``, ``tn`` as in the candidates)."""
    import pyarrow as pa

    widths = {len(c) for _, c in scores.values()}
    width = widths.pop() if len(widths) == 1 else 0 if not widths else -1
    if not 0 <= width <= len(COUNT_COLUMNS) or (scores and not width):
        raise ValueError("metric counts of at most four values, as many for every extractor")
    n = len(scores)
    counts = np.asarray([c for _, c in scores.values()], dtype=np.float64).reshape(n, width)
    cols: dict[str, Any] = {"extractor": pa.array(list(scores), pa.string()),
                            "f1": pa.array([float(f1) for f1, _ in scores.values()], pa.float64())}
    for i, c in enumerate(COUNT_COLUMNS):
        cols[c] = pa.array(counts[:, i]) if i < width else pa.nulls(n, pa.float64())
    return pa.table(cols).replace_schema_metadata({META_KEY: json.dumps({"format": FORMAT, "count_width": width})})


def scores_from_table(table: pa.Table) -> dict[str, tuple[float, tuple[float, ...]]]:
    """The scores that :func:`scores_table` wrote; ValueError for another layout."""
    meta = json.loads(table.schema.metadata[META_KEY])
    if meta["format"] != FORMAT:
        raise ValueError("another table layout")
    counts = zip(*(table.column(c).to_pylist() for c in COUNT_COLUMNS[:meta["count_width"]]), strict=True) \
        if meta["count_width"] else (() for _ in range(table.num_rows))
    return {name: (f1, tuple(c)) for name, f1, c in zip(table.column("extractor").to_pylist(),
                                                         table.column("f1").to_pylist(), counts, strict=True)}


def store_scores(path: Path, scores: dict[str, tuple[float, tuple[float, ...]]]) -> None:
    write_table(path, scores_table(scores))


def load_scores(path: Path) -> dict[str, tuple[float, tuple[float, ...]]] | None:
    """The scores :func:`store_scores` cached at ``path``, or None when missing or unreadable (a miss)."""
    try:
        return scores_from_table(_read(path))
    except Exception:  # noqa: BLE001 - missing, truncated or foreign file: a miss
        return None
