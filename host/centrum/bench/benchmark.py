"""The whole-pipe benchmark behind ``centrum bench``.

Measured in one run, on deterministic synthetic pages (``centrum.bench.synthetic``) of growing size and optionally on
data-set pages: collection time in the page, snapshot size, the native-messaging round trip through a real
``centrum-host`` process, host parse time, each algorithm's time, and Mozilla Readability.js timed in the same
page as the anchor. On the synthetic pages, the press of the extension's button to the highlight on screen
(``centrum.bench.pipeline``: Chromium with the unpacked extension and the real host, first and warm presses, split
by stage) and the host's peak memory. Growth with page size is fitted as the slope on a log-log scale (1 = linear).

A benchmark never fails anything for being slow: it reports.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import algorithms
from ..core.snapshot import parse_snapshot
from .pipeline import STAGES
from .synthetic import synthetic_html

# Targets from issue #10 (this 2-core machine): shown beside the figures, never enforced.
TARGETS = {
    "collect_ms@10k": 100.0,
    "bytes_per_element": 100.0,
    "pipe_ms@10k": 250.0,
    "cold_start_ms": 300.0,
    "algorithm_ms@10k": 20.0,
}


@dataclass
class Row:
    """Figures for one page."""

    name: str
    elements: int
    text_nodes: int = 0
    collect_ms: float = float("nan")
    snapshot_bytes: int = 0
    source_bytes: int = 0
    parse_ms: float = float("nan")
    roundtrip_ms: float = float("nan")  # request write -> last chunk read, warm host, default algorithm
    response_bytes: int = 0
    readability_ms: float = float("nan")
    algorithms_ms: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    pipeline: dict[str, Any] = field(default_factory=dict)  # centrum.bench.pipeline figures (synthetic pages)

    @property
    def bytes_per_element(self) -> float:
        return self.snapshot_bytes / max(self.elements, 1)


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(max(repeat, 1)):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


class HostProcess:
    """A real ``centrum-host`` process spoken to over pipes, as the browser does."""

    def __init__(self) -> None:
        from ..native import framing

        self.framing = framing
        t0 = time.perf_counter()
        env = dict(os.environ)
        self.proc = subprocess.Popen([sys.executable, "-m", "centrum.native.nativehost"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.request({"type": "ping"})
        self.cold_start_ms = (time.perf_counter() - t0) * 1000
        self._next = 0

    def request(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Send one request, reassemble the chunked answer; returns (response, bytes received)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        msg_id = f"b{time.perf_counter_ns()}"
        self.framing.write_message(self.proc.stdin, {"v": 1, "id": msg_id, **body})
        self.proc.stdin.flush()
        try:
            return self.framing.read_response(self.proc.stdout)
        except self.framing.FrameError:
            raise RuntimeError("centrum-host exited during the benchmark") from None

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def measure_snapshot(row: Row, raw: dict[str, Any], names: list[str], repeat: int,
                     host: HostProcess | None) -> None:
    """Size, parse time, each algorithm and the host round trip for one collected snapshot."""
    source = raw.get("source")
    bare = {k: v for k, v in raw.items() if k != "source"}
    text = json.dumps(bare, separators=(",", ":"), ensure_ascii=False)
    row.snapshot_bytes = len(text.encode("utf-8"))
    row.source_bytes = len(source.encode("utf-8")) if isinstance(source, str) else 0
    full = json.dumps(raw, separators=(",", ":"), ensure_ascii=False)
    row.parse_ms = median_ms(lambda: parse_snapshot(json.loads(full)), repeat)
    snap = parse_snapshot(json.loads(full))
    row.elements, row.text_nodes = snap.n, snap.m
    for name in names:
        try:
            # Fresh parse per run: derived arrays are cached on the snapshot and a real request starts cold.
            snaps = [parse_snapshot(json.loads(full)) for _ in range(max(repeat, 1))]
            it = iter(snaps)
            row.algorithms_ms[name] = median_ms(lambda n=name, i=it: algorithms.run(n, next(i)), repeat)
        except Exception as e:  # noqa: BLE001 - a benchmark reports failures, it does not stop on them
            row.errors[name] = f"{type(e).__name__}: {e}"
    if host is not None:
        try:
            request = {"type": "extract", "algorithm": algorithms.DEFAULT_ALGORITHM, "debug": False, "snapshot": raw}
            t0 = time.perf_counter()
            response, row.response_bytes = host.request(request)
            row.roundtrip_ms = (time.perf_counter() - t0) * 1000
            if response.get("status") != "ok":
                row.errors["host"] = str(response.get("error"))
        except Exception as e:  # noqa: BLE001
            row.errors["host"] = f"{type(e).__name__}: {e}"


def loglog_slope(sizes: Iterable[float], values: Iterable[float]) -> float:
    """Slope of log(value) against log(size): 1 is linear growth, 2 quadratic."""
    xs, ys = np.asarray(list(sizes), float), np.asarray(list(values), float)
    ok = np.isfinite(ys) & (ys > 0) & (xs > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs[ok]), np.log(ys[ok]), 1)[0])


def real_pages(root: Path, count: int) -> list[Path]:
    """``count`` pages of the data sets under ``root`` (each ``<set>/pages/*.html``), taken in turn from every set in
    name order, so that every set is in the row."""
    sets = [sorted((d / "pages").glob("*.html")) for d in sorted(root.glob("*")) if (d / "pages").is_dir()]
    out: list[Path] = []
    for k in range(max((len(s) for s in sets), default=0)):
        out += [s[k] for s in sets if k < len(s)]
    return out[:count]


def run_bench(sizes: list[int], dataset_dirs: list[Path], per_dataset: int, repeat: int, names: list[str],
              use_host: bool = True, readability: bool = True, progress: bool = True,
              pipeline: bool = True, real: tuple[Path, int] | None = None) -> dict[str, Any]:
    extra: dict[str, str] = {}
    if readability:
        try:
            from ..evaluation.peers import readability_js_extra

            extra = readability_js_extra()
        except ImportError:
            extra = {}
    host = HostProcess() if use_host else None
    with tempfile.TemporaryDirectory(prefix="centrum-bench-") as tmp:
        synthetic: dict[str, Path] = {}
        for n in sizes:
            path = Path(tmp) / f"synthetic-{n}.html"
            path.write_text(synthetic_html(n), encoding="utf-8")
            synthetic[f"synthetic-{n // 1000}k" if n >= 1000 else f"synthetic-{n}"] = path
        pages = list(synthetic.items())
        for d in dataset_dirs:
            files = sorted((d / "pages").glob("*.html"))[:per_dataset]
            pages += [(f"{d.name}/{f.stem[:24]}", f) for f in files]
        rows = _rendered_rows(pages, extra, names, repeat, host, progress)
        if pipeline and synthetic:
            from .pipeline import run_pipeline

            figures = run_pipeline(synthetic, repeat, extra.get("readability_js"))
            for row in rows:
                row.pipeline = dict(figures.get(row.name, {}))
                if "error" in row.pipeline:
                    row.errors["pipeline"] = str(row.pipeline.pop("error"))
    cold = host.cold_start_ms if host else float("nan")
    if host:
        host.close()
    report = {"rows": [row_json(r) for r in rows], "cold_start_ms": cold, "slopes": _slopes(rows, names),
              "algorithms": names, "targets": TARGETS, "cpu_count": os.cpu_count()}
    if pipeline and real and extra.get("readability_js"):
        from .pipeline import run_real_pages

        report["real_pages"] = run_real_pages(real[0], real_pages(real[0], real[1]), extra["readability_js"])
    return report


def _rendered_rows(pages: list[tuple[str, Path]], extra: dict[str, str], names: list[str], repeat: int,
                   host: HostProcess | None, progress: bool) -> list[Row]:
    """Each page rendered by the headless renderer: collection, sizes, parse, algorithms, host round trip."""
    from tqdm import tqdm

    from ..core.render import Renderer

    rows: list[Row] = []
    with Renderer(timeout_s=60) as renderer:
        for name, path in tqdm(pages, desc="bench", unit="page", disable=not progress):
            row = Row(name=name, elements=0)
            try:
                out = renderer.render(path, source=True, extra=extra)
            except Exception as e:  # noqa: BLE001
                row.errors["render"] = f"{type(e).__name__}: {e}"
                rows.append(row)
                continue
            row.collect_ms = float(out.raw.get("page", {}).get("timing", {}).get("collect_ms", float("nan")))
            rj = (out.extra or {}).get("readability_js")
            if isinstance(rj, dict) and rj.get("ms") is not None:
                row.readability_ms = float(rj["ms"])
            measure_snapshot(row, out.raw, names, repeat, host)
            rows.append(row)
    return rows


def _slopes(rows: list[Row], names: list[str]) -> dict[str, float]:
    synthetic = [r for r in rows if r.name.startswith("synthetic")]
    slopes: dict[str, float] = {}
    if len(synthetic) < 2:
        return slopes
    ns = [r.elements for r in synthetic]
    slopes["collect"] = loglog_slope(ns, [r.collect_ms for r in synthetic])
    slopes["snapshot_bytes"] = loglog_slope(ns, [r.snapshot_bytes for r in synthetic])
    slopes["parse"] = loglog_slope(ns, [r.parse_ms for r in synthetic])
    slopes["roundtrip"] = loglog_slope(ns, [r.roundtrip_ms for r in synthetic])
    slopes["readability_js"] = loglog_slope(ns, [r.readability_ms for r in synthetic])
    for name in names:
        slopes[name] = loglog_slope(ns, [r.algorithms_ms.get(name, float("nan")) for r in synthetic])
    if any(r.pipeline.get("pipeline_split") for r in synthetic):
        nan = float("nan")
        slopes["pipeline"] = loglog_slope(ns, [r.pipeline.get("pipeline_ms", nan) for r in synthetic])
        for stage in STAGES:
            slopes[f"pipeline.{stage}"] = loglog_slope(
                ns, [r.pipeline.get("pipeline_split", {}).get(stage, nan) for r in synthetic])
        slopes["peak_rss_mb"] = loglog_slope(ns, [r.pipeline.get("peak_rss_mb", nan) for r in synthetic])
    return slopes


def row_json(r: Row) -> dict[str, Any]:
    return {"name": r.name, "elements": r.elements, "text_nodes": r.text_nodes, "collect_ms": r.collect_ms,
            "snapshot_bytes": r.snapshot_bytes, "bytes_per_element": r.bytes_per_element,
            "source_bytes": r.source_bytes, "parse_ms": r.parse_ms, "roundtrip_ms": r.roundtrip_ms,
            "response_bytes": r.response_bytes, "readability_ms": r.readability_ms,
            "algorithms_ms": r.algorithms_ms, "errors": r.errors, **r.pipeline}


def _fmt(v: float, digits: int = 1) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.{digits}f}"


def format_table(report: dict[str, Any]) -> str:
    names = report["algorithms"]
    head = ["page", "elements", "collect ms", "bytes/el", "MB", "parse ms", "host rt ms", "Readability.js ms"]
    head += [f"{n} ms" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in report["rows"]:
        ra = r["readability_ms"]
        cells = [r["name"], str(r["elements"]), _fmt(r["collect_ms"]), _fmt(r["bytes_per_element"], 0),
                 _fmt(r["snapshot_bytes"] / 1e6, 2), _fmt(r["parse_ms"]), _fmt(r["roundtrip_ms"]), _fmt(ra)]
        for n in names:
            ms = r["algorithms_ms"].get(n, float("nan"))
            ratio = f" ({ms / ra:.2f}×RJS)" if np.isfinite(ms) and ra and np.isfinite(ra) and ra > 0 else ""
            cells.append(_fmt(ms, 2) + ratio if n not in r["errors"] else "error")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *format_pipeline(report), *format_real(report)]
    lines.append("")
    lines.append(f"host cold start (spawn → first answer): {_fmt(report['cold_start_ms'])} ms "
                 f"(target < {TARGETS['cold_start_ms']:.0f})")
    if report.get("predictors"):
        lines.append(f"predictors: {report['predictors']}")
    if report["slopes"]:
        lines.append("log-log slopes over synthetic sizes (1 = linear): " + ", ".join(
            f"{k} {_fmt(v, 2)}" for k, v in report["slopes"].items()))
    errors = [(r["name"], k, v) for r in report["rows"] for k, v in r["errors"].items()]
    for name, k, v in errors[:20]:
        lines.append(f"error: {name}: {k}: {v[:200]}")
    return "\n".join(lines)


def format_pipeline(report: dict[str, Any]) -> list[str]:
    """Press -> highlight per synthetic page: warm median and first press, the split, Readability.js in the same
    tab, the ratio, request size and the host's peak memory."""
    rows = [r for r in report["rows"] if "pipeline_ms" in r]
    if not rows:
        return []
    head = ["page", "elements", "press→highlight ms", "first press ms", "spawn press ms", "warm-up ms",
            *[f"{s} ms" for s in STAGES], "Readability.js ms (same tab)", "ratio", "request KB", "bytes/el (no source)",
            "host peak RSS MB"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        split = r.get("pipeline_split", {})
        rj = r.get("readability_page_ms", float("nan"))
        ms = r.get("pipeline_ms", float("nan"))
        ratio = f"{ms / rj:.2f}×" if np.isfinite(ms) and np.isfinite(rj) and rj > 0 else "—"
        cells = [r["name"], str(r["elements"]), _fmt(ms), _fmt(r.get("pipeline_first_ms", float("nan"))),
                 _fmt(r.get("pipeline_spawn_ms", float("nan"))), _fmt(r.get("host_warm_up_ms", float("nan")), 0),
                 *[_fmt(split.get(s, float("nan"))) for s in STAGES], _fmt(rj), ratio,
                 _fmt(r.get("request_bytes", 0) / 1e3, 0), _fmt(r["bytes_per_element"], 0),
                 _fmt(r.get("peak_rss_mb", float("nan")), 0)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def format_real(report: dict[str, Any]) -> list[str]:
    """The real-page row: press→highlight against Readability.js in the same tab, page by page."""
    real = report.get("real_pages")
    if not real:
        return []
    pages = real["pages"]
    failed = sum(1 for p in pages if "error" in p)
    return ["", "| real pages | pressed | with a highlight | press→highlight ms (median) | Readability.js ms (median) "
                "| ratio median | ratio p90 |", "|---|---|---|---|---|---|---|",
            f"| {len(pages)} of the data sets | {len(pages) - failed} | {real['measured']} | "
            f"{_fmt(real['press_ms_median'])} | {_fmt(real['readability_ms_median'])} | "
            f"{_fmt(real['ratio_median'], 2)}× | {_fmt(real['ratio_p90'], 2)}× |",
            *(["real pages, median ms by stage: " + ", ".join(f"{k} {_fmt(v)}" for k, v in split.items())]
              if (split := real.get("split_median")) else [])]


def plot(report: dict[str, Any], path: Path) -> bool:
    """Log-log plot of each cost against page size (synthetic pages). False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in report["rows"] if r["name"].startswith("synthetic") and r["elements"]]
    if not rows:
        return False
    ns = [r["elements"] for r in rows]
    series = {"collect (in page)": [r["collect_ms"] for r in rows], "host parse": [r["parse_ms"] for r in rows],
              "native round trip": [r["roundtrip_ms"] for r in rows],
              "Readability.js": [r["readability_ms"] for r in rows]}
    for name in report["algorithms"]:
        series[name] = [r["algorithms_ms"].get(name, float("nan")) for r in rows]
    if any("pipeline_ms" in r for r in rows):
        series["press → highlight (extension)"] = [r.get("pipeline_ms", float("nan")) for r in rows]
        series["Readability.js (same tab)"] = [r.get("readability_page_ms", float("nan")) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, ys in series.items():
        ax.plot(ns, ys, marker="o", label=f"{label} (slope {_fmt(loglog_slope(ns, ys), 2)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("elements")
    ax.set_ylabel("ms")
    ax.set_title("Centrum pipe cost vs page size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def dana_throughput(dataset_dirs: list[Path], variants: tuple[str, ...] = ("dana", "danag", "addanag"),
                    repeat: int = 1) -> dict[str, dict[str, float]]:
    """MB/s of each DANA variant on the raw HTML of every page, as ``centrum extract --no-render`` gets it: bytes read
    into memory first (disk is not timed), charset handling and text output timed. The median of ``repeat`` passes
    over all pages is kept (the machine is shared: single passes vary by +-15 %)."""
    from ..algorithms import dana

    blobs = [f.read_bytes() for d in dataset_dirs for f in sorted((d / "pages").glob("*.html"))]
    mb = sum(len(b) for b in blobs) / 1e6
    out: dict[str, dict[str, float]] = {}
    for v in variants:
        runs = []
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            for b in blobs:
                dana.run_source(b, None, variant=v)
            runs.append(time.perf_counter() - t0)
        s = statistics.median(runs)
        out[v] = {"mb_per_s": mb / s if s else float("inf"), "mb": mb, "pages": len(blobs), "seconds": s,
                  "runs_s": runs}
    return out
