"""``centrum bench --batch``: pages per second on a synthetic crawl written to a temporary WARC (see
:mod:`centrum.batch.crawl`), in one run:

- the extractors alone, one process, on the same archived pages: ``source`` (the ``--no-render`` default) and the
  HTML peers trafilatura and resiliparse (through ``centrum.evaluation.peers.run_html_peer``, the one peer dispatch);
- ``centrum batch --no-render`` on the local engine and on Ray, with 1 and 2 workers (and, with ``modes``
  including True, rendered runs).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from ..core.limits import read_page_file
from .crawl import write_crawl
from .engine import BatchError, BatchOptions
from .inputs import Page, index_warc, read_page
from .run import run_batch
from .worker import WorkerOptions

# Source-only pages are longer (~25 KB, nearer a real crawl's HTML), so the figure measures the extractors rather
# than per-record overhead; rendered pages are the small crawl pages.
SOURCE_PARAGRAPHS = 120
PEERS = ("trafilatura", "resiliparse")


def warc_pages(warc: Path, pages: int) -> list[Page]:
    """The first ``pages`` HTML records of ``warc``, read by the batch's own reader."""
    _index, tasks = index_warc(warc)
    return [read_page(t) for t in tasks if not t.status][:pages]


def dataset_pages(folders: list[Path], per_folder: int) -> list[Page]:
    """``per_folder`` pages of each data set folder (``pages/``), spread evenly over its pages in name order, read as
    ``centrum extract`` reads a file."""
    out = []
    for folder in folders:
        files = sorted(p for p in (folder / "pages").iterdir() if p.name.endswith((".html", ".html.gz")))
        step = max(1, len(files) // max(per_folder, 1))
        out += [Page(None, read_page_file(p)) for p in files[::step][:per_folder]]
    return out


def _extract(name: str, page: Page, config: Any) -> str:
    """``name``'s text of ``page`` as its command reads it ("" for a page it refuses)."""
    from .. import algorithms
    from ..evaluation.peers import run_html_peer

    try:
        if name == algorithms.SOURCE_DEFAULT:
            return algorithms.run_raw_html(name, page.html(), config).text or ""
        return run_html_peer(name, page.body, "en")
    except Exception:  # noqa: BLE001 - a page an extractor refuses counts as an empty answer
        return ""


def extractor_rates(read: list[Page], rounds: int = 1) -> list[dict[str, Any]]:
    """Pages/s and CPU time per page of ``source`` and the HTML peers on ``read``, in this process, each extractor
    given the page as its command reads it. The extractors take turns page by page and each is charged its own
    process CPU time, so a busy machine slows them alike and the ratio of their CPU times is what compares them
    (``cpu_ratio``: to resiliparse's). Each first answers the first page untimed: what a crawl pays once per
    process (imports, the model's loading, first-use caches) is not a page's cost; LightGBM's predictor is used when
    installed, as in a batch worker. ``rounds`` passes over the pages: the figures are those of the round whose
    ``source`` ratio is the median (``cpu_ratio_rounds`` lists every round's), as a machine's load drifts between
    runs minutes apart."""
    from .. import algorithms
    from ..algorithms.ensemble.model import native_predictor
    from ..evaluation.peers import missing_reason

    config = algorithms.raw_html_config(algorithms.SOURCE_DEFAULT)
    names = [algorithms.SOURCE_DEFAULT, *PEERS]
    missing = {n: missing_reason(n) for n in PEERS}
    running = [n for n in names if not missing.get(n)]
    native_predictor()  # as a batch worker does when it starts (batch.worker)
    for name in running if read else []:
        _extract(name, read[0], config)
    passes = []
    for _ in range(max(rounds, 1)):
        cpu, wall, empty = dict.fromkeys(running, 0.0), dict.fromkeys(running, 0.0), dict.fromkeys(running, 0)
        for page in read:
            for name in running:
                w0, c0 = time.perf_counter(), time.process_time()
                text = _extract(name, page, config)
                cpu[name] += time.process_time() - c0
                wall[name] += time.perf_counter() - w0
                empty[name] += not text.strip()
        passes.append((cpu, wall, empty))
    base = "resiliparse" if "resiliparse" in running else None

    def ratio(cpu: dict[str, float], name: str) -> float:
        return cpu[name] / cpu[base] if base and cpu[base] > 0 else float("nan")

    by_source = sorted(passes, key=lambda p: ratio(p[0], names[0]))
    cpu, wall, empty = by_source[(len(by_source) - 1) // 2]
    out: list[dict[str, Any]] = []
    for name in names:
        if name not in cpu:
            out.append({"extractor": name, "pages": 0, "error": missing[name]})
            continue
        e = {"extractor": name, "pages": len(read), "empty": empty[name], "seconds": round(wall[name], 2),
             "pages_per_s": round(len(read) / wall[name], 2) if wall[name] > 0 else 0.0,
             "cpu_ms_per_page": round(1000 * cpu[name] / max(len(read), 1), 3)}
        if base and cpu[base] > 0:
            e["cpu_ratio"] = round(ratio(cpu, name), 2)
            e["cpu_ratio_rounds"] = [round(ratio(p[0], name), 2) for p in passes]
        out.append(e)
    return out


def run_batch_bench(render_pages: int = 60, source_pages: int = 2000, actors: tuple[int, ...] = (1, 2),
                    algorithm: str | None = None, progress: bool = True, modes: tuple[bool, ...] = (False,),
                    engines: tuple[str, ...] = ("local", "ray"), extractor_pages: int = 300,
                    datasets: tuple[Path, ...] = (), per_dataset: int = 40, rounds: int = 1) -> dict[str, Any]:
    """``modes``: rendered (True) and/or ``--no-render`` (False) runs, each on every engine with each worker count.
    An engine that cannot run here (Ray not installed) is reported with its reason. ``datasets``: the extractors are
    also compared on ``per_dataset`` real pages of each (the synthetic crawl's pages are small and regular).
    ``rounds``: passes of the extractors over their pages (``extractor_rates``)."""
    from .. import algorithms

    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="centrum-batch-bench-") as tmp:
        root = Path(tmp)
        small, large = root / "rendered.warc.gz", root / "source.warc.gz"
        write_crawl(large, source_pages, paragraphs=SOURCE_PARAGRAPHS)
        extractors = extractor_rates(warc_pages(large, extractor_pages), rounds)
        if True in modes:
            write_crawl(small, render_pages)
        for render in modes:
            name = algorithm or (algorithms.DEFAULT_ALGORITHM if render else algorithms.SOURCE_DEFAULT)
            for engine in engines:
                for n in actors:
                    out = root / f"out-{engine}-{'r' if render else 's'}{n}"
                    run: dict[str, Any] = {"mode": "rendered" if render else "no-render", "engine": engine,
                                           "algorithm": name, "actors": n}
                    try:
                        summary = run_batch(BatchOptions(
                            inputs=[small if render else large], out=out, engine=engine,
                            worker=WorkerOptions(algorithm=name, render=render, markdown=render), actors=n,
                            rows_per_shard=500, progress=progress))
                    except BatchError as e:
                        runs.append({**run, "error": str(e)})
                        continue
                    runs.append({**run, "pages": summary.ok, "rows": summary.records, "failed": summary.failed,
                                 "start_s": round(summary.start_s or 0.0, 2), "seconds": round(summary.seconds, 2),
                                 "pages_per_s": round(summary.pages_per_s, 3),
                                 "steady_pages_per_s": round(summary.steady_pages_per_s, 3)})
    for r in runs:
        base = next((b for b in runs if (b["mode"], b["engine"], b["actors"]) == (r["mode"], r["engine"], 1)
                     and b.get("steady_pages_per_s")), None)
        if base and r.get("steady_pages_per_s"):
            r["speedup"] = round(r["steady_pages_per_s"] / base["steady_pages_per_s"], 2)
    report: dict[str, Any] = {"extractors": extractors, "runs": runs}
    if datasets:
        report["extractors_datasets"] = extractor_rates(dataset_pages(list(datasets), per_dataset), rounds)
        report["datasets"] = [str(d) for d in datasets]
    return report


def _extractor_table(title: str, rows: list[dict[str, Any]]) -> list[str]:
    lines = [title, "", "| extractor | pages | empty | wall s | pages/s | CPU ms/page | CPU x resiliparse |",
             "|---|---|---|---|---|---|---|"]
    for e in rows:
        if "error" in e:
            lines.append(f"| {e['extractor']} | - | - | - | not run: {e['error']} |||")
        else:
            ratio = f"{e['cpu_ratio']:.2f}" if "cpu_ratio" in e else "-"
            if len(e.get("cpu_ratio_rounds", [])) > 1:
                ratio += " (rounds: " + ", ".join(f"{r:.2f}" for r in e["cpu_ratio_rounds"]) + ")"
            lines.append(f"| {e['extractor']} | {e['pages']} | {e['empty']} | {e['seconds']:.1f} | "
                         f"{e['pages_per_s']:.1f} | {e['cpu_ms_per_page']:.2f} | {ratio} |")
    return lines


def format_batch_table(report: dict[str, Any]) -> str:
    lines = _extractor_table("Extractors alone on the synthetic crawl's pages (one process, taking turns page by "
                             "page):", report.get("extractors", []))
    if report.get("extractors_datasets"):
        lines += [""] + _extractor_table(f"Extractors alone on data-set pages ({', '.join(report['datasets'])}):",
                                         report["extractors_datasets"])
    lines += ["", "centrum batch (rows include the crawl's 4 static records, skipped):", "",
              "| mode | engine | algorithm | workers | pages | start s | wall s | pages/s (wall) | pages/s (steady) | "
              "speed-up | pages/day (steady) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["runs"]:
        if "error" in r:
            lines.append(f"| {r['mode']} | {r['engine']} | {r['algorithm']} | {r['actors']} | not run: "
                         f"{r['error'][:120]} |||||||")
            continue
        lines.append(f"| {r['mode']} | {r['engine']} | {r['algorithm']} | {r['actors']} | {r['pages']} | "
                     f"{r['start_s']:.1f} | {r['seconds']:.1f} | {r['pages_per_s']:.2f} | "
                     f"{r['steady_pages_per_s']:.2f} | {r.get('speedup', 1.0):.2f}x | "
                     f"{r['steady_pages_per_s'] * 86400:,.0f} |")
    return "\n".join(lines)
