"""Benchmark the whole pipe on synthetic pages (1k-100k elements) and optionally data-set pages: collection in
Chromium, snapshot size, native-messaging round trip with a real host process, parse time, every algorithm, and
Readability.js in the same page as the anchor; on the synthetic pages also the extension's button press to the
highlight on screen (first and warm press, split by stage) and the host's peak memory. Prints tables, writes
bench.json, bench.md and bench.png."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import algorithms
from ..core.result import json_default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="1000,10000,50000,100000",
                        help="synthetic page sizes in elements, comma separated (default: %(default)s)")
    parser.add_argument("--datasets", nargs="*", type=Path, default=[],
                        help="data-set folders (pages/<id>.html) whose first pages are benchmarked too")
    parser.add_argument("--per-dataset", type=int, default=5, help="pages per data set (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement, median kept")
    parser.add_argument("--algorithms", default="all", help="comma-separated names or 'all' available")
    parser.add_argument("--no-host", action="store_true", help="skip the native host process round trip")
    parser.add_argument("--no-readability", action="store_true", help="skip Readability.js in the page")
    parser.add_argument("--no-pipeline", action="store_true",
                        help="skip the button press -> highlight runs (Chromium with the unpacked extension and host)")
    parser.add_argument("--real-pages", type=int, default=200,
                        help="pages of the data sets under --real-root pressed once each against Readability.js in "
                        "the same tab (the real-page row; 0 skips it; default: %(default)s)")
    parser.add_argument("--real-root", type=Path, default=Path("../shared/datasets"),
                        help="folder of data sets (<set>/pages/*.html) for the real-page row (default: %(default)s)")
    parser.add_argument("--dana-throughput", action="store_true",
                        help="also measure DANA variants on the raw HTML of --datasets (MB/s)")
    parser.add_argument("--out", type=Path, default=Path("bench-out"), help="output folder (default: %(default)s)")
    parser.add_argument("--api", action="store_true",
                        help="instead: the Python API over --datasets pages in one process with one browser: "
                        "extract() first vs later calls, extract_many() pages/s, render=False against trafilatura; "
                        "writes api.json and api.md")
    parser.add_argument("--pages", type=int, default=100, help="--api: pages, taken in turn from each data set "
                        "(default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="--api: extract_many's workers (default: %(default)s)")
    parser.add_argument("--host-cpu", action="store_true",
                        help="instead: the host's press after the snapshot arrives, stage by stage in CPU time "
                        "(parse, each base algorithm, features, scorer, block filter and output) on the --sizes "
                        "synthetic pages (rendered headless) and --real-pages snapshots of the render cache (median, "
                        "90th percentile); writes host_cpu.json and host_cpu.md")
    parser.add_argument("--batch", action="store_true",
                        help="instead: pages/s on a synthetic WARC of source, trafilatura and resiliparse alone, and "
                        "of `centrum batch --no-render` on the local and Ray engines with 1 and 2 workers; writes "
                        "batch.json and batch.md (Ray runs need the batch extra); with --datasets, the extractors are "
                        "also compared on --per-dataset pages of each; the extractors pass --repeat times over their "
                        "pages and the round with the median CPU ratio of source to resiliparse is reported")


def run(args: argparse.Namespace) -> int:
    if args.batch:
        return _run_batch(args)
    if args.api:
        return _run_api(args)
    if args.host_cpu:
        return _run_host_cpu(args)
    from ..algorithms import compile_defaults
    from ..bench.benchmark import format_table, plot, run_bench

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        print(f"centrum bench: --sizes must be whole numbers, got {args.sizes!r}", file=sys.stderr)
        return 2
    for d in args.datasets:
        if not (d / "pages").is_dir():
            print(f"centrum bench: {d} has no pages/ folder", file=sys.stderr)
            return 2
    names = algorithms.available() if args.algorithms == "all" else args.algorithms.split(",")
    for n in names:
        if n not in algorithms.REGISTRY:
            print(f"centrum bench: unknown algorithm {n!r}", file=sys.stderr)
            return 2
    real = (args.real_root, args.real_pages) if args.real_pages > 0 else None
    if real and not args.real_root.is_dir():
        print(f"centrum bench: no data sets at {args.real_root}: the real-page row is left out", file=sys.stderr)
        real = None
    predictors = compile_defaults.ready(lambda line: print(line, file=sys.stderr))
    report = run_bench(sizes, args.datasets, args.per_dataset, args.repeat, names,
                       use_host=not args.no_host, readability=not args.no_readability,
                       pipeline=not args.no_pipeline, real=real)
    report["predictors"] = predictors
    if args.dana_throughput and args.datasets:
        from ..bench.benchmark import dana_throughput

        report["dana_throughput"] = dana_throughput(args.datasets, repeat=args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(report, indent=1, default=json_default), encoding="utf-8")
    table = format_table(report)
    if "dana_throughput" in report:
        table += "\n" + "\n".join(f"{k} on raw HTML: {v['mb_per_s']:.1f} MB/s over {v['mb']:.1f} MB "
                                  f"({v['pages']} pages, median of {len(v['runs_s'])}; DANA paper: 19.43 MB/s)"
                                  for k, v in report["dana_throughput"].items())
    (args.out / "bench.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    if plot(report, args.out / "bench.png"):
        print(f"plot: {args.out / 'bench.png'}")
    return 0


def _write_report(out: Path, name: str, report: object, table: str) -> int:
    """``OUT/NAME.json`` and ``OUT/NAME.md``, the table printed too."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=1, default=json_default), encoding="utf-8")
    (out / f"{name}.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    return 0


def _run_host_cpu(args: argparse.Namespace) -> int:
    from ..bench.host_cpu import format_host_cpu, run_host_cpu

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        print(f"centrum bench: --sizes must be whole numbers, got {args.sizes!r}", file=sys.stderr)
        return 2
    from ..algorithms import compile_defaults

    predictors = compile_defaults.ready(lambda line: print(line, file=sys.stderr))
    report = run_host_cpu(sizes, args.real_pages, args.repeat)
    report["predictors"] = predictors
    return _write_report(args.out, "host_cpu", report, format_host_cpu(report) + f"\npredictors: {predictors}")


def _run_batch(args: argparse.Namespace) -> int:
    from ..batch.bench import format_batch_table, run_batch_bench
    from ..batch.engine import BatchError

    try:
        report = run_batch_bench(datasets=tuple(args.datasets), per_dataset=args.per_dataset, rounds=args.repeat)
    except BatchError as e:
        print(f"centrum bench: {e}", file=sys.stderr)
        return 2
    return _write_report(args.out, "batch", report, format_batch_table(report))


def _run_api(args: argparse.Namespace) -> int:
    from ..bench.api import format_api_table, pick_pages, run_api_bench

    # A shell glob over the data sets (../shared/datasets/*) also matches their README: files are skipped.
    dirs = [d for d in args.datasets if not d.is_file()]
    for d in dirs:
        if not (d / "pages").is_dir():
            print(f"centrum bench: {d} has no pages/ folder", file=sys.stderr)
            return 2
    if not dirs:
        print("centrum bench: --api needs --datasets (e.g. --datasets ../shared/datasets/*)", file=sys.stderr)
        return 2
    if args.pages < 2 or args.workers < 1:
        print("centrum bench: --api needs --pages of at least 2 and --workers of at least 1", file=sys.stderr)
        return 2
    report = run_api_bench(pick_pages(dirs, args.pages), workers=args.workers)
    return _write_report(args.out, "api", report, format_api_table(report))
