"""Output shards of ``centrum batch``: Parquet (pyarrow), JSONL or Markdown files, each written under a temporary
name and renamed when complete, so an interrupted run leaves only whole shards; the record ids in them are what
``--resume`` skips. A shard is written when it holds ``rows_per_shard`` rows or its first row is ``seconds_per_shard``
old, whichever comes first: a kill loses at most that much work."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.paths import atomic_path

FORMATS = ("parquet", "jsonl", "markdown")
SUFFIXES = {"parquet": ".parquet", "jsonl": ".jsonl", "markdown": ".md"}
# A Markdown shard: per row this line (the row's other columns as JSON), then its Markdown, else its text.
MD_ROW = "<!-- centrum-row "
PREFIX = "part-"
# Columns in order; the Parquet schema is fixed so shards of different runs concatenate.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("record_id", "string"), ("url", "string"), ("source", "string"), ("algorithm", "string"),
    ("status", "string"), ("error_code", "string"), ("error_message", "string"), ("text", "string"),
    ("markdown", "string"), ("metadata", "string"), ("node_paths", "list<string>"), ("nodes", "list<int64>"),
    ("timing_ms", "string"), ("http_status", "int32"), ("charset", "string"), ("render_class", "string"),
    ("stylesheets_loaded", "int32"), ("stylesheets_failed", "int32"), ("warnings", "list<string>"),
    ("attempts", "int32"), ("worker_pid", "int64"), ("worker_node", "string"),
    # Provenance: any row leads back to its record (source is the file, url the WARC-Target-URI).
    ("warc_type", "string"), ("warc_date", "string"), ("offset", "int64"), ("length", "int64"),
    ("content_type", "string"), ("content_hash", "string"), ("duplicate_of", "string"), ("language", "string"),
    # The text (and Markdown) were cut at limits.INPUT_LIMITS["row_text_chars"].
    ("text_truncated", "bool"),
)


def _schema() -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "bool": pa.bool_(), "int32": pa.int32(), "int64": pa.int64(),
             "list<string>": pa.list_(pa.string()), "list<int64>": pa.list_(pa.int64())}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS])


def shard_files(out: Path) -> list[Path]:
    return sorted(p for p in out.glob(f"{PREFIX}*") if p.suffix in SUFFIXES.values())


def read_rows(out: Path, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every row of the complete shards in ``out`` (both formats)."""
    for path in shard_files(out):
        if path.suffix == ".jsonl":
            with path.open(encoding="utf-8") as f:
                for line in f:
                    row = json.loads(line)
                    yield {k: row.get(k) for k in columns} if columns else row
        elif path.suffix == ".md":
            for row in _read_markdown(path):
                yield {k: row.get(k) for k in columns} if columns else row
        else:
            import pyarrow.parquet as pq

            yield from pq.read_table(path, columns=columns).to_pylist()


def done_ids(out: Path) -> set[str]:
    return {str(r["record_id"]) for r in read_rows(out, ["record_id"])}


def _write_markdown(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            body = row.get("markdown") or row.get("text") or ""
            meta = {k: v for k, v in row.items() if k not in ("markdown", "text")}
            meta["body"] = "markdown" if row.get("markdown") else "text" if row.get("text") else None
            # JSON escapes ">" so no value can end the comment; a page line that looks like a row marker is
            # indented (the same Markdown) so a page cannot forge a row, and a record id, for --resume.
            f.write(MD_ROW + json.dumps(meta, ensure_ascii=False).replace(">", "\\u003e") + " -->\n")
            for line in body.splitlines():
                f.write((" " + line if line.startswith(MD_ROW.strip()) else line) + "\n")
            f.write("\n")


def _read_markdown(path: Path) -> Iterator[dict[str, Any]]:
    row: dict[str, Any] | None = None
    lines: list[str] = []

    def done(row: dict[str, Any]) -> dict[str, Any]:
        kind = row.pop("body", None)
        body = "\n".join(lines).rstrip("\n")
        return {**row, "markdown": body if kind == "markdown" else None, "text": body if kind == "text" else None}

    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith(MD_ROW) and line.rstrip("\n").endswith(" -->"):
                if row is not None:
                    yield done(row)
                row, lines = json.loads(line.rstrip("\n")[len(MD_ROW):-4]), []
            else:
                lines.append(line.rstrip("\n"))
    if row is not None:
        yield done(row)


class ShardWriter:
    def __init__(self, out: Path, fmt: str = "parquet", rows_per_shard: int = 1000,
                 seconds_per_shard: float = 60.0) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
        self.out, self.fmt, self.rows_per_shard = out, fmt, max(1, rows_per_shard)
        self.seconds_per_shard = seconds_per_shard
        self.first_row_at = 0.0  # monotonic time the buffered rows started
        out.mkdir(parents=True, exist_ok=True)
        for stale in out.glob(f".{PREFIX}*.tmp"):  # a torn shard of an interrupted run: its rows are redone
            stale.unlink()
        existing = [int(p.name[len(PREFIX):].split(".")[0]) for p in shard_files(out)
                    if p.name[len(PREFIX):].split(".")[0].isdigit()]
        self.next_index = max(existing, default=-1) + 1
        self.rows: list[dict[str, Any]] = []
        self.written: list[Path] = []

    def add(self, row: dict[str, Any]) -> None:
        if not self.rows:
            self.first_row_at = time.monotonic()
        self.rows.append({name: row.get(name) for name, _ in COLUMNS})
        if len(self.rows) >= self.rows_per_shard:
            self.flush()
        else:
            self.tick()

    def tick(self) -> None:
        """Write the buffered rows once the oldest is ``seconds_per_shard`` old (the engines call it while they
        wait, so slow rows are not held back by the row count)."""
        if self.rows and time.monotonic() - self.first_row_at >= self.seconds_per_shard:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        final = self.out / f"{PREFIX}{self.next_index:05d}{SUFFIXES[self.fmt]}"
        with atomic_path(final) as tmp:  # whole shards only: a reader or --resume never sees half a file
            if self.fmt == "markdown":
                _write_markdown(tmp, self.rows)
            elif self.fmt == "jsonl":
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
