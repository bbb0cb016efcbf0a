"""One decoder (#46): every shared data-set page (../shared/datasets/*/pages/*.html) gives the same text through
`centrum batch --no-render` (the local engine, two worker processes) and `centrum extract --no-render` (the
command's own function, in this process). Before, the batch worker decoded with Python's codec for the sniffed
label: iso-8859-1 pages got C1 controls for curly quotes, gb2312 pages U+2015 for an em dash."""

from __future__ import annotations

from pathlib import Path

import pytest

from centrum.batch.engine import BatchOptions
from centrum.batch.run import run_batch
from centrum.batch.shards import read_rows
from centrum.batch.worker import WorkerOptions
from centrum.cli import main

REPO = Path(__file__).resolve().parents[2]
DATASETS = REPO.parent / "shared" / "datasets"
FOLDERS = sorted(p for p in DATASETS.glob("*/pages") if p.is_dir())


def test_every_shared_page_gives_the_same_text_through_batch_and_extract(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert FOLDERS, f"no data sets under {DATASETS}"
    pages = sorted(p for folder in FOLDERS for p in folder.glob("*.html"))
    assert len(pages) > 2000
    out = tmp_path / "out"
    summary = run_batch(BatchOptions(inputs=FOLDERS, out=out, actors=2, fmt="parquet", progress=False,
                                     worker=WorkerOptions(algorithm="source", render=False, markdown=False),
                                     rows_per_shard=5000))
    rows = {r["record_id"]: r for r in read_rows(out, ["record_id", "status", "error_code", "text"])}
    assert summary.records == len(rows) == len(pages)
    differ = []
    for page in pages:
        capsys.readouterr()
        rc = main(["extract", "--no-render", str(page)])
        printed = capsys.readouterr().out
        row = rows[str(page.resolve())]
        if rc == 0:
            same = row["status"] == "ok" and row["text"] == printed.rstrip("\n")
        else:  # extract found no content (3) or could not read the page (2): batch says so too
            same = row["status"] == "failed" and row["error_code"] in ("E_EMPTY", "E_INPUT")
        if not same:
            differ.append(str(page.relative_to(DATASETS)))
    assert differ == [], f"{len(differ)} of {len(pages)} pages differ: {differ[:20]}"
