"""``centrum train-source DATASET_DIR... [--out FILE] [--cv] [--folds 5] [--seed N]``: fit the source-only
extractor (``--no-render``'s default, ``centrum.algorithms.source``) on data sets' HTML and gold: its block model
(``--out``) and its context stage (``--context-out``).

No rendering is needed: pages are parsed from their HTML. With ``--cv`` the site-grouped k-fold F1 per data set
(and with ``--peers`` the HTML peers' on the same pages) is printed and written to ``--report``. Same pages and
seed give byte-identical model files.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

if TYPE_CHECKING:
    from ..training.source import FirstStages, PageRows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..training.source import TrainOptions  # here: `centrum --help` imports every command's module

    defaults = TrainOptions()
    parser.add_argument("datasets", nargs="+", type=Path, help="data set folders (pages/, gold/, meta.jsonl)")
    parser.add_argument("--out", type=Path, default=Path("source.lgb.txt"),
                        help="model file to write (default: %(default)s; the shipped one is "
                             "host/centrum/weights/source-v4.lgb.txt, its context stage "
                             "source-v4-context2.lgb.txt)")
    parser.add_argument("--context-out", type=Path, default=None,
                        help="context stage's model file (default: --out's name with -context, e.g. "
                        "source-context.lgb.txt; install both with `centrum models install`)")
    parser.add_argument("--extra-train", nargs="*", type=Path, default=[],
                        help="more data set folders to train on (in the CV folds too, grouped by site with the "
                        "others), reported apart and left out of the CV mean (e.g. ../shared/datasets-more/wcxb-dev2)")
    parser.add_argument("--cv", action="store_true", help="also run site-grouped k-fold cross-validation")
    parser.add_argument("--folds", type=int, default=5,
                        help="site-grouped folds of --cv and of the context stage's training scores "
                        "(default: %(default)s)")
    parser.add_argument("--thresholds", default="0.5",
                        help="comma-separated block thresholds to report with --cv (default: %(default)s)")
    parser.add_argument("--peers", default="none",
                        help="HTML peers scored on the same pages with --cv, e.g. trafilatura (default: none)")
    parser.add_argument("--seed", type=int, default=0, help="LightGBM seed (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=defaults.rounds, help="boosting rounds (default: %(default)s)")
    parser.add_argument("--context-rounds", type=int, default=defaults.context_rounds,
                        help="boosting rounds of the context stage (default: %(default)s)")
    parser.add_argument("--leaves", type=int, default=defaults.leaves, help="leaves per tree (default: %(default)s)")
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate,
                        help="LightGBM learning rate (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=None, help="first K pages (id order) of each data set")
    parser.add_argument("--report", type=Path, default=None, help="write the CV table as markdown here")


def _err(message: str) -> int:
    print(f"centrum train-source: {message}", file=sys.stderr)
    return 2


def _peer_counts(rows: list, names: list[str]) -> dict[str, dict[str, list[tuple[float, ...]]]]:
    from ..evaluation import peers as peer_mod
    from ..training.learner import light_score

    out: dict[str, dict[str, list[tuple[float, ...]]]] = {}
    for name in names:
        reason = peer_mod.missing_reason(name)
        if reason or peer_mod.PEERS[name].source == "render":
            print(f"centrum train-source: peer {name}: {reason or 'needs a rendered page'}", file=sys.stderr)
            continue
        per: dict[str, list[tuple[float, ...]]] = {}
        for r in tqdm(rows, desc=name, unit="page", file=sys.stderr):
            try:
                text = peer_mod.run_html_peer(name, r.item.html(), r.item.language)
            except Exception:  # noqa: BLE001 - a peer failing on a page scores as an empty answer
                text = ""
            per.setdefault(r.item.dataset, []).append(light_score(r.item.gold, text)[1])
        out[name] = per
    return out


def run(args: argparse.Namespace) -> int:
    from ..gold.datasets import DatasetError, load_dataset
    from ..training import source as T
    from .train import companion_path, unwritable

    context_out = args.context_out or companion_path(args.out, "-context")
    why = unwritable(("--out", args.out), ("--context-out", context_out))
    if why:
        return _err(why)
    least = 3 if args.cv else 2  # the context stage reads scores of unseen folds, inside each CV training set too
    if args.folds < least:
        return _err("--folds must be at least 2, and 3 with --cv (the context stage is trained on the scores of "
                    "folds its first stage did not see, inside each training set of the CV too)")

    try:
        sets = [load_dataset(d, args.limit) for d in [*args.datasets, *args.extra_train] if not d.is_file()]
        apart = [d.name for d in args.extra_train]
        thresholds = [float(x) for x in args.thresholds.split(",") if x.strip()]
    except (DatasetError, ValueError) as e:
        return _err(str(e))
    items = [p for ds in sets for p in ds.pages]
    if not items:
        return _err("no pages (check the data set folders and --limit)")
    t0 = time.perf_counter()
    rows, skipped = T.collect(items, lambda it: tqdm(it, desc="pages", unit="page", file=sys.stderr))
    for key, why in sorted(skipped.items()):
        print(f"centrum train-source: skipped {key}: {why}", file=sys.stderr)
    opts = T.TrainOptions(seed=args.seed, rounds=args.rounds, context_rounds=args.context_rounds, leaves=args.leaves,
                          learning_rate=args.learning_rate)
    print(f"{len(rows)} pages, {sum(r.X.shape[0] for r in rows)} blocks ({time.perf_counter() - t0:.0f} s)",
          file=sys.stderr)
    models = T.stages(rows, opts, args.folds, lambda what: print(f"fitting the {what}", file=sys.stderr))
    folds = len(set(models.folds))
    if folds < least:
        return _err(f"the pages come from {folds} site fold(s): the context stage needs pages of at least 2 sites "
                    "(3 with --cv) to train on scores of sites its first stage did not see")
    try:
        return _fit_and_write(args, models, rows, thresholds, apart, context_out, t0)
    except ValueError as e:  # a fold without labelled blocks
        return _err(str(e))


def _fit_and_write(args: argparse.Namespace, models: FirstStages, rows: list[PageRows], thresholds: list[float],
                   apart: list[str], context_out: Path, t0: float) -> int:
    from ..training import source as T

    if args.cv:
        cv = T.site_cv(models, thresholds)
        kinds = T.kinds_of(rows)
        tables = {f"source (site CV, threshold {t:g})": T.f1_table(c, kinds, apart) for t, c in cv.items()}
        peers = [p.strip() for p in args.peers.split(",") if p.strip() and p.strip() != "none"]
        for name, counts in _peer_counts(rows, peers).items():
            tables[name] = T.f1_table(counts, kinds, apart)
        text = T.report_markdown(tables, Counter(r.item.dataset for r in rows), apart=apart)
        print(text)
        if args.report:
            args.report.write_text(text, encoding="utf-8")
    model = models.two_stage(frozenset())
    model.first.save(args.out)
    model.context.save(context_out)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes) and {context_out} ({context_out.stat().st_size} "
          f"bytes; {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    return 0
