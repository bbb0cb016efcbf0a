"""``centrum train DATASET_DIR... [--out FILE] [--seed N] [--cv]``: fit the ensemble's candidate scorer and block
filter on rendered data sets.

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
                        help="candidate scorer weights to write (default: %(default)s)")
    parser.add_argument("--blocks-out", type=Path, default=None,
                        help="block filter weights to write (default: OUT with -blocks before .json)")
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
    block_model = T.fit_blocks(records, fo)
    blocks_out = args.blocks_out or args.out.with_name(args.out.stem + "-blocks.json")
    block_model.save(blocks_out)
    print(f"weights: {args.out} ({len(model.feature)} stumps, {model.meta.get('candidates', 0)} candidates), "
          f"{blocks_out} ({len(block_model.feature)} stumps, {block_model.meta.get('blocks', 0)} blocks)")
    extractors = [e for e in ("semantic", "gce", "zoning", "r4", "dana", "danag", "addanag", *peers)]
    oracle = {"oracle (rule trim)": lambda r: int(r.y.argmax()) if r.y.size else -1}

    def final_outputs(picks: dict[str, int], block_models: dict[str, object], desc: str
                      ) -> dict[str, tuple[float, ...]]:
        requests = {f"{r.dataset}/{r.id}": [(picks[f"{r.dataset}/{r.id}"], block_models[r.dataset])] for r in records}
        t1 = time.perf_counter()
        got = T.score_outputs(items, requests, opts, args.jobs)  # type: ignore[arg-type]
        print(f"{desc}: final outputs of {len(got)} pages ({time.perf_counter() - t1:.0f} s)", file=sys.stderr)
        return {k: v[0] for k, v in got.items()}

    in_picks = {f"{r.dataset}/{r.id}": T.choose(model, r) for r in records}
    in_out = final_outputs(in_picks, {r.dataset: block_model for r in records}, "in-sample")
    choosers = {"ensemble, rule trim": lambda r: in_picks[f"{r.dataset}/{r.id}"], **oracle}
    text = ["## Ensemble training (in-sample: the training pages themselves)", "",
            markdown(T.table(records, choosers, extractors, {"ensemble (in-sample)": in_out}),
                     ["ensemble (in-sample)", *choosers, *extractors])]
    if args.cv:
        picks, _, block_models = T.lodo(records, fo)
        cv_out = final_outputs(picks, block_models, "LODO")  # type: ignore[arg-type]
        cv_choosers = {"ensemble LODO, rule trim": lambda r: picks[f"{r.dataset}/{r.id}"], **oracle}
        text += ["", "## Leave-one-data-set-out (both models trained on the other data sets)", "",
                 markdown(T.table(records, cv_choosers, extractors, {"ensemble (LODO)": cv_out}),
                          ["ensemble (LODO)", *cv_choosers, *extractors])]
    out = "\n".join(text) + "\n"
    print(out)
    if args.report:
        args.report.write_text(out, encoding="utf-8")
    return 0
