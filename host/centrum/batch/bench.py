"""``centrum bench --batch``: pages per second of ``centrum batch`` with 1 and 2 actors, rendered and
``--no-render``, on a synthetic crawl written to a temporary WARC (see :mod:`centrum.batch.crawl`)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from .crawl import write_crawl
from .engine import BatchOptions, run_batch
from .worker import WorkerOptions

# Rendered pages are the small crawl pages; source-only pages are longer (~25 KB, nearer a real crawl's HTML), so
# the figure measures the source-only extractor rather than per-record overhead.
SOURCE_PARAGRAPHS = 120


def run_batch_bench(render_pages: int = 60, source_pages: int = 2000, actors: tuple[int, ...] = (1, 2),
                    algorithm: str | None = None, progress: bool = True,
                    modes: tuple[bool, ...] = (True, False)) -> dict[str, Any]:
    """``modes``: rendered (True) and/or ``--no-render`` (False) runs."""
    from .. import algorithms

    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="centrum-batch-bench-") as tmp:
        root = Path(tmp)
        small, large = root / "rendered.warc.gz", root / "source.warc.gz"
        write_crawl(small, render_pages)
        write_crawl(large, source_pages, paragraphs=SOURCE_PARAGRAPHS)
        for render in modes:
            name = algorithm or (algorithms.DEFAULT_ALGORITHM if render else algorithms.SOURCE_DEFAULT)
            for n in actors:
                out = root / f"out-{'r' if render else 's'}{n}"
                summary = run_batch(BatchOptions(
                    inputs=[small if render else large], out=out,
                    worker=WorkerOptions(algorithm=name, render=render, markdown=render), actors=n,
                    rows_per_shard=500, progress=progress))
                runs.append({"mode": "rendered" if render else "no-render", "algorithm": name, "actors": n,
                             "pages": summary.records, "failed": summary.failed,
                             "seconds": round(summary.seconds, 2),
                             "pages_per_s": round(summary.pages_per_s, 3),
                             "steady_pages_per_s": round(summary.steady_pages_per_s, 3)})
    for mode in ("rendered", "no-render"):
        base = next((r for r in runs if r["mode"] == mode and r["actors"] == 1), None)
        for r in runs:
            if base and r["mode"] == mode and base["steady_pages_per_s"]:
                r["speedup"] = round(r["steady_pages_per_s"] / base["steady_pages_per_s"], 2)
    return {"runs": runs}


def format_batch_table(report: dict[str, Any]) -> str:
    lines = ["| mode | algorithm | actors | pages | wall s | pages/s (wall) | pages/s (steady) | speed-up | "
             "pages/day (steady) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in report["runs"]:
        lines.append(f"| {r['mode']} | {r['algorithm']} | {r['actors']} | {r['pages']} | {r['seconds']:.1f} | "
                     f"{r['pages_per_s']:.2f} | {r['steady_pages_per_s']:.2f} | {r.get('speedup', 1.0):.2f}x | "
                     f"{r['steady_pages_per_s'] * 86400:,.0f} |")
    return "\n".join(lines)
