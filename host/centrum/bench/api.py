"""``centrum bench --api``: the Python API over data-set pages, in one process with one browser.

Measured in one run: ``api.extract()`` called page after page (the first call starts the process's browser;
the others reuse it, so each should cost about one page's render), then ``api.extract_many()`` over every page
(pages/s with ``workers`` threads sharing that browser), then ``render=False`` (the source-only model on the HTML,
no browser) against trafilatura on the same pages, both with their metadata off (trafilatura's default) and
trafilatura with the settings of ``centrum eval``. A benchmark never fails anything for being slow: it reports.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any


def pick_pages(dataset_dirs: list[Path], n: int) -> list[Path]:
    """``n`` pages taken in turn from each data set (its first pages by name), so every set has a few."""
    lists = [sorted((d / "pages").glob("*.html")) for d in dataset_dirs]
    out: list[Path] = []
    k = 0
    while len(out) < n and any(k < len(x) for x in lists):
        out += [x[k] for x in lists if k < len(x)][: n - len(out)]
        k += 1
    return out


def _rate(pages: int, seconds: float) -> float:
    return pages / seconds if seconds > 0 else float("nan")


def run_api_bench(pages: list[Path], workers: int = 2, warm_calls: int = 10, progress: bool = True) -> dict[str, Any]:
    from .. import api
    from ..evaluation.peers import run_html_peer

    api.close()  # a fresh process's state: the first call below starts the browser
    report: dict[str, Any] = {"pages": len(pages), "workers": workers,
                              "datasets": sorted({p.parent.parent.name for p in pages})}

    # extract() page after page: the first call pays for the browser's start, the others reuse it.
    calls: list[float] = []
    failed = 0
    for page in pages[: warm_calls + 1]:
        t0 = time.perf_counter()
        try:
            api.extract(page)
        except Exception:  # noqa: BLE001 - a page that cannot be rendered still took its time
            failed += 1
        calls.append(time.perf_counter() - t0)
    report["extract_calls"] = {"first_s": calls[0], "median_after_first_s": statistics.median(calls[1:] or calls),
                               "calls": len(calls), "failed": failed}

    # extract_many() over every page through the same browser.
    t0 = time.perf_counter()
    results = list(api.extract_many(pages, workers=workers, progress=progress))
    wall = time.perf_counter() - t0
    totals = [r.timing_ms.get("total", float("nan")) / 1000 for r in results if r.ok]
    renders = [r.timing_ms.get("render", float("nan")) / 1000 for r in results if r.ok]
    report["extract_many"] = {"seconds": wall, "pages_per_s": _rate(len(results), wall),
                              "median_page_s": statistics.median(totals) if totals else float("nan"),
                              "median_render_s": statistics.median(renders) if renders else float("nan"),
                              "failed": sum(not r.ok for r in results),
                              "empty": sum(r.ok and not r.text for r in results),
                              "errors": sorted({type(r.error).__name__ for r in results if r.error})}
    api.close()

    # render=False against trafilatura: both on the same page bytes, read in the loop, metadata off.
    def peer(html: bytes, language: str) -> str:  # with the settings of `centrum eval`
        return run_html_peer("trafilatura", html, language)

    api.extract(pages[0], render=False, with_metadata=False)  # the model's load, not a page's cost
    peer(pages[0].read_bytes(), "en")
    t0 = time.perf_counter()
    source = list(api.extract_many(pages, render=False, workers=1, with_metadata=False, progress=False))
    source_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    traf_empty = 0
    for page in pages:
        traf_empty += not peer(page.read_bytes(), "en")
    traf_s = time.perf_counter() - t0
    report["source_only"] = {"seconds": source_s, "pages_per_s": _rate(len(pages), source_s),
                             "failed": sum(not r.ok for r in source), "empty": sum(r.ok and not r.text for r in source)}
    report["trafilatura"] = {"seconds": traf_s, "pages_per_s": _rate(len(pages), traf_s), "empty": traf_empty}
    return report


def format_api_table(r: dict[str, Any]) -> str:
    c, m, s, t = r["extract_calls"], r["extract_many"], r["source_only"], r["trafilatura"]
    lines = [
        f"centrum bench --api: {r['pages']} pages from {len(r['datasets'])} data set"
        f"{'' if len(r['datasets']) == 1 else 's'} ({', '.join(r['datasets'])}), one process, one browser",
        "",
        "| measure | value |",
        "|---|---|",
        f"| extract(): first call (starts the browser) | {c['first_s']:.2f} s |",
        f"| extract(): median of the next {c['calls'] - 1} calls | {c['median_after_first_s']:.2f} s |",
        f"| extract_many(workers={r['workers']}): pages/s | {m['pages_per_s']:.2f} ({m['seconds']:.1f} s) |",
        f"| extract_many: median page (render / total, with waiting) | {m['median_render_s']:.2f} s / "
        f"{m['median_page_s']:.2f} s |",
        f"| extract_many: failed / empty pages | {m['failed']} / {m['empty']}"
        + (f" ({', '.join(m['errors'])})" if m["errors"] else "") + " |",
        f"| render=False (source model, 1 worker): pages/s | {s['pages_per_s']:.1f} ({s['seconds']:.1f} s; "
        f"failed {s['failed']}, empty {s['empty']}) |",
        f"| trafilatura.extract, same pages: pages/s | {t['pages_per_s']:.1f} ({t['seconds']:.1f} s; "
        f"empty {t['empty']}) |",
    ]
    return "\n".join(lines)
