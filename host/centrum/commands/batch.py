"""Main content of whole crawls: one output row per input record, in Parquet (default), JSONL or Markdown shards.

INPUT is a WARC / WARC.gz file, a folder of .html files, or a text file of http(s) URLs (one a line; rendered live).
Every WARC response and revisit record gets a row with a status: ok (text), http_error (an HTML response whose HTTP
status is not 2xx, e.g. 404 or 301), "skipped: not HTML", "skipped: revisit", "skipped: duplicate record id" (a
record repeating an earlier WARC-Record-ID, keyed FILE@OFFSET), or failed with an error code (E_EMPTY, E_TOO_LARGE,
E_RENDER...); --only-ok writes the others to OUT/other/ instead. Every row carries its record's provenance
(record_id, warc_date, url = WARC-Target-URI, source file, offset, length, content_hash of the payload) and
duplicate_of: the earliest input record with the same payload, else the same URL (a recrawl). The summary line
counts the records read by kind and the rows by status: they add up. A rendered page's stylesheets, images and fonts
are served from the same WARC, anything it lacks is refused and no host name resolves.

Engines: local (the default on one machine: a worker process each, each with its own headless Chromium; no Ray
needed) or ray (--engine ray, or --address auto|HOST:PORT to join a running cluster; else a local cluster bound to
127.0.0.1). A page that fails or outlasts --page-timeout is retried once on a fresh browser, then written as failed
with its reason; a worker that dies has its records re-run; every record is written exactly once, also across
--resume. Shards are written every --rows-per-shard rows or --seconds-per-shard seconds, whichever comes first: a
kill loses at most that much work. Inputs are bounded (centrum.core.limits INPUT_LIMITS): a record or page over a limit
is a failed row E_TOO_LARGE naming the limit. A run's processes end with the command, also when it is killed.
Exit codes: 0 done (failed rows included), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import algorithms
from .extract import SOURCE_ALGORITHMS, _params, _window


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", type=Path, metavar="INPUT",
                        help="WARC/WARC.gz file, folder of .html files, or text file of URLs")
    parser.add_argument("--out", type=Path, required=True, help="output folder for the shards")
    parser.add_argument("-a", "--algorithm", default=None,
                        help=f"algorithm (default: {algorithms.DEFAULT_ALGORITHM}; with --no-render: "
                             f"{algorithms.SOURCE_DEFAULT})")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help="algorithm parameter (repeatable)")
    parser.add_argument("--format", choices=("parquet", "jsonl", "markdown"), default="parquet",
                        help="shard format (markdown: per row a comment line with its columns, then its Markdown "
                        "or text)")
    parser.add_argument("--only-ok", action="store_true",
                        help="only rows with text (status ok) in --out; the others go to OUT/other/")
    parser.add_argument("--engine", choices=("local", "ray"),
                        help="local: worker processes on this machine (default); ray: a Ray cluster (the default "
                        "with --address)")
    parser.add_argument("--no-render", action="store_true",
                        help=f"no browser: {', '.join(SOURCE_ALGORITHMS)} on the HTML source (default "
                        f"{algorithms.SOURCE_DEFAULT}, the learned source-only extractor)")
    parser.add_argument("--limit", type=int, help="at most this many input records (in input order)")
    parser.add_argument("--resume", action="store_true", help="add only the records missing from --out")
    parser.add_argument("--address", help="join a Ray cluster: auto or HOST:PORT (implies --engine ray)")
    parser.add_argument("--actors", "--workers", type=int, dest="actors",
                        help="workers, each with its own browser (default: one per CPU of this machine or cluster)")
    parser.add_argument("--timeout", type=float, default=15.0, help="page load timeout in seconds (default 15)")
    parser.add_argument("--page-timeout", type=float, default=60.0,
                        help="hard limit on one render in seconds; the browser is killed past it (default 60)")
    parser.add_argument("--window", default="1920x1080", type=_window, help="browser window WxH")
    parser.add_argument("--rows-per-shard", type=int, default=1000, help="rows per output file (default 1000)")
    parser.add_argument("--seconds-per-shard", type=float, default=60.0,
                        help="a shard is also written once its first row is this old: the most work a kill loses "
                        "(default 60)")
    parser.add_argument("--object-store-mb", type=int, default=384,
                        help="object store of the local cluster in MB (default 384)")
    parser.add_argument("--no-markdown", action="store_true", help="leave the markdown column empty (faster)")
    parser.add_argument("--no-metadata", action="store_true",
                        help="leave the metadata and language columns empty (faster; with --no-markdown a "
                        "--no-render row is the extraction alone)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _err(message: str) -> None:
    print(f"centrum batch: {message}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from ..batch.inputs import InputError, check_inputs
    from ..batch.worker import WorkerOptions

    name = args.algorithm or (algorithms.SOURCE_DEFAULT if args.no_render else algorithms.DEFAULT_ALGORITHM)
    if name not in algorithms.REGISTRY:
        _err(f"unknown algorithm {name!r} (known: {', '.join(algorithms.REGISTRY)})")
        return 2
    if args.no_render and name not in SOURCE_ALGORITHMS:
        _err(f"--no-render works only with {', '.join(SOURCE_ALGORITHMS)} (they read the HTML source); "
             f"{name!r} needs a rendered page")
        return 2
    for flag, value, low in (("--limit", args.limit, 0), ("--actors", args.actors, 1),
                             ("--rows-per-shard", args.rows_per_shard, 1), ("--object-store-mb", args.object_store_mb,
                                                                           80)):
        if value is not None and value < low:
            _err(f"{flag} must be at least {low}, got {value}")
            return 2
    if args.engine == "local" and args.address:
        _err("--address joins a Ray cluster: leave out --engine local")
        return 2
    if not 0 < args.seconds_per_shard <= 86400:
        _err(f"--seconds-per-shard must be in (0, 86400], got {args.seconds_per_shard:g}")
        return 2
    if not (0 < args.timeout <= 3600 and 0 < args.page_timeout <= 3600):
        _err("--timeout and --page-timeout must be in (0, 3600] seconds")
        return 2
    try:
        params = _params(args.param)
        if args.no_render:  # checked here, before a cluster starts, not in every actor
            algorithms.raw_html_config(name, params)
        check_inputs(args.inputs)
    except (ValueError, InputError) as e:  # ConfigError is a ValueError
        _err(str(e))
        return 2
    from ..batch.engine import BatchError, BatchOptions
    from ..batch.run import run_batch

    worker = WorkerOptions(algorithm=name, render=not args.no_render, params=params, window=args.window,
                           timeout_s=args.timeout, page_timeout_s=args.page_timeout, markdown=not args.no_markdown,
                           metadata=not args.no_metadata)
    opts = BatchOptions(inputs=list(args.inputs), out=args.out, worker=worker, engine=args.engine, fmt=args.format,
                        limit=args.limit, resume=args.resume, actors=args.actors, address=args.address,
                        object_store_mb=args.object_store_mb, rows_per_shard=args.rows_per_shard,
                        seconds_per_shard=args.seconds_per_shard, progress=not args.no_progress,
                        only_ok=args.only_ok)
    try:
        summary = run_batch(opts)
    except (BatchError, InputError) as e:
        _err(str(e))
        return 2
    if summary.duplicates:
        _err(f"{summary.duplicates} WARC record(s) repeat an earlier record's WARC-Record-ID: each has a row keyed "
             "FILE@OFFSET with status 'skipped: duplicate record id'")
    print(json.dumps(summary.to_json()))
    return 0
