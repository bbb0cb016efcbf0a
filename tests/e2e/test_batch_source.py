"""`centrum batch --no-render` on a real local Ray: the learned source-only extractor is the default, and its rows
carry the page's main text and the paths of its containers; a page it cannot read is a failed row with its reason.
The texts equal `centrum extract --no-render` on the same files (one implementation)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the batch extra (pip install 'centrum[batch]') is installed by tox")

from centrum.batch.shards import read_rows  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "RAY_USAGE_STATS_ENABLED": "0"}
SAMPLE = REPO / "tests" / "fixtures" / "sample" / "article.html"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True, timeout=400,
                          env=ENV, cwd=REPO)


def test_no_render_batch_uses_the_source_default_and_answers_text(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "sample.html").write_bytes(SAMPLE.read_bytes())
    (pages / "empty.html").write_bytes(b"")
    out = tmp_path / "out"
    p = cli("batch", "--no-progress", str(pages), "--out", str(out), "--no-render", "--format", "jsonl",
            "--actors", "1", "--engine", "ray")
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert summary["records"] == 2 and summary["ok"] == 1 and summary["failed"] == 1
    rows = {Path(r["source"]).name: r for r in read_rows(out)}
    ok, empty = rows["sample.html"], rows["empty.html"]
    assert ok["algorithm"] == "source" and ok["status"] == "ok" and ok["error_code"] == ""
    assert len(ok["text"]) > 200 and ok["render_class"] == "unrendered"
    assert ok["node_paths"] and all(path.startswith("html:1>body:") for path in ok["node_paths"])
    single = cli("extract", "--no-render", str(SAMPLE))
    assert single.returncode == 0, single.stderr
    assert ok["text"] == single.stdout.rstrip("\n")
    assert empty["status"] == "failed" and empty["error_code"] == "E_INPUT"
    assert "the page is empty" in empty["error_message"]
