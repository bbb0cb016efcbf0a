"""``centrum train DATASET_DIR... [--out FILE] [--seed N] [--cv]``: fit the ensemble's scorer on rendered data sets.

Snapshots come from the ``centrum eval`` cache (run ``centrum eval`` on the data sets first; pages without a cached
snapshot are skipped and counted) or from ``--snapshots DIR`` (``DIR/<dataset>/<id>.json`` raw snapshots). With
``--cv`` the leave-one-data-set-out table (ensemble trained without the data set vs every algorithm and peer on the
same pages) is printed and written to ``--report``. Same data and seed give byte-identical weights.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from tqdm import tqdm


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("datasets", nargs="+", type=Path, help="data set folders (pages/, gold/, meta.jsonl)")
    parser.add_argument("--out", type=Path, default=Path("ensemble-weights.json"),
                        help="weights file to write (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="row subsampling seed (default: %(default)s)")
    parser.add_argument("--cv", action="store_true", help="also run leave-one-data-set-out validation")
    parser.add_argument("--report", type=Path, default=None, help="write the tables as markdown here")
    parser.add_argument("--limit", type=int, default=None, help="first K pages (id order) of each data set")
    parser.add_argument("--cache", default=None, metavar="DIR", help="snapshot cache folder (as centrum eval)")
    parser.add_argument("--snapshots", default=None, metavar="DIR",
                        help="read raw snapshots from DIR/<dataset>/<id>.json instead of the eval cache")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for feature extraction")
    parser.add_argument("--rounds", type=int, default=None, help="boosting rounds (default: FitOptions)")
    parser.add_argument("--learning-rate", type=float, default=None)
    parser.add_argument("--peers", default="all", help="peers scored on the same pages: all, none or a list")
    parser.add_argument("--no-record-cache", action="store_true", help="recompute page records (features, labels)")


def _fmt(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def markdown(tab: dict[str, dict[str, float]], columns: list[str]) -> str:
    head = ["data set", "pages", *columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    means = {c: [] for c in columns}  # type: dict[str, list[float]]
    for ds, row in tab.items():
        lines.append("| " + " | ".join([ds, str(int(row["pages"])), *(_fmt(row.get(c, float("nan")))
                                                                      for c in columns)]) + " |")
        for c in columns:
            if c in row and not math.isnan(row[c]):
                means[c].append(row[c])
    lines.append("| **mean** | " + str(int(sum(r["pages"] for r in tab.values()))) + " | " + " | ".join(
        _fmt(sum(v) / len(v)) if v else "-" for v in means.values()) + " |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..algorithms import _ensemble_train as T
    from ..evaluation import peers as peer_mod
    from ..evaluation.datasets import DatasetError, load_dataset

    try:
        datasets = [load_dataset(d, args.limit) for d in args.datasets if d.is_dir()]
    except DatasetError as e:
        print(f"centrum train: {e}", file=sys.stderr)
        return 2
    if not datasets:
        print("centrum train: no data set folders given", file=sys.stderr)
        return 2
    if args.peers == "none":
        peers: tuple[str, ...] = ()
    elif args.peers == "all":
        peers = T.PEERS
    else:
        peers = tuple(p for p in args.peers.split(",") if p)
        unknown = [p for p in peers if p not in peer_mod.PEERS]
        if unknown:
            print(f"centrum train: unknown peers {unknown}", file=sys.stderr)
            return 2
    opts = T.ExtractOptions(cache_dir=args.cache, snapshots=args.snapshots, peers=peers,
                            use_record_cache=not args.no_record_cache)
    items = [it for ds in datasets for it in ds.pages]
    t0 = time.perf_counter()
    records, skipped = [], {}  # type: ignore[var-annotated]
    for item, rec in zip(items, tqdm(T.extract_all(items, opts, args.jobs), total=len(items), desc="pages",
                                     file=sys.stderr), strict=True):
        if isinstance(rec, str):
            skipped.setdefault(item.dataset, []).append(f"{item.id}: {rec}")
        else:
            records.append(rec)
    print(f"{len(records)} pages with features, {sum(len(v) for v in skipped.values())} skipped "
          f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    for ds, why in skipped.items():
        print(f"  {ds}: {len(why)} skipped, e.g. {why[0]}", file=sys.stderr)
    if not records:
        print("centrum train: no page has a rendered snapshot; run `centrum eval` on the data sets first",
              file=sys.stderr)
        return 1
    fo = T.FitOptions(seed=args.seed)
    if args.rounds is not None or args.learning_rate is not None:
        from dataclasses import replace

        fo = replace(fo, **{k: v for k, v in (("rounds", args.rounds), ("learning_rate", args.learning_rate))
                            if v is not None})
    model = T.fit(records, fo)
    model.meta["pages_per_dataset"] = {ds.name: sum(1 for r in records if r.dataset == ds.name) for ds in datasets}
    model.save(args.out)
    print(f"weights: {args.out} ({len(model.feature)} stumps, {model.meta.get('candidates', 0)} candidates)")
    extractors = [e for e in ("semantic", "gce", "zoning", "r4", "dana", "danag", "addanag", *peers)]
    choosers = {"ensemble (in-sample)": lambda r: T.choose(model, r),
                "oracle": lambda r: int(r.y.argmax()) if r.y.size else -1}
    text = ["## Ensemble training (in-sample: the training pages themselves)", "",
            markdown(T.table(records, choosers, extractors), [*choosers, *extractors])]
    if args.cv:
        picks, _ = T.lodo(records, fo)
        cv_choosers = {"ensemble (LODO)": lambda r: picks[f"{r.dataset}/{r.id}"],
                       "oracle": lambda r: int(r.y.argmax()) if r.y.size else -1}
        text += ["", "## Leave-one-data-set-out (ensemble trained on the other data sets)", "",
                 markdown(T.table(records, cv_choosers, extractors), [*cv_choosers, *extractors])]
    out = "\n".join(text) + "\n"
    print(out)
    if args.report:
        args.report.write_text(out, encoding="utf-8")
    return 0
