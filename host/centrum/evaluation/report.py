"""``centrum eval`` outputs: ``report.md``, ``results.json``, per-page ``results.csv``, ``failures.csv`` and PNG
plots (F1 per data set, precision-recall, time vs page size).

Every table is given for all pages and split by render class (``styled``: at least one external stylesheet loaded
and none failed; ``unstyled``: otherwise, i.e. a stylesheet failed or none loaded; pages whose render failed are
in "all" only), because the visual algorithms are judged on a layout the author never intended when CSS is gone.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core.result import json_default
from ..gold.metrics import aggregate

SPLITS = ("all", "styled", "unstyled")
CSV_FIELDS = ["dataset", "id", "language", "render_class", "bytes", "elements", "render_ms", "extractor", "failure",
              "error", "ms", "kind", "p", "r", "f1", "acc", "lcs_p", "lcs_r", "lcs_f1", "lcs_f05", "block_p", "block_r",
              "block_f1", "node_p", "node_r", "node_f1", "aeb_tp", "aeb_fp",
              "aeb_fn", "sn_tp", "sn_fp", "sn_fn", "sn_tn", "gold_tokens", "pred_tokens", "lcs_capped"]


# Summary key -> page field: the per-language and per-page-type tables (page type from meta.jsonl where present).
GROUPS = {"languages": "language", "page_types": "page_type"}


def _in_split(page: dict[str, Any], split: str) -> bool:
    return split == "all" or page["render_class"] == split


def summarize(pages: Sequence[dict[str, Any]], extractors: Sequence[str]) -> dict[str, Any]:
    """Aggregate page results: per split, per data set and per language, per extractor; timings; failures."""
    datasets = sorted({p["dataset"] for p in pages})
    out: dict[str, Any] = {"datasets": {}, "pages": {}, "times": {}, "failures": {}, **{g: {} for g in GROUPS}}
    for split in SPLITS:
        sel = [p for p in pages if _in_split(p, split)]
        out["pages"][split] = {d: sum(1 for p in sel if p["dataset"] == d) for d in datasets}
        by_ds: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
        by_group: dict[str, dict[str, dict[str, list[float]]]] = {
            g: defaultdict(lambda: defaultdict(list)) for g in GROUPS}
        for p in sel:
            for row in p["rows"]:
                by_ds[p["dataset"]][row["extractor"]].append(row)
                for g, field in GROUPS.items():
                    if p.get(field):  # pages without a page type (most sets) are in no page-type row
                        by_group[g][p[field]][row["extractor"]].append(row["f1"])
        out["datasets"][split] = {d: {e: aggregate(by_ds[d][e]) for e in extractors if by_ds[d][e]}
                                  for d in datasets}
        for g in GROUPS:
            out[g][split] = {key: {e: {"pages": len(v[e]), "mean_f1": float(np.mean(v[e]))}
                                   for e in extractors if v[e]}
                             for key, v in sorted(by_group[g].items())}
    times: dict[str, list[float]] = defaultdict(list)
    for p in pages:
        if p.get("render_ms") is not None:  # as measured when rendered, also for snapshots now read from cache
            times["(render)"].append(float(p["render_ms"]))
        if p.get("parse_ms") is not None:
            times["(snapshot parse)"].append(float(p["parse_ms"]))
        for row in p["rows"]:
            if row["ms"] is not None:
                times[row["extractor"]].append(float(row["ms"]))
    out["times"] = {k: {"pages": len(v), "mean_ms": float(np.mean(v)), "median_ms": float(np.median(v)),
                        "p95_ms": float(np.percentile(v, 95)), "max_ms": float(np.max(v))}
                    for k, v in times.items() if v}
    fails: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    listing = []
    for p in pages:
        for row in p["rows"]:
            if row["failure"]:
                fails[row["extractor"]][p["dataset"]] += 1
                listing.append({"dataset": p["dataset"], "id": p["id"], "extractor": row["extractor"],
                                "failure": row["failure"], "error": row["error"]})
    out["failures"] = {"counts": {e: dict(v) for e, v in fails.items()}, "list": listing}
    out["render"] = {"pages": len(pages), "render_failed": sum(1 for p in pages if p["render_class"] == "unrendered"),
                     "from_cache": sum(1 for p in pages if p.get("from_cache")),
                     "styled": sum(1 for p in pages if p["render_class"] == "styled"),
                     "unstyled": sum(1 for p in pages if p["render_class"] == "unstyled")}
    return out


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def mean_over_datasets(ds: dict[str, dict[str, dict[str, float]]], extractor: str, key: str) -> float:
    vals = [v[extractor][key] for v in ds.values() if extractor in v and key in v[extractor]
            and not math.isnan(v[extractor][key])]
    return float(np.mean(vals)) if vals else float("nan")


def metric_table(summary: dict[str, Any], split: str, extractors: Sequence[str], key: str) -> str:
    ds = summary["datasets"][split]
    names = [d for d in ds if summary["pages"][split][d]]
    order = sorted(extractors, key=lambda e: -np.nan_to_num(mean_over_datasets(ds, e, key), nan=-1))
    def cell(d: str, e: str) -> Any:
        v = ds[d].get(e, {})
        if key == "f1" and v.get("f1") is not None and v.get("f1_ci") is not None and not math.isnan(v["f1"]):
            return f"{v['f1']:.3f} ± {v['f1_ci']:.3f}"
        return v.get(key)

    rows = [[e, *[cell(d, e) for d in names], mean_over_datasets(ds, e, key)] for e in order]
    header = ["extractor", *[f"{d} ({summary['pages'][split][d]})" for d in names], "mean"]
    return _table(header, rows)


def group_table(summary: dict[str, Any], group: str, split: str, extractors: Sequence[str]) -> str:
    """Mean per-page F1 per language (``group="languages"``) or page type (``"page_types"``), page counts in the
    header."""
    langs = summary[group][split]
    names = list(langs)
    counts = {lang: max((v["pages"] for v in langs[lang].values()), default=0) for lang in names}
    rows = [[e, *[langs[lang].get(e, {}).get("mean_f1") for lang in names]] for e in extractors]
    return _table(["extractor", *[f"{lang} ({counts[lang]})" for lang in names]], rows)


def write_markdown(path: Path, summary: dict[str, Any], extractors: Sequence[str], info: dict[str, Any]) -> None:
    r = summary["render"]
    parts = [
        "# Centrum evaluation report", "",
        *(["**Interrupted**: this report covers only the pages finished before the run was stopped.", ""]
          if info.get("interrupted") else []),
        f"Data sets: {', '.join(info['datasets'])}. Pages: {r['pages']} (styled {r['styled']}, unstyled "
        f"{r['unstyled']}, render failed {r['render_failed']}; snapshots from cache: {r['from_cache']}). "
        f"Tokenizer: `{info['tokenizer']}`. Window {info['window']}. Wall time {info['wall_s']:.0f} s with "
        f"{info['jobs']} job(s).", "",
        "**F1/P/R**: text gold — scrapinghub article-extraction-benchmark (4-token shingles, per-page normalised, "
        "P = mean over pages with a prediction, R = mean over pages with gold, F1 = 2PR/(P+R) of the means; ± = 1.96 "
        "std over 1000 bootstrap resamples of the pages, as evaluate.py); "
        "snippet gold (trafilatura-eval) — trafilatura's snippet counts summed over pages. **mean_f1** = plain "
        "mean of per-page F1 with every failure or empty answer counted as 0. **LCS** = token LCS P/R/F1/F0.5 "
        "(GCE/DANA papers), per-page mean, text gold only. **Text-block F1**: token-weighted share of whole lines "
        "found contiguously in the other side (per-page mean, text gold only). Render classes: styled = at least "
        "one external stylesheet loaded and none failed; unstyled = otherwise.", "",
    ]
    best = info.get("best") or {}
    if best:
        parts += ["**Best by mean F1 over the data sets (all pages)**: "
                  + "; ".join(f"{k}: `{v['name']}` ({v['mean_f1']:.3f})" for k, v in best.items()), ""]
    if info.get("unavailable"):
        parts += ["## Not available (not run)", ""]
        parts += [f"- `{k}`: {v}" for k, v in info["unavailable"].items()] + [""]
    for split in SPLITS:
        if not any(summary["pages"][split].values()):
            continue
        title = {"all": "All pages", "styled": "Styled renders", "unstyled": "Unstyled renders"}[split]
        parts += [f"## {title}", ""]
        for key, label in (("f1", "F1"), ("precision", "Precision"), ("recall", "Recall"),
                           ("mean_f1", "Mean per-page F1 (failures = 0)"), ("lcs_f1", "LCS F1"),
                           ("lcs_f05", "LCS F0.5"), ("block_f1", "Text-block F1"), ("node_f1", "DOM-node F1")):
            if key == "node_f1" and not any("node_f1" in v for d in summary["datasets"][split].values()
                                            for v in d.values()):
                continue  # no page with node-level gold in this run
            parts += [f"### {label} ({split})", "", metric_table(summary, split, extractors, key), ""]
        parts += [f"### Per language: mean per-page F1 ({split})", "",
                  group_table(summary, "languages", split, extractors), ""]
        if summary["page_types"][split]:
            parts += [f"### Per page type: mean per-page F1 ({split})", "",
                      group_table(summary, "page_types", split, extractors), ""]
    times = summary["times"]
    parts += ["## Time per page (ms)", "",
              "Algorithms: `run()` on the parsed snapshot; HTML peers: the adapter call on the page bytes; "
              "Readability.js: measured inside the page; (render): load + collection + Readability.js in Chromium, "
              "as measured when the snapshot was made (cached snapshots keep their render time).", "",
              _table(["extractor", "pages", "mean", "median", "p95", "max"],
                     [[k, v["pages"], v["mean_ms"], v["median_ms"], v["p95_ms"], v["max_ms"]]
                      for k, v in sorted(times.items(), key=lambda kv: kv[1]["mean_ms"])]), ""]
    counts = summary["failures"]["counts"]
    datasets = info["datasets"]
    parts += ["## Failures (scored 0)", "",
              "Kinds: `error` exception, `empty` no answer, `render` page could not be rendered, `crash` worker "
              "timed out or died. Full list: `failures.csv`.", "",
              _table(["extractor", *datasets, "total"],
                     [[e, *[counts.get(e, {}).get(d, 0) for d in datasets], sum(counts.get(e, {}).values())]
                      for e in extractors]), ""]
    # Group by (extractor, kind, message) so one missing file or one renderer bug is one line, not 1400.
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for f in summary["failures"]["list"]:
        message = " ".join(f["error"].split())[:160]
        groups[(f["extractor"], f["failure"], message)].append(f"{f['dataset']}/{f['id']}")
    if groups:
        ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        parts += ["Distinct failure messages (most frequent first):", ""]
        parts += [f"- `{e}` {kind} ×{len(where)}: {msg or '(no message)'} — e.g. {', '.join(where[:3])}"
                  for (e, kind, msg), where in ranked[:40]]
        if len(ranked) > 40:
            parts.append(f"- … {len(ranked) - 40} more distinct messages in failures.csv")
        parts.append("")
    parts += ["Plots: `f1_per_dataset.png`, `precision_recall.png`, `time_vs_size.png`.", ""]
    path.write_text("\n".join(parts), encoding="utf-8")


def write_csv(path: Path, pages: Sequence[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for p in pages:
            for row in p["rows"]:
                w.writerow({**{k: p.get(k) for k in ("dataset", "id", "language", "render_class", "bytes",
                                                     "elements", "render_ms")}, **row})


def write_failures(path: Path, summary: dict[str, Any]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["dataset", "id", "extractor", "failure", "error"])
        w.writeheader()
        w.writerows(summary["failures"]["list"])


def write_plots(out: Path, summary: dict[str, Any], pages: Sequence[dict[str, Any]], extractors: Sequence[str]
                ) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    ds = summary["datasets"]["all"]
    names = list(ds)
    order = sorted(extractors, key=lambda e: -np.nan_to_num(mean_over_datasets(ds, e, "f1"), nan=-1))
    grid = np.array([[ds[d].get(e, {}).get("f1", np.nan) for d in names] for e in order], dtype=float)
    fig, ax = plt.subplots(figsize=(1.3 * len(names) + 3, 0.4 * len(order) + 2))
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(order)), order)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center",
                        color="white" if grid[i, j] < 0.6 else "black", fontsize=8)
    fig.colorbar(im, ax=ax, label="F1")
    ax.set_title("F1 per data set")
    fig.tight_layout()
    fig.savefig(out / "f1_per_dataset.png", dpi=110)
    plt.close(fig)
    written.append("f1_per_dataset.png")

    fig, ax = plt.subplots(figsize=(7, 6))
    cmap = plt.get_cmap("tab20")
    for k, e in enumerate(order):
        ps = [ds[d][e]["precision"] for d in names if e in ds[d]]
        rs = [ds[d][e]["recall"] for d in names if e in ds[d]]
        ax.scatter(rs, ps, s=12, color=cmap(k % 20), alpha=0.4)
        mp, mr = mean_over_datasets(ds, e, "precision"), mean_over_datasets(ds, e, "recall")
        ax.scatter([mr], [mp], s=50, color=cmap(k % 20), label=e, edgecolor="black")
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_title("Precision vs recall (large: mean over data sets; small: one data set)")
    ax.legend(fontsize=7, loc="lower left", ncol=2)
    fig.tight_layout()
    fig.savefig(out / "precision_recall.png", dpi=110)
    plt.close(fig)
    written.append("precision_recall.png")

    fig, ax = plt.subplots(figsize=(8, 6))
    for k, e in enumerate(order):
        xs = [p["bytes"] for p in pages for r in p["rows"] if r["extractor"] == e and r["ms"]]
        ys = [r["ms"] for p in pages for r in p["rows"] if r["extractor"] == e and r["ms"]]
        if xs:
            ax.scatter(xs, ys, s=6, color=cmap(k % 20), alpha=0.5, label=e)
    xs = [p["bytes"] for p in pages if p.get("render_ms")]
    if xs:
        ax.scatter(xs, [p["render_ms"] for p in pages if p.get("render_ms")], s=6,
                   color="black", marker="x", alpha=0.5, label="(render)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("page size (bytes of HTML)")
    ax.set_ylabel("time (ms)")
    ax.set_title("Time vs page size")
    ax.legend(fontsize=7, markerscale=2, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "time_vs_size.png", dpi=110)
    plt.close(fig)
    written.append("time_vs_size.png")
    return written


def write_all(out: Path, pages: Sequence[dict[str, Any]], extractors: Sequence[str], info: dict[str, Any]
              ) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(pages, extractors)
    ds = summary["datasets"]["all"]
    best = {}
    for label, group in (("algorithm", info.get("algorithms_run", [])), ("peer", info.get("peers_run", []))):
        scored = [(mean_over_datasets(ds, e, "f1"), e) for e in group]
        scored = [(v, e) for v, e in scored if not math.isnan(v)]
        if scored:
            v, e = max(scored)
            best[label] = {"name": e, "mean_f1": v}
    info["best"] = best  # in place: the caller's generated table (docs/evaluation.md) names it too
    write_csv(out / "results.csv", pages)
    write_failures(out / "failures.csv", summary)
    info["plots"] = write_plots(out, summary, pages, extractors)
    write_markdown(out / "report.md", summary, extractors, info)
    doc = {"info": info, "extractors": list(extractors),
           "summary": {k: v for k, v in summary.items() if k != "failures"},
           "failures": summary["failures"]}
    (out / "results.json").write_text(json.dumps(_no_nan(doc), indent=1, default=json_default), encoding="utf-8")
    return summary


def _no_nan(o: Any) -> Any:
    """NaN (an undefined mean) becomes null: strict JSON readers reject NaN."""
    if isinstance(o, float) and math.isnan(o):
        return None
    if isinstance(o, dict):
        return {k: _no_nan(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_no_nan(v) for v in o]
    return o


README_START = "<!-- centrum-eval:start -->"
README_END = "<!-- centrum-eval:end -->"


def readme_block(summary: dict[str, Any], extractors: Sequence[str], info: dict[str, Any]) -> str:
    """The generated table of docs/evaluation.md: F1 per data set (all pages) with the mean, and how it was produced."""
    r = summary["render"]
    return "\n".join([
        f"F1 per data set (all pages; {r['pages']} pages, {r['unstyled']} rendered unstyled, "
        f"{r['render_failed']} render failures scored 0), generated by `{info.get('command', 'centrum eval')}` "
        f"in {info['wall_s'] / 60:.1f} min with {info['jobs']} job(s); styled/unstyled splits, precision, recall, "
        "LCS, per-language tables and timings are in the run's `report.md`.", "",
        metric_table(summary, "all", extractors, "f1"), "",
        *(["Best by mean F1 over the data sets: " + "; ".join(
            f"{k} `{v['name']}` ({v['mean_f1']:.3f})" for k, v in info["best"].items()) + ".", ""]
          if info.get("best") else [])])


def update_readme(path: Path, block: str) -> bool:
    """Replace the text between the eval markers of ``path``; False when the markers are absent."""
    text = path.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        return False
    path.write_text(text[: start + len(README_START)] + "\n" + block + text[end:], encoding="utf-8")
    return True
