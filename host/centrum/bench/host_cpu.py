"""The host's side of a press in CPU time (``centrum bench --host-cpu``): what the host does once a snapshot has
arrived, stage by stage, measured with ``time.process_time`` in this process, so that the figures hold on a machine
that other jobs keep busy (wall clocks there measure the load).

Stages, as the host runs the default algorithm on a press (no debug trace; the proposers without their text):
``parse`` (:func:`centrum.core.snapshot.parse_snapshot` of the decoded object), each base algorithm the models read,
``features`` (the ensemble's candidates and feature matrix), ``scorer`` (the candidate model), ``blocks+output`` (the
block filter's rows, its model and the answer's text), and ``host`` (parse and the whole ensemble run again on a fresh
parse, as the host does; the sum of the others up to what the shared per-snapshot arrays save). Pages: the synthetic
pages of :mod:`centrum.bench.synthetic` rendered by the headless renderer, and snapshots of real pages taken from the
render cache (``centrum eval``'s, evenly over its entries), reported as median and 90th percentile.
"""

from __future__ import annotations

import gzip
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .. import algorithms
from ..core.snapshot import parse_snapshot
from ..core.trace import wanting


def press_stages(raw: dict[str, Any]) -> dict[str, float]:
    """CPU milliseconds of each stage of the host's press on the decoded snapshot ``raw`` (see the module doc)."""
    from ..algorithms import ensemble as E

    out: dict[str, float] = {}
    t = time.process_time()
    snap = parse_snapshot(raw)
    out["parse"] = time.process_time() - t
    cfg = E.Config()
    model, block_model = E.load_model(cfg.weights), E.load_block_model(cfg.block_weights)
    results = {}
    token = algorithms._DEPTH.set(1)  # as the ensemble runs them: proposers read nodes and candidates only
    try:
        with wanting(debug=False, text=False):
            for name in E.proposers_of(model, block_model):
                t = time.process_time()
                results[name] = algorithms.run(name, snap, E.BASE_PARAMS.get(name))
                out[name] = time.process_time() - t
    finally:
        algorithms._DEPTH.reset(token)
    with wanting(debug=False):
        t = time.process_time()
        pm = E.prepare(snap, results, cfg)
        out["features"] = time.process_time() - t
        if pm.candidates:
            t = time.process_time()
            score = model.predict(pm.X[:, : len(model.feature_names)])
            out["scorer"] = time.process_time() - t
            t = time.process_time()
            E.output(snap, pm.candidates[int(np.argsort(-score, kind="stable")[0])], pm, cfg, block_model)
            out["blocks+output"] = time.process_time() - t
        del snap, pm, results
        t = time.process_time()
        algorithms.run(algorithms.DEFAULT_ALGORITHM, parse_snapshot(raw))
        out["host"] = time.process_time() - t
    return {k: v * 1000 for k, v in out.items()}


def warm() -> None:
    """As the host warms up: LightGBM's predictor imported when installed (:func:`native_predictor`)."""
    from ..algorithms.ensemble.model import native_predictor

    native_predictor()


def _median_stages(raw: dict[str, Any], repeat: int) -> dict[str, float]:
    press_stages(raw)  # warm: models loaded, regexes compiled, as in the warmed host
    runs = [press_stages(raw) for _ in range(max(repeat, 1))]
    return {k: statistics.median(r.get(k, 0.0) for r in runs) for k in runs[0]}


def cached_snapshots(count: int, root: Path | None = None) -> list[Path]:
    """``count`` entries of the render cache, evenly over its sorted file names (a fixed sample while it holds the
    same entries)."""
    from ..evaluation.cache import SnapshotCache

    files = sorted((root or SnapshotCache().dir).glob("*.json.gz"))
    step = max(1, len(files) // max(count, 1))
    return files[::step][:count]


def _read_entry(path: Path) -> dict[str, Any] | None:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, EOFError, ValueError):
        return None
    raw = entry.get("raw") if isinstance(entry, dict) else None
    return raw if isinstance(raw, dict) else None


def synthetic_snapshots(sizes: list[int]) -> dict[str, dict[str, Any]]:
    """The synthetic pages of ``sizes`` elements, rendered with their source (what the press sends)."""
    from ..core.render import Renderer
    from .synthetic import synthetic_html

    out = {}
    with tempfile.TemporaryDirectory(prefix="centrum-host-cpu-") as tmp, Renderer(timeout_s=180) as renderer:
        for n in sizes:
            path = Path(tmp) / f"synthetic-{n}.html"
            path.write_text(synthetic_html(n), encoding="utf-8")
            out[f"synthetic-{n // 1000}k" if n >= 1000 else f"synthetic-{n}"] = renderer.render(path, source=True).raw
    return out


def run_host_cpu(sizes: list[int], real: int, repeat: int, snapshots: dict[str, dict[str, Any]] | None = None,
                 cache: Path | None = None) -> dict[str, Any]:
    """Per synthetic size: the median stages of ``repeat`` runs and the element count; over ``real`` pages of the
    render cache (``cache``: its folder, by default the user's; one run each after a warm one): per stage the median
    and 90th percentile; log-log slopes over the sizes. ``snapshots``: decoded snapshots by name to use instead of
    rendering the synthetic pages."""
    from .benchmark import loglog_slope

    warm()
    rows = []
    for name, raw in (snapshots if snapshots is not None else synthetic_snapshots(sizes)).items():
        stages = _median_stages(raw, repeat)
        rows.append({"page": name, "elements": int(parse_snapshot(raw).n), **stages})
    report: dict[str, Any] = {"rows": rows, "repeat": repeat}
    if len(rows) > 1:
        ns = [r["elements"] for r in rows]
        report["slopes"] = {k: loglog_slope(ns, [r[k] for r in rows]) for k in rows[0] if k not in ("page", "elements")}
    pages = []
    for path in cached_snapshots(real, cache) if real > 0 else []:
        raw = _read_entry(path)
        if raw is not None:
            press_stages(raw)
            pages.append(press_stages(raw))
    if pages:
        keys = list(dict.fromkeys(k for p in pages for k in p))
        report["real"] = {"pages": len(pages), **{k: {"median": float(np.median([p.get(k, 0.0) for p in pages])),
                                                      "p90": float(np.percentile([p.get(k, 0.0) for p in pages], 90))}
                                                  for k in keys}}
    return report


def format_host_cpu(report: dict[str, Any]) -> str:
    rows = report["rows"]
    keys = [k for k in (rows[0] if rows else report.get("real", {})) if k not in ("page", "elements", "pages")]
    lines = ["| page | elements | " + " | ".join(f"{k} ms" for k in keys) + " |", "|---" * (len(keys) + 2) + "|"]
    lines += [f"| {r['page']} | {r['elements']} | " + " | ".join(f"{r[k]:.1f}" for k in keys) + " |" for r in rows]
    real = report.get("real")
    if real:
        for q in ("median", "p90"):
            lines.append(f"| {real['pages']} cached real pages ({q}) | | "
                         + " | ".join(f"{real[k][q]:.1f}" if k in real else "" for k in keys) + " |")
    if report.get("slopes"):
        lines.append("\nlog-log slopes over the synthetic sizes (1 = linear): "
                     + ", ".join(f"{k} {v:.2f}" for k, v in report["slopes"].items()))
    return "\n".join(lines)
