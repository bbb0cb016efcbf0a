"""Output shards of ``centrum batch``: Parquet (pyarrow) or JSONL files of at most ``rows_per_shard`` rows, each
written under a temporary name and renamed when complete, so an interrupted run leaves only whole shards; the
record ids in them are what ``--resume`` skips."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..paths import atomic_path

FORMATS = ("parquet", "jsonl")
PREFIX = "part-"
# Columns in order; the Parquet schema is fixed so shards of different runs concatenate.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("record_id", "string"), ("url", "string"), ("source", "string"), ("algorithm", "string"),
    ("status", "string"), ("error_code", "string"), ("error_message", "string"), ("text", "string"),
    ("markdown", "string"), ("metadata", "string"), ("node_paths", "list<string>"), ("nodes", "list<int64>"),
    ("timing_ms", "string"), ("http_status", "int32"), ("charset", "string"), ("render_class", "string"),
    ("stylesheets_loaded", "int32"), ("stylesheets_failed", "int32"), ("warnings", "list<string>"),
    ("attempts", "int32"), ("worker_pid", "int64"), ("worker_node", "string"),
)


def _schema() -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(),
             "list<string>": pa.list_(pa.string()), "list<int64>": pa.list_(pa.int64())}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS])


def shard_files(out: Path) -> list[Path]:
    return sorted(p for p in out.glob(f"{PREFIX}*") if p.suffix in (".parquet", ".jsonl"))


def read_rows(out: Path, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every row of the complete shards in ``out`` (both formats)."""
    for path in shard_files(out):
        if path.suffix == ".jsonl":
            with path.open(encoding="utf-8") as f:
                for line in f:
                    row = json.loads(line)
                    yield {k: row.get(k) for k in columns} if columns else row
        else:
            import pyarrow.parquet as pq

            yield from pq.read_table(path, columns=columns).to_pylist()


def done_ids(out: Path) -> set[str]:
    return {str(r["record_id"]) for r in read_rows(out, ["record_id"])}


class ShardWriter:
    def __init__(self, out: Path, fmt: str = "parquet", rows_per_shard: int = 1000) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
        self.out, self.fmt, self.rows_per_shard = out, fmt, max(1, rows_per_shard)
        out.mkdir(parents=True, exist_ok=True)
        for stale in out.glob(f".{PREFIX}*.tmp"):  # a torn shard of an interrupted run: its rows are redone
            stale.unlink()
        existing = [int(p.name[len(PREFIX):].split(".")[0]) for p in shard_files(out)
                    if p.name[len(PREFIX):].split(".")[0].isdigit()]
        self.next_index = max(existing, default=-1) + 1
        self.rows: list[dict[str, Any]] = []
        self.written: list[Path] = []

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append({name: row.get(name) for name, _ in COLUMNS})
        if len(self.rows) >= self.rows_per_shard:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        final = self.out / f"{PREFIX}{self.next_index:05d}.{self.fmt}"
        with atomic_path(final) as tmp:  # whole shards only: a reader or --resume never sees half a file
            if self.fmt == "jsonl":
                with tmp.open("w", encoding="utf-8") as f:
                    for row in self.rows:
                        f.write(json.dumps(row, ensure_ascii=False) + "\n")
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                pq.write_table(pa.Table.from_pylist(self.rows, schema=_schema()), tmp, compression="zstd")
        self.written.append(final)
        self.next_index += 1
        self.rows = []
