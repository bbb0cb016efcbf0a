"""``centrum train DATASET_DIR... [--out FILE] [--seed N] [--cv]``: fit the ensemble's candidate scorer and block
filter on rendered data sets.

Snapshots come from the ``centrum eval`` cache (run ``centrum eval`` on the data sets first; pages without a cached
snapshot are skipped and counted) or from ``--snapshots DIR`` (``DIR/<dataset>/<id>.json`` raw snapshots). Page
records (features and labels) are cached, so a second run with another learner re-runs no algorithm. With ``--cv``
two validations are printed and written to ``--report``, each next to every algorithm and peer on the same pages:
k-fold cross-validation grouped by site (no registered domain in two folds), per data set, per language and per page
type; and leave-one-data-set-out. Same data and seed give byte-identical model files (LightGBM runs deterministic
on a fixed thread count).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

# Type names only: every centrum command imports this module to build its parser, so the training code (LightGBM,
# every algorithm) loads when train runs.
if TYPE_CHECKING:
    from ..algorithms.ensemble.model import Model
    from ..gold.datasets import Dataset, PageItem
    from ..training.learner import ExtractOptions, FitOptions, PageRecord


# The base algorithms the shipped default was trained without: the DANA family, the only readers of the page source,
# so that a press collects no source (issue #43; docs/ensemble.md "Shipped models").
DEFAULT_WITHOUT = ("dana", "danag", "addanag")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("datasets", nargs="+", type=Path, help="data set folders (pages/, gold/, meta.jsonl)")
    parser.add_argument("--out", type=Path, default=Path("ensemble.lgb.txt"),
                        help="candidate scorer model to write (default: %(default)s; *.json with --learner stumps)")
    parser.add_argument("--blocks-out", type=Path, default=None,
                        help="block filter model to write (default: OUT with -blocks before its suffix)")
    parser.add_argument("--learner", choices=("lightgbm", "stumps"), default="lightgbm",
                        help="LightGBM trees (default) or the numpy stumps")
    parser.add_argument("--folds", type=int, default=5, help="site-grouped folds with --cv (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="row subsampling seed (default: %(default)s)")
    parser.add_argument("--cv", nargs="?", const="all", choices=("all", "site"), default=None,
                        help="also validate: site-grouped k-fold and leave-one-data-set-out (all, the default), or "
                             "the site-grouped k-fold alone (site: the acceptance tables, without the in-sample and "
                             "leave-one-data-set-out ones, about half the time)")
    parser.add_argument("--report", type=Path, default=None, help="write the tables as markdown here")
    parser.add_argument("--pages-out", type=Path, default=None, metavar="FILE",
                        help="with --cv: write each page's site-CV F1 (the ensemble's final output at the configured "
                             "block threshold and every algorithm and peer on the same page) as JSON lines, to see "
                             "where it wins and loses")
    parser.add_argument("--limit", type=int, default=None, help="first K pages (id order) of each data set")
    parser.add_argument("--cache", default=None, metavar="DIR", help="snapshot cache folder (as centrum eval)")
    parser.add_argument("--snapshots", default=None, metavar="DIR",
                        help="read raw snapshots from DIR/<dataset>/<id>.json instead of the eval cache")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for feature extraction")
    parser.add_argument("--rounds", type=int, default=None, help="boosting rounds (default: FitOptions)")
    parser.add_argument("--learning-rate", type=float, default=None)
    parser.add_argument("--peers", default="all", help="peers scored on the same pages: all, none or a list")
    parser.add_argument("--block-scope", choices=("page", "candidate"), default="page",
                        help="the block filter keeps or drops every block of the page (default) or only those of the "
                             "chosen candidate; use the same --param scope=... with a model trained so")
    parser.add_argument("--without", action="append", default=None, metavar="ALGORITHM",
                        help="leave this base algorithm out of the proposers (repeatable): the models are trained "
                             "without its answers and columns, and run without it. Default: "
                             f"{' '.join(DEFAULT_WITHOUT)}, as the shipped ensemble-v15 (a press then needs no page "
                             "source); --without none keeps every base algorithm")
    parser.add_argument("--models-only", action="store_true",
                        help="write the models and stop: no tables (they re-run every algorithm on every page to score "
                             "the final outputs)")
    parser.add_argument("--no-record-cache", action="store_true", help="recompute page records (features, labels)")
    parser.add_argument("--block-labels", choices=("shingles", "aligned"), default="aligned",
                        help="block filter labels: a block's share of its tokens in an order-keeping alignment of the "
                             "page to the gold (default, as the shipped ensemble-v14: node-level supervision, a word "
                             "the gold holds elsewhere does not make a reply button or a user card gold), or of its "
                             "4-token shingles found anywhere in the gold (ensemble-v13 and before)")
    parser.add_argument("--comment-shapes", action=argparse.BooleanOptionalAction, default=True,
                        help="score the final outputs with the ensemble's comment_shapes (comment-shaped items after "
                             "the body set aside, whatever their names): on by default, as the ensemble runs; "
                             "--no-comment-shapes for models run with --param comment_shapes=false")
    parser.add_argument("--feature-set", choices=("v13", "v14"), default="v14",
                        help="features the models read: v14 (default, the shipped ensemble-v14's: with the shape "
                             "features of comment threads and title lists) or v13 (ensemble-v13's)")


def _left_out(args: argparse.Namespace) -> list[str]:
    """The ``--without`` algorithms: :data:`DEFAULT_WITHOUT` when none is given, none for ``--without none``."""
    given = DEFAULT_WITHOUT if args.without is None else args.without
    return [a for a in given if a != "none"]


def _proposers(args: argparse.Namespace) -> tuple[str, ...]:
    """The base algorithms the records and the models are made with: all of them but those of ``--without``."""
    from ..algorithms import BASE_ALGORITHMS

    return tuple(a for a in BASE_ALGORITHMS if a not in _left_out(args))


def _delta(row: dict[str, float]) -> str:
    if "delta" not in row:
        return "-"
    return f"{row['delta']:+.3f} [{row['delta_lo']:+.3f}, {row['delta_hi']:+.3f}]"


def _fmt(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


# Data sets whose gold is a peer's own output (readability-testpages: Readability.js's): kept in the tables, left
# out of the "independent gold" mean.
DEPENDENT_GOLD = frozenset({"readability-testpages"})


def markdown(tab: dict[str, dict[str, float]], columns: list[str], peers: tuple[str, ...] = (),
             label: str = "data set") -> str:
    """One row per key of ``tab``, a column per name in ``columns``, the best peer of the row, and mean rows (all
    rows, and without :data:`DEPENDENT_GOLD` where such a row is present)."""
    best = bool(peers)
    delta = any("delta" in row for row in tab.values())
    head = [label, "pages", *columns, *(["best peer"] if best else []),
            *([f"{columns[0]} - best peer [95% CI]"] if delta else [])]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def best_peer(row: dict[str, float]) -> tuple[str, float]:
        got = [(row[p], p) for p in peers if p in row and not math.isnan(row[p])]
        return (max(got)[1], max(got)[0]) if got else ("-", float("nan"))

    for key, row in tab.items():
        name, value = best_peer(row)
        lines.append("| " + " | ".join([key, str(int(row["pages"])), *(_fmt(row.get(c, float("nan")))
                                                                       for c in columns),
                                        *([f"{_fmt(value)} {name}"] if best else []),
                                        *([_delta(row)] if delta else [])]) + " |")
    subsets = [("**mean**", list(tab))]
    if label == "data set" and DEPENDENT_GOLD & set(tab):
        subsets.append(("**mean, independent gold**", [k for k in tab if k not in DEPENDENT_GOLD]))
    for title, keys in subsets:
        cells = []
        for c in columns:
            v = [tab[k][c] for k in keys if c in tab[k] and not math.isnan(tab[k][c])]
            cells.append(_fmt(sum(v) / len(v)) if v else "-")
        if best:
            per_peer = {p: [tab[k][p] for k in keys if p in tab[k]] for p in peers}
            means = {p: sum(v) / len(v) for p, v in per_peer.items() if v and len(v) == len(keys)}
            top = max(means.items(), key=lambda kv: kv[1]) if means else ("-", float("nan"))
            cells.append(f"{_fmt(top[1])} {top[0]}")
        if delta:
            cells.append("")
        lines.append(f"| {title} | {sum(int(tab[k]['pages']) for k in keys)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..gold.datasets import DatasetError, load_dataset
    from ..training import learner as T

    if args.pages_out is not None and not args.cv:
        print("centrum train: --pages-out writes the site-CV scores: add --cv", file=sys.stderr)
        return 2
    try:
        datasets = [load_dataset(d, args.limit) for d in args.datasets if d.is_dir()]
    except DatasetError as e:
        print(f"centrum train: {e}", file=sys.stderr)
        return 2
    if not datasets:
        print("centrum train: no data set folders given", file=sys.stderr)
        return 2
    peers = _peers(args.peers)
    if peers is None:
        return 2
    unwritable_out = unwritable(("--out", args.out), ("--blocks-out", args.blocks_out or companion_path(args.out)),
                                *((("--pages-out", args.pages_out),) if args.pages_out is not None else ()))
    if unwritable_out:
        print(f"centrum train: {unwritable_out}", file=sys.stderr)
        return 2
    unknown = sorted(set(_left_out(args)) - set(T.F.BASE_ALGORITHMS))
    if unknown:
        print(f"centrum train: --without {', '.join(unknown)}: not a base algorithm (one of "
              f"{', '.join(T.F.BASE_ALGORITHMS)})", file=sys.stderr)
        return 2
    opts = T.ExtractOptions(cache_dir=args.cache, snapshots=args.snapshots, peers=peers,
                            use_record_cache=not args.no_record_cache, block_scope=args.block_scope,
                            proposers=_proposers(args), block_labels=args.block_labels)
    items = [it for ds in datasets for it in ds.pages]
    records = _load_records(items, opts, args.jobs)
    if not records:
        print("centrum train: no page has a rendered snapshot; run `centrum eval` on the data sets first",
              file=sys.stderr)
        return 1
    fo, model, block_model = _fit_and_save(args, records, datasets)
    if args.models_only:
        return 0
    together = T.benchmark_folds({ds.name: _source(ds) for ds in datasets})
    out = "\n".join(_tables(args, _Run(records, items, opts, fo, peers, together), model, block_model)) + "\n"
    print(out)
    if args.report:
        args.report.write_text(out, encoding="utf-8")
    return 0


def _source(ds: Dataset) -> str | None:
    """The benchmark a data set folder comes from (its pages' meta ``source_dataset``), when they all say one."""
    sources = {str(it.meta.get("source_dataset") or "") for it in ds.pages}
    return (sources.pop() or None) if len(sources) == 1 else None


def _peers(arg: str) -> tuple[str, ...] | None:
    """The peers named by ``--peers`` (None, after saying so, when one is unknown)."""
    from ..evaluation import peers as peer_mod
    from ..training import learner as T

    if arg == "none":
        return ()
    if arg == "all":
        return T.PEERS
    peers = tuple(p for p in arg.split(",") if p)
    unknown = [p for p in peers if p not in peer_mod.PEERS]
    if unknown:
        print(f"centrum train: unknown peers {unknown}", file=sys.stderr)
        return None
    return peers


def _load_records(items: list[PageItem], opts: ExtractOptions, jobs: int) -> list[PageRecord]:
    """Every page's record (features and labels), saying how many pages were skipped and why."""
    from ..training import learner as T

    t0 = time.perf_counter()
    records, skipped = [], {}  # type: ignore[var-annotated]
    for item, rec in zip(items, tqdm(T.extract_all(items, opts, jobs), total=len(items), desc="pages",
                                     file=sys.stderr), strict=True):
        if isinstance(rec, str):
            skipped.setdefault(item.dataset, []).append(f"{item.id}: {rec}")
        else:
            records.append(rec)
    print(f"{len(records)} pages with features, {sum(len(v) for v in skipped.values())} skipped "
          f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    for ds, why in skipped.items():
        print(f"  {ds}: {len(why)} skipped, e.g. {why[0]}", file=sys.stderr)
    return records


def _fit_and_save(args: argparse.Namespace, records: list[PageRecord], datasets: list[Dataset]
                  ) -> tuple[FitOptions, Model, Model]:
    """Fit the candidate scorer and the block filter on every record and write both models."""
    from ..training import learner as T

    fo = T.FitOptions(seed=args.seed, learner=args.learner, proposers=_proposers(args), feature_set=args.feature_set)
    if args.rounds is not None or args.learning_rate is not None:
        from dataclasses import replace

        prefix = "lgb_" if args.learner == "lightgbm" else ""
        fo = replace(fo, **{prefix + k: v for k, v in (("rounds", args.rounds), ("learning_rate", args.learning_rate))
                            if v is not None})
    model = T.fit(records, fo)
    model.meta["pages_per_dataset"] = {ds.name: sum(1 for r in records if r.dataset == ds.name) for ds in datasets}
    model.save(args.out)
    block_model = T.fit_blocks(records, fo)
    blocks_out = args.blocks_out or companion_path(args.out)
    block_model.save(blocks_out)
    print(f"models: {args.out} ({model.meta.get('candidates', 0)} candidates), "
          f"{blocks_out} ({block_model.meta.get('blocks', 0)} blocks)")
    return fo, model, block_model


@dataclass
class _Run:
    """What the tables of one training run read."""

    records: list[PageRecord]
    items: list[PageItem]
    opts: ExtractOptions
    fo: FitOptions
    peers: tuple[str, ...]
    # LODO fold of each data set: folders of one benchmark are held out together (they share sites).
    together: dict[str, str]


def _final_outputs(args: argparse.Namespace, run: _Run, picks: dict[str, int], block_of: dict[str, object],
                   desc: str, thresholds: tuple[float, ...] = ()) -> list[dict[str, tuple[float, ...]]]:
    """Per page: the scores of the ensemble's final output (the picked candidate through the given block filter),
    re-running every algorithm on the page; one dict at the configured block threshold, then one per ``thresholds``."""
    from ..algorithms import ensemble as E
    from ..training import learner as T

    cfg = E.Config(scope=args.block_scope, comment_shapes=args.comment_shapes)
    levels = (cfg.block_threshold, *thresholds)
    requests = {T.page_key(r): [(picks[T.page_key(r)], block_of[T.page_key(r)], t) for t in levels]
                for r in run.records}
    t1 = time.perf_counter()
    got = T.score_outputs(run.items, requests, run.opts, args.jobs, cfg)  # type: ignore[arg-type]
    print(f"{desc}: final outputs of {len(got)} pages ({time.perf_counter() - t1:.0f} s)", file=sys.stderr)
    return [{k: v[i] for k, v in got.items()} for i in range(len(levels))]


# Block thresholds the site-CV report scores the final outputs at (ensemble.Config.block_threshold is the default).
THRESHOLD_SWEEP = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)


def _independent_mean(records: list[PageRecord], per_page: dict[str, tuple[float, ...]], peers: tuple[str, ...]
                      ) -> tuple[float, str, dict[str, float]]:
    """(mean F1 over the data sets with independent gold, "k of n" of them at or above their best peer ("-" without
    peers), F1 per data set) of the final outputs ``per_page``."""
    from ..training import learner as T

    tab = T.table(records, {}, peers, {"x": per_page})
    sets = {ds: row["x"] for ds, row in tab.items() if ds not in DEPENDENT_GOLD}
    scored = [ds for ds in sets if any(p in tab[ds] for p in peers)]
    wins = sum(1 for ds in scored if all(sets[ds] >= tab[ds].get(p, -1.0) for p in peers))
    mean = sum(sets.values()) / len(sets) if sets else float("nan")
    return mean, (f"{wins} of {len(scored)}" if scored else "-"), sets


def _threshold_table(run: _Run, sweep: list[dict[str, tuple[float, ...]]], fold_of: dict[str, str]) -> list[str]:
    """Site-CV final outputs at every threshold of THRESHOLD_SWEEP, and a nested choice: each fold's pages at the
    threshold that scores best on the other folds' pages (so the chosen default is itself validated)."""
    from ..training import learner as T

    records, peers = run.records, run.peers
    scored = [_independent_mean(records, per_page, peers) for per_page in sweep]
    sets = list(scored[0][2])
    lines = ["### Block threshold (site CV, final outputs)", "",
             "| block threshold | mean, independent gold | sets at or above best peer | " + " | ".join(sets) + " |",
             "|" + "---|" * (3 + len(sets))]
    for t, (mean, wins, per_set) in zip(THRESHOLD_SWEEP, scored, strict=True):
        lines.append(f"| {t} | {mean:.4f} | {wins} | "
                     + " | ".join(f"{per_set[ds]:.4f}" for ds in sets) + " |")
    chosen: dict[str, float] = {}
    for f in sorted(set(fold_of.values())):
        others = [r for r in records if fold_of[T.page_key(r)] != f]
        means = [_independent_mean(others, per_page, peers)[0] for per_page in sweep]
        chosen[f] = THRESHOLD_SWEEP[max(range(len(means)), key=lambda i: (means[i], -i))]
    nested = {T.page_key(r): sweep[THRESHOLD_SWEEP.index(chosen[fold_of[T.page_key(r)]])].get(T.page_key(r), r.empty)
              for r in records}
    mean, wins, _ = _independent_mean(records, nested, peers)
    versus = f", {wins} sets at or above their best peer" if wins != "-" else " (no peer ran to compare with)"
    lines += ["", "Nested: each fold at the threshold best on the other folds' pages ("
              + ", ".join(f"{f} {t}" for f, t in chosen.items()) + f"): mean {mean:.4f}{versus}.", ""]
    return lines


def _oracle() -> dict[str, Callable[[PageRecord], int]]:
    return {"oracle (rule trim)": lambda r: int(r.y.argmax()) if r.y.size else -1}


def _tables(args: argparse.Namespace, run: _Run, model: Model, block_model: Model) -> list[str]:
    """The in-sample table, and with ``--cv`` the validation tables (markdown lines)."""
    from ..training import learner as T

    records, peers = run.records, run.peers
    extractors = [*T.F.BASE_ALGORITHMS, *peers]
    if args.cv == "site":
        return _site_cv_tables(args, run, extractors)
    in_picks = {T.page_key(r): T.choose(model, r) for r in records}
    in_out = _final_outputs(args, run, in_picks, {T.page_key(r): block_model for r in records}, "in-sample")[0]
    choosers = {"ensemble, rule trim": lambda r: in_picks[T.page_key(r)], **_oracle()}
    text = ["## Ensemble training (in-sample: the training pages themselves)", "",
            markdown(T.table(records, choosers, extractors, {"ensemble (in-sample)": in_out}),
                     ["ensemble (in-sample)", *choosers, *extractors], peers)]
    if args.cv:
        text += _site_cv_tables(args, run, extractors) + _lodo_tables(args, run, extractors)
    return text


def _site_cv_tables(args: argparse.Namespace, run: _Run, extractors: list[str]) -> list[str]:
    """Site-grouped k-fold validation: per data set, per language and per page type."""
    from ..training import learner as T

    records, peers = run.records, run.peers
    picks, _, block_models, fold_of = T.site_cv(records, run.fo, args.folds)
    cv_out, *sweep = _final_outputs(args, run, picks, {k: block_models[f] for k, f in fold_of.items()}, "site CV",
                                    THRESHOLD_SWEEP)
    cv_choosers = {"ensemble CV, rule trim": lambda r: picks[T.page_key(r)], **_oracle()}
    columns = ["ensemble (site CV)", *cv_choosers, *extractors]
    finals = {"ensemble (site CV)": cv_out}
    text = ["", f"## Site-grouped {args.folds}-fold cross-validation (no registered domain in two folds)", "",
            markdown(T.table(records, cv_choosers, extractors, finals), columns, peers), "",
            "### Per language: mean per-page F1 (site CV)", "",
            markdown(T.group_table(records, lambda r: r.language, cv_choosers, extractors, finals,
                                   compare=("ensemble (site CV)", peers)), columns, peers, "language"), ""]
    by_type = T.group_table(records, lambda r: r.page_type, cv_choosers, extractors, finals,
                            compare=("ensemble (site CV)", peers))
    if by_type:
        typed = sorted({r.dataset for r in records if r.page_type})
        text += ["### Per page type: mean per-page F1 (site CV)", "",
                 f"Pooled over every data set whose pages have a type ({', '.join(typed)}).", "",
                 markdown(by_type, columns, peers, "page type"), ""]
    if args.pages_out is not None:
        write_page_rows(args.pages_out, page_rows(run, cv_out, fold_of, extractors))
    return text + _threshold_table(run, sweep, fold_of)


def page_rows(run: _Run, final: dict[str, tuple[float, ...]], fold_of: dict[str, str], extractors: list[str]
              ) -> list[dict[str, object]]:
    """One row per page: where it is (data set, id, language, page type, site, fold) and its F1, the ensemble's
    site-CV final output (``final``) beside each of ``extractors`` that ran on it."""
    from ..training import learner as T

    rows: list[dict[str, object]] = []
    for r in run.records:
        key = T.page_key(r)
        row: dict[str, object] = {"dataset": r.dataset, "id": r.id, "language": r.language, "page_type": r.page_type,
                                  "site": r.site, "fold": fold_of.get(key),
                                  "ensemble": round(T.aggregate_f1(r.kind, [final.get(key, r.empty)]), 6)}
        row.update({name: round(r.extractors[name][0], 6) for name in extractors if name in r.extractors})
        rows.append(row)
    return rows


def write_page_rows(path: Path, rows: list[dict[str, object]]) -> None:
    from ..core.paths import atomic_path

    with atomic_path(path) as tmp:
        tmp.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def _lodo_tables(args: argparse.Namespace, run: _Run, extractors: list[str]) -> list[str]:
    """Leave-one-data-set-out validation."""
    from ..training import learner as T

    records = run.records
    picks, _, block_models = T.lodo(records, run.fo, run.together)
    lodo_out = _final_outputs(args, run, picks,
                              {T.page_key(r): block_models[run.together.get(r.dataset, r.dataset)] for r in records},
                              "LODO")[0]
    lodo_choosers = {"ensemble LODO, rule trim": lambda r: picks[T.page_key(r)], **_oracle()}
    joint = sorted({f for f in run.together.values() if "+" in f})
    held = f" ({', '.join(joint)} held out together: one benchmark's folders share sites)" if joint else ""
    return [f"## Leave-one-data-set-out (both models trained on the other data sets{held})", "",
            markdown(T.table(records, lodo_choosers, extractors, {"ensemble (LODO)": lodo_out}),
                     ["ensemble (LODO)", *lodo_choosers, *extractors], run.peers)]


def unwritable(*outs: tuple[str, Path]) -> str | None:
    """Why a model file could not be written where its option says, checked before the page records (minutes of
    work) are made."""
    for option, out in outs:
        if out.is_dir():
            return f"{option} {out}: is a folder; give the model file's path (e.g. {out / 'model.lgb.txt'})"
        if not out.parent.is_dir():
            return f"{option} {out}: its folder {out.parent} does not exist"
    return None


def companion_path(out: Path, part: str = "-blocks") -> Path:
    """The file of a model's second stage beside ``out``: ``ensemble.lgb.txt`` -> ``ensemble-blocks.lgb.txt``,
    ``x.json`` -> ``x-blocks.json``; ``part`` is the second model's name suffix ("-context" for train-source)."""
    name = out.name
    for suffix in (".lgb.txt", ".json"):
        if name.endswith(suffix):
            return out.with_name(name[: -len(suffix)] + part + suffix)
    return out.with_name(name + part)
