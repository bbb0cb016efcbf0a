"""Print the main content of a page: render it in headless Chromium, collect a snapshot with the extension's
collector, run an algorithm in-process and print the chosen content as text, HTML or JSON.

PAGE is a local HTML file, an http(s) URL, a saved snapshot (a local ``*.json`` file such as ``page.snapshot.json``,
or ``-`` for a snapshot on stdin). Exit codes: 0 content printed, 2 usage or input error, 3 the algorithm found no
main content.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .. import algorithms
from ..core.config import ConfigError
from ..core.limits import read_page_file
from ..core.result import Result, json_default
from ..core.snapshot import Snapshot, SnapshotError, parse_snapshot
from ..output import outputs

SOURCE_ALGORITHMS = algorithms.SOURCE_ALGORITHMS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("page", help="HTML file, http(s) URL, saved snapshot (a local *.json file), or - for a "
                        "snapshot on stdin")
    parser.add_argument("-a", "--algorithm", default=None,
                        help=f"algorithm name (default: {algorithms.DEFAULT_ALGORITHM}; with --no-render: "
                             f"{algorithms.SOURCE_DEFAULT}; see `centrum algorithms`)")
    parser.add_argument("-f", "--format", choices=outputs.FORMATS, default="text",
                        help="text: the main content's text; markdown: GitHub-flavoured Markdown with YAML front "
                        "matter; html: a standalone document with the clean, allow-listed tree; json: the result "
                        "object + metadata, text, markdown, html, timings")
    parser.add_argument("--window", default="1920x1080", type=_window, help="browser window WxH (default 1920x1080)")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help="algorithm parameter (repeatable), e.g. --param rows=7; numbers have ranges "
                             "(host/PROTOCOL.md, Parameters); the ensemble's weights=NAME is a model name "
                             "(`centrum models list`), not a path")
    parser.add_argument("--no-render", action="store_true",
                        help=f"run on the raw HTML file without a browser ({', '.join(SOURCE_ALGORITHMS)}; "
                             f"default {algorithms.SOURCE_DEFAULT}, the learned source-only extractor)")
    parser.add_argument("--timeout", type=float, default=15.0, help="page load timeout in seconds (default 15)")
    parser.add_argument("--save-snapshot", metavar="FILE", help="also write the collected snapshot JSON to FILE")
    parser.add_argument("--debug", action="store_true", help="json format: keep the algorithm's debug trace; "
                        "all formats: print timings to stderr")


def _window(value: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in value.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WxH such as 1920x1080, got {value!r}") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"window size must be positive, got {value!r}")
    return w, h


def _params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value
    return out


def _err(message: str) -> None:
    print(f"centrum extract: {message}", file=sys.stderr)


def _is_snapshot_file(page: str) -> bool:
    # Every local .json file is read as a snapshot: rendering JSON as a page would extract the JSON's own text, never
    # what was meant, while a file that is not a snapshot gets parse_snapshot's error naming what is missing. URLs and
    # missing files go to the renderer, which loads the one and names the other.
    path = Path(page)
    return page == "-" or (path.suffix.lower() == ".json" and path.is_file())


def _load_snapshot_json(page: str) -> dict[str, Any]:
    text = sys.stdin.read() if page == "-" else Path(page).read_text(encoding="utf-8")
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise ValueError("a snapshot file must hold a JSON object")
    return raw


def _check(args: argparse.Namespace, params: dict[str, Any]) -> str | None:
    """What is wrong with the request, found before any page is read, loaded or rendered (None: nothing)."""
    from ..api import check_algorithm, check_page_size

    try:
        check_algorithm(args.algorithm, params, render=not args.no_render)
    except ConfigError as e:
        return f"bad parameter: {e}"
    except (ValueError, algorithms.AlgorithmUnavailable) as e:  # unknown, or needs a rendered page
        return str(e)
    if args.no_render and args.format in ("html", "markdown"):
        return f"--format {args.format} needs node ids from a rendered page (not available with --no-render)"
    if args.page == "-" or urlparse(args.page).scheme.lower() in ("http", "https"):
        if args.no_render:
            return f"--no-render needs a local HTML file, not {'a snapshot on stdin' if args.page == '-' else 'a URL'}"
        return None
    path = Path(urlparse(args.page).path if args.page.lower().startswith("file:") else args.page)
    if not path.is_file():
        return f"{'--no-render needs a local HTML file; ' if args.no_render else ''}no such file: {args.page}"
    if not _is_snapshot_file(args.page):
        try:
            check_page_size(path.stat().st_size, f"file {args.page}")
        except ValueError as e:
            return str(e)
    return None


def run(args: argparse.Namespace) -> int:
    if args.algorithm is None:
        args.algorithm = algorithms.SOURCE_DEFAULT if args.no_render else algorithms.DEFAULT_ALGORITHM
    try:
        params = _params(args.param)
    except ValueError as e:
        _err(str(e))
        return 2
    problem = _check(args, params)
    if problem:
        _err(problem)
        return 2
    if args.no_render:
        return _run_no_render(args, params)

    timings: dict[str, float] = {}
    try:
        if _is_snapshot_file(args.page):
            raw = _load_snapshot_json(args.page)
        else:
            from ..core.render import Renderer, RenderError

            try:
                with Renderer(window=args.window, timeout_s=args.timeout) as renderer:
                    out = renderer.render(args.page, source=True)
            except RenderError as e:
                _err(str(e))
                return 2
            raw = out.raw
            timings.update({f"render.{k}": v for k, v in out.timing.items()})
            for w in out.warnings:
                _err(f"warning: {w}")
        if args.save_snapshot:
            Path(args.save_snapshot).write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
        t0 = time.perf_counter()
        snapshot = parse_snapshot(raw)
        timings["parse"] = (time.perf_counter() - t0) * 1000
    except (OSError, ValueError) as e:  # SnapshotError and JSONDecodeError are ValueErrors
        kind = "invalid snapshot" if isinstance(e, SnapshotError) else "cannot read input"
        _err(f"{kind}: {e}")
        return 2

    try:
        result = algorithms.run(args.algorithm, snapshot, params)
    except algorithms.AlgorithmUnavailable as e:
        _err(str(e))
        return 2
    except ConfigError as e:
        _err(f"bad parameter: {e}")
        return 2
    result.timing_ms.setdefault("parse", timings.get("parse", 0.0))
    if args.debug:
        _err("timings (ms): " + ", ".join(f"{k}={v:.1f}" for k, v in {**timings, **result.timing_ms}.items()))
    if not result.nodes and not result.text:
        _err(f"{args.algorithm}: no main content found: {result.message or 'no result'}")
        return 3
    out = outputs.Outputs(snapshot, result, timing_ms=timings)
    try:
        value = out.get(args.format, with_debug=args.debug)
    except outputs.OutputError as e:
        _err(str(e))
        return 2
    print(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2,
                                                            default=json_default), end="" if
          args.format in ("markdown", "html") else "\n")
    return 0


def _print(args: argparse.Namespace, result: Result, text: str, snapshot: Snapshot | None) -> int:
    """Output of a result made without a browser (--no-render): text and json only (_check refused the others)."""
    if args.format == "text":
        print(text)
    else:
        payload = result.to_json(with_debug=args.debug)
        payload["text"] = text
        print(json.dumps(payload, ensure_ascii=False, indent=2, default=json_default))
    return 0


def _run_no_render(args: argparse.Namespace, params: dict[str, Any]) -> int:
    page = Path(args.page)  # _check made sure of the algorithm, its parameters, the format and the file
    config = algorithms.raw_html_config(args.algorithm, params)
    try:
        result = algorithms.run_raw_html(args.algorithm, read_page_file(page), config)
    except ValueError as e:  # the source extractor's SourceError (a page it cannot read), or a page over its limit
        _err(f"{args.algorithm}: {e}")
        return 2
    if not result.text:
        _err(f"{args.algorithm}: no main content found: {result.message or 'no result'}")
        return 3
    return _print(args, result, result.text, None)

