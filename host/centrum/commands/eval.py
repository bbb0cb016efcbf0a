"""Evaluate Centrum's algorithms and peer extractors side by side on data sets.

Each DATASET_DIR has ``pages/<id>.html``, ``gold/<id>.txt`` (or trafilatura-style ``gold/<id>.json`` snippets) and
``meta.jsonl``. Pages are rendered once in headless Chromium with the extension's collector and cached in
``$CENTRUM_CACHE/snapshots`` (default ``~/.cache/centrum``); a second run reuses the cache. Writes ``report.md``,
``results.json``, ``results.csv``, ``failures.csv`` and PNG plots to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import algorithms
from ..core.result import json_default
from ..evaluation import peers as peer_mod
from ..evaluation.report import README_END, README_START, mean_over_datasets, readme_block, update_readme, write_all
from ..evaluation.runner import EvalOptions, run_pages
from ..gold.datasets import DatasetError, load_dataset
from ..gold.tokenize import TOKENIZERS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("datasets", nargs="+", metavar="DATASET_DIR", help="data set folders")
    parser.add_argument("--algorithms", default="all",
                        help="all, none, or a comma-separated list of algorithm names (default: all)")
    parser.add_argument("--peers", default="all",
                        help=f"all, none, or a comma-separated list of: {', '.join(peer_mod.PEERS)} (default: all)")
    parser.add_argument("--out", default="eval-out", help="output folder (default: eval-out/)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes, each with its own browser")
    parser.add_argument("--limit", type=int, default=None, help="first K pages (id order) of each data set")
    parser.add_argument("--tokenizer", choices=sorted(TOKENIZERS), default="fair",
                        help="fair: words, CJK/Thai by character (default); aeb: scrapinghub's \\w+ exactly")
    parser.add_argument("--window", default="1920x1080", help="browser window WxH (part of the cache key)")
    parser.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for a page's load event")
    parser.add_argument("--page-timeout", type=float, default=None, metavar="S",
                        help="hard limit per page (render + all extractors) before the worker and its browser are "
                             "killed and the page is recorded as failed (default: max(180, 6 x --timeout))")
    parser.add_argument("--save-texts", action="store_true",
                        help="write every extraction to OUT/texts/<data set>/<id>/<extractor>.txt")
    parser.add_argument("--resume", action="store_true",
                        help="keep the pages already in OUT/pages.jsonl (same extractors and tokenizer) and run the "
                             "rest: continues a stopped run")
    parser.add_argument("--no-cache", action="store_true", help="render again even when a snapshot is cached")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="snapshot cache folder (default: $CENTRUM_CACHE/snapshots, ~/.cache/centrum/snapshots)")
    parser.add_argument("--update-readme", metavar="README", default=None,
                        help="replace the table between the centrum-eval markers of this README with the F1 table")
    parser.add_argument("--styles", choices=("on", "off", "both"), default="on",
                        help="render with the pages' stylesheets (on, default), with every stylesheet request "
                             "blocked (off), or both, reported side by side in OUT/styles.md with the difference "
                             "(each pass's full report in OUT/styles-on/ and OUT/styles-off/)")
    parser.add_argument("--no-render", action="store_true",
                        help="no browser: the raw-HTML algorithms (source, DANA family) and HTML peers only")
    parser.add_argument("--metadata", action="store_true",
                        help="score title, author and date (meta.jsonl's title, author, publish_date) of Centrum "
                             "and the metadata peers (trafilatura, htmldate, readability_js; --peers picks among "
                             "them) per page type; Centrum reads each page's cached render (as `centrum eval` "
                             "caches it; --no-render or --no-cache: the source only); writes OUT/metadata.md and "
                             "OUT/metadata.json")


def _select(spec: str, known: list[str], what: str) -> list[str]:
    if spec == "all":
        return list(known)
    if spec == "none":
        return []
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return names


def _runnable(args: argparse.Namespace, algo_names: list[str], peer_names: list[str]
              ) -> tuple[list[str], list[str], dict[str, str]]:
    """(algorithms, peers, unavailable name -> reason) of this run."""
    unavailable: dict[str, str] = {}
    runnable_algos = []
    for name in algo_names:
        try:
            algorithms.load(name)
        except algorithms.AlgorithmUnavailable as e:
            unavailable[name] = str(e)
            continue
        if args.no_render and name not in algorithms.SOURCE_ALGORITHMS:
            unavailable[name] = "not run: --no-render (it needs a rendered page)"
            continue
        runnable_algos.append(name)
    runnable_peers = []
    for name in peer_names:
        reason = peer_mod.missing_reason(name)
        if reason is None and args.no_render and peer_mod.PEERS[name].source == "render":
            reason = "not run: --no-render"
        if reason:
            unavailable[name] = reason
        else:
            runnable_peers.append(name)
    for name, reason in unavailable.items():
        print(f"centrum eval: {name}: {reason}", file=sys.stderr)
    return runnable_algos, runnable_peers, unavailable


def run(args: argparse.Namespace) -> int:
    if args.metadata:
        return _run_metadata(args)
    try:
        w, h = (int(x) for x in args.window.lower().split("x"))
        algo_names = _select(args.algorithms, list(algorithms.REGISTRY), "algorithm")
        peer_names = _select(args.peers, list(peer_mod.PEERS), "peer")
        # A shell glob over a data set folder (``../shared/datasets/*``) also matches its README: files are skipped.
        skipped = [d for d in args.datasets if Path(d).is_file()]
        for d in skipped:
            print(f"centrum eval: skipping {d}: a file, not a data set folder", file=sys.stderr)
        datasets = [load_dataset(d, args.limit) for d in args.datasets if d not in skipped]
        if not datasets:
            raise ValueError("no data set folder given")
        if args.styles != "on" and args.no_render:
            raise ValueError("--styles off/both needs rendering (drop --no-render)")
    except (ValueError, DatasetError) as e:
        print(f"centrum eval: {e}", file=sys.stderr)
        return 2
    runnable_algos, runnable_peers, unavailable = _runnable(args, algo_names, peer_names)
    extras = peer_mod.readability_js_extra() if "readability_js" in runnable_peers else {}
    opts = EvalOptions(algorithms=tuple(runnable_algos), peers=tuple(runnable_peers), tokenizer=args.tokenizer,
                       window=(w, h), timeout_s=args.timeout, page_timeout=args.page_timeout,
                       render=not args.no_render, use_cache=not args.no_cache,
                       cache_dir=args.cache, extras=extras, save_texts=args.save_texts,
                       block_stylesheets=args.styles == "off")
    items = [item for ds in datasets for item in ds.pages]
    if not items:
        print("centrum eval: no pages selected (check --limit)", file=sys.stderr)
        return 2
    extractors = [*runnable_algos, *runnable_peers]
    if not extractors:
        print("centrum eval: nothing to run (no available algorithm or peer selected)", file=sys.stderr)
        return 2
    # SIGTERM (a stopped CI job, `kill PID`) ends the run like ^C: workers and browsers are stopped, the report of
    # the finished pages is written.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    info = {"datasets": [ds.name for ds in datasets], "dataset_dirs": [str(ds.root) for ds in datasets],
            "tokenizer": args.tokenizer, "window": f"{w}x{h}", "jobs": args.jobs, "limit": args.limit,
            "unavailable": unavailable,
            "readability_js": peer_mod.readability_js_version() if "readability_js" in runnable_peers else None,
            "algorithms_run": runnable_algos, "peers_run": runnable_peers, "command": _command_line(args.datasets)}
    if args.styles != "both":
        return _run_pass(args, items, opts, extractors, info, Path(args.out), readme=args.update_readme)
    from ..evaluation.styles import write_comparison

    out = Path(args.out)
    passes = {}
    for styles in ("on", "off"):
        sub = replace(opts, block_stylesheets=styles == "off")
        code = _run_pass(args, items, sub, extractors, {**info, "styles": styles}, out / f"styles-{styles}")
        if code:
            return code
        passes[styles] = _journal_pages(out / f"styles-{styles}" / "pages.jsonl")
    table = write_comparison(out, passes["on"], passes["off"], extractors)
    print(f"\nstylesheets on vs off, same pages (report: {out / 'styles.md'})\n{table}")
    return 0


def _run_metadata(args: argparse.Namespace) -> int:
    from ..evaluation import metadata_eval
    from ..evaluation.cache import SnapshotCache

    cache = None if args.no_render or args.no_cache else SnapshotCache(Path(args.cache) if args.cache else None)
    try:
        peers = _select(args.peers, list(metadata_eval.PEERS), "metadata peer")
        table, results = metadata_eval.evaluate(args.datasets, peers, args.limit,
                                                progress=lambda m: print(f"centrum eval: {m}", file=sys.stderr),
                                                cache=cache)
    except (ValueError, OSError) as e:
        print(f"centrum eval: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metadata.md").write_text(table + "\n", encoding="utf-8")
    (out / "metadata.json").write_text(json.dumps(results, default=json_default, indent=1), encoding="utf-8")
    print(table)
    return 0


def _journal_pages(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run_pass(args: argparse.Namespace, items: list, opts: EvalOptions, extractors: list[str], info: dict,
              out: Path, readme: str | None = None) -> int:
    """Run every page once with ``opts`` and write the report to ``out``."""
    from tqdm import tqdm

    out.mkdir(parents=True, exist_ok=True)
    (out / "workers.log").write_text("", encoding="utf-8")
    opts = replace(opts, log_path=str(out / "workers.log"))
    t0 = time.perf_counter()
    results: list[dict | None] = [None] * len(items)
    journal = out / "pages.jsonl"
    resumed = _resume(journal, items, extractors, args.tokenizer) if args.resume else {}
    for index, page in resumed.items():
        results[index] = page
    todo = [i for i in range(len(items)) if i not in resumed]
    failed_pages = 0
    interrupted = False
    # Pages are also appended to pages.jsonl as they finish, so a long run that is stopped keeps its results
    # (and --resume continues it).
    with tqdm(total=len(items), initial=len(resumed), unit="page", desc="eval", dynamic_ncols=True) as bar, \
            journal.open("a" if resumed else "w", encoding="utf-8") as log:
        try:
            for sub, page in run_pages([items[i] for i in todo], opts, jobs=args.jobs):
                index = todo[sub]
                page["tokenizer"] = args.tokenizer
                page["extractors"] = extractors
                if args.save_texts:
                    _save_texts(out / "texts", page)
                results[index] = page
                log.write(json.dumps(page, default=json_default) + "\n")
                log.flush()
                failed_pages += page["render_class"] == "unrendered" and bool(page["render_error"])
                bar.set_postfix(render_failed=failed_pages, refresh=False)
                bar.update(1)
        except KeyboardInterrupt:
            interrupted = True  # the workers are stopped by run_pages; report what is done
    wall = time.perf_counter() - t0
    if resumed:
        print(f"centrum eval: {len(resumed)} pages taken from {journal} (--resume); wall time covers the rest",
              file=sys.stderr)
    pages = [p for p in results if p is not None]
    info = {**info, "wall_s": wall, "seconds_per_page": wall / max(1, len(pages)), "interrupted": interrupted}
    _report(out, pages, extractors, info, readme)
    if interrupted:
        print(f"centrum eval: interrupted after {len(pages)} of {len(items)} pages; the report covers those",
              file=sys.stderr)
        return 130
    return 0


def _report(out: Path, pages: list[dict], extractors: list[str], info: dict, readme: str | None) -> None:
    summary = write_all(out, pages, extractors, info)
    if readme:
        if update_readme(Path(readme), readme_block(summary, extractors, info)):
            print(f"centrum eval: updated the table in {readme}", file=sys.stderr)
        else:
            print(f"centrum eval: {readme} has no {README_START} ... {README_END} markers; not updated",
                  file=sys.stderr)
    ds = summary["datasets"]["all"]
    wall = info["wall_s"]
    print(f"\n{len(pages)} pages in {wall:.0f} s ({wall / max(1, len(pages)):.2f} s/page, {info['jobs']} job(s)); "
          f"report: {out / 'report.md'}")
    ranked = sorted(extractors, key=lambda e: -np.nan_to_num(mean_over_datasets(ds, e, "f1"), nan=-1.0))
    print(f"{'extractor':<18} {'mean F1':>8} {'mean per-page F1':>17}")
    for e in ranked:
        print(f"{e:<18} {mean_over_datasets(ds, e, 'f1'):>8.3f} {mean_over_datasets(ds, e, 'mean_f1'):>17.3f}")


def _save_texts(root: Path, page: dict) -> None:
    folder = root / page["dataset"] / page["id"]
    folder.mkdir(parents=True, exist_ok=True)
    for row in page["rows"]:
        text = row.pop("text", None)
        if text is not None:
            (folder / f"{row['extractor']}.txt").write_text(text, encoding="utf-8")


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _command_line(datasets: list[str]) -> str:
    """The command as typed, with a shell-expanded ``dir/*`` folded back (it lists every data set and the README)."""
    argv = sys.argv[1:]
    parents = {str(Path(d).parent) for d in datasets}
    if len(datasets) > 1 and len(parents) == 1:
        first = argv.index(datasets[0]) if datasets[0] in argv else -1
        if first >= 0 and argv[first : first + len(datasets)] == datasets:
            argv = [*argv[:first], f"{parents.pop()}/*", *argv[first + len(datasets) :]]
    return "centrum " + " ".join(a if a.endswith("/*") else shlex.quote(a) for a in argv)


def _resume(journal: Path, items: list, extractors: list[str], tokenizer: str) -> dict[int, dict]:
    """Pages of a previous run's journal that match this run (same page, extractors and tokenizer), by item index.
    A truncated last line (the run was killed mid-write) is ignored; that page simply runs again."""
    if not journal.exists():
        return {}
    where = {(item.dataset, item.id): i for i, item in enumerate(items)}
    out: dict[int, dict] = {}
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            page = json.loads(line)
        except json.JSONDecodeError:
            continue
        index = where.get((page.get("dataset"), page.get("id")))
        if index is not None and page.get("extractors") == extractors and page.get("tokenizer") == tokenizer:
            out[index] = page
    # Rewrite the journal with exactly the kept pages, so that appending continues a consistent file.
    journal.write_text("".join(json.dumps(p, default=json_default) + "\n" for p in out.values()), encoding="utf-8")
    return out
