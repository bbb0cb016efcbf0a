"""One batch worker: a headless Chromium (``centrum.core.render.Renderer``) and the algorithms, turning a :class:`Task`
into one output row. Plain Python: the engine wraps it as a Ray actor, and nothing here imports Ray.

Faults: a render that fails or outlasts ``page_timeout`` (its Chromium is killed by process id) is retried once on a
fresh browser, then the row records the failure with its reason. Every row carries the worker's process id and Ray
node, so a run shows where each record was processed.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.limits import PAGE_ARCHIVE_BYTES, ROW_TEXT_CHARS, TooLarge
from .inputs import IndexEntry, Page, Task, WarcIndex, archived, follow, read_page

# Error codes of failed rows (``error_code``); "" for a row with content.
E_RENDER = "E_RENDER"  # the browser could not load or collect the page (twice)
E_TIMEOUT = "E_TIMEOUT"  # the page outlasted --page-timeout (twice); its browser was killed
E_INPUT = "E_INPUT"  # the record could not be read or decoded
E_TOO_LARGE = "E_TOO_LARGE"  # the record is over one of centrum.core.limits.INPUT_LIMITS (the message names it)
E_SNAPSHOT = "E_SNAPSHOT"  # the collected snapshot was rejected
E_ALGORITHM = "E_ALGORITHM"  # the algorithm raised
E_EMPTY = "E_EMPTY"  # the algorithm found no main content
E_WORKER = "E_WORKER"  # the worker process died on this record more than once


@dataclass(frozen=True)
class WorkerOptions:
    algorithm: str
    render: bool = True  # False: source-only algorithms on the HTML bytes, no browser
    params: dict[str, Any] = field(default_factory=dict)
    window: tuple[int, int] = (1920, 1080)
    timeout_s: float = 15.0  # renderer: bound on waiting for "load"
    page_timeout_s: float = 60.0  # hard bound on one render; the browser is killed past it
    markdown: bool = True  # also write the Markdown of the answer (centrum.output.outputs)
    # Also read the page's metadata (title, author, date, language...): on --no-render rows it costs more CPU than
    # the extraction (a second parse and the date and byline rules), which a text-only crawl need not pay.
    metadata: bool = True


def empty_row(task: Task, algorithm: str, code: str, message: str, status: str = "failed") -> dict[str, Any]:
    """The row of a record that produced nothing (also written by the engine for a record no worker extracts, or
    whose worker died), with the record's provenance."""
    return {"record_id": task.record_id, "url": task.url, "source": task.path, "algorithm": algorithm,
            "status": status, "error_code": code, "error_message": message[:2000], "text": None, "markdown": None,
            "metadata": None, "language": None, "node_paths": [], "nodes": [], "timing_ms": "{}",
            "http_status": task.http_status, "charset": None, "content_type": task.content_type or None,
            "render_class": "unrendered", "stylesheets_loaded": 0, "stylesheets_failed": 0, "warnings": [],
            "attempts": 0, "worker_pid": os.getpid(), "worker_node": _node_id(),
            "warc_type": task.warc_type or None, "warc_date": task.warc_date or None,
            "offset": task.offset if task.offset >= 0 else None, "length": task.length if task.length >= 0 else None,
            "content_hash": task.content_hash or None, "duplicate_of": task.duplicate_of or None,
            "text_truncated": False}


def cap_text(row: dict[str, Any]) -> None:
    """Cut the row's text and Markdown at ``row_text_chars`` (limits.INPUT_LIMITS), at the last line end in the final
    tenth when there is one, and say so on the row."""
    cap = ROW_TEXT_CHARS
    for key in ("text", "markdown"):
        value = row.get(key)
        if isinstance(value, str) and len(value) > cap:
            cut = value.rfind("\n", cap - cap // 10, cap)
            row[key] = value[: cut if cut > 0 else cap]
            row["text_truncated"] = True
            row["warnings"] = [*row.get("warnings", []), f"{key} cut at {len(row[key])} of {len(value)} characters "
                               f"(the row_text_chars limit, {cap})"]


def _language(row: dict[str, Any]) -> str | None:
    """The page's declared language (``<html lang>``, then its metadata's declarations), from the row's metadata."""
    try:
        return json.loads(row["metadata"]).get("language") if row.get("metadata") else None
    except (ValueError, AttributeError):
        return None


def _node_id() -> str:
    """The Ray node this runs on, inside the Ray engine's actors; "" elsewhere. Ray is looked up, never imported: the
    local engine's processes (and its driver, which writes rows too) must not import it (a second of start-up, and
    a Ray imported before engine.LOOPBACK_ENV is set would make a later Ray run in the process listen beyond
    loopback)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return str(ray.get_runtime_context().get_node_id())
    return ""


def _kill_browsers() -> int:
    """SIGKILL the Chromium processes below this worker (Playwright's own driver stays, so the next browser can
    start). Returns how many were killed."""
    from ..evaluation.runner import _descendants

    killed = 0
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/comm", encoding="ascii", errors="replace") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith(("chrom", "headless_shell")):
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


class BatchWorker:
    def __init__(self, options: WorkerOptions) -> None:
        from .. import algorithms

        if options.algorithm not in algorithms.REGISTRY:
            raise ValueError(f"unknown algorithm {options.algorithm!r}")
        self.opts = options
        self._renderers: dict[bool, Any] = {}  # archive mode -> Renderer
        self._indexes: dict[str, WarcIndex] = {}  # WARC path -> its index (from the driver, kept per WARC)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="centrum-batch")
        self._source_config: Any = None
        self._batches = 0
        if not options.render:
            if options.algorithm not in algorithms.SOURCE_ALGORITHMS:
                raise ValueError(f"--no-render works only with {', '.join(algorithms.SOURCE_ALGORITHMS)} (they read "
                                 f"the HTML source); {options.algorithm!r} needs a rendered page")
            self._source_config = algorithms.raw_html_config(options.algorithm, options.params)

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        return _node_id()

    def set_index(self, path: str, index: WarcIndex) -> None:
        # The driver hands WARCs out in order; a few are kept for records re-run from an earlier one.
        self._indexes[path] = index
        while len(self._indexes) > 4:
            self._indexes.pop(next(iter(self._indexes)))

    def close(self) -> None:
        for r in self._renderers.values():
            try:
                r.close()
            except Exception:  # noqa: BLE001 - a killed browser cannot be closed more cleanly
                pass
        self._renderers.clear()

    # ---- records ---------------------------------------------------------------------------------------------------
    def process_many(self, items: list[tuple[Task, int]]) -> list[dict[str, Any]]:
        self._batches += 1
        if self._batches == 2:
            # LightGBM's compiled predictor when the train extra is installed (the host does the same while it warms
            # up): a worker answers many pages, and the import (under a second, once) costs less than the numpy
            # evaluator's extra time on a few hundred pages. Imported once the first rows are out, so that a run's
            # start is not delayed by it (docs/algorithms/source.md).
            from ..algorithms.ensemble.model import native_predictor

            native_predictor()
        return [self.process(task, attempts) for task, attempts in items]

    def process(self, task: Task, attempts: int = 1) -> dict[str, Any]:
        try:
            row = self._process(task)
        except Exception as e:  # noqa: BLE001 - one bad record never ends the worker
            row = empty_row(task, self.opts.algorithm, E_ALGORITHM, f"{type(e).__name__}: {e}\n"
                            f"{traceback.format_exc(limit=3)[-800:]}")
        row["attempts"] = max(int(row.get("attempts") or 0), attempts)
        return row

    def _process(self, task: Task) -> dict[str, Any]:
        row = empty_row(task, self.opts.algorithm, "", "")
        timing: dict[str, float] = {}
        page = Page(None, b"")
        if task.kind != "url" or not self.opts.render:
            t0 = time.perf_counter()
            try:
                page = read_page(task)
            except TooLarge as e:
                return {**row, "error_code": E_TOO_LARGE, "error_message": str(e), "status": "failed"}
            except (OSError, ValueError) as e:
                return {**row, "error_code": E_INPUT, "error_message": f"cannot read the record: {e}",
                        "status": "failed"}
            timing["read"] = (time.perf_counter() - t0) * 1000
            row["http_status"] = page.http_status
            row["charset"] = page.charset
            if not row["content_hash"]:  # a saved file: hashed here, where its bytes are read
                row["content_hash"] = page.content_hash()
        if not self.opts.render:
            row = self._source_only(task, row, page, timing)
        else:
            row = self._rendered(task, row, timing)
        row["language"] = _language(row)
        cap_text(row)
        return row

    def _source_only(self, task: Task, row: dict[str, Any], page: Page, timing: dict[str, float]) -> dict[str, Any]:
        from .. import algorithms

        if task.kind == "url":
            return {**row, "status": "failed", "error_code": E_INPUT,
                    "error_message": "--no-render reads archived or saved HTML; a URL list needs rendering"}
        html = page.html()  # centrum.core.charset, as extract and eval read the same bytes
        t0 = time.perf_counter()
        try:
            result = algorithms.run_raw_html(self.opts.algorithm, html, self._source_config)
        except ValueError as e:  # the source extractor's SourceError: an empty, oversized or unparsable page
            return {**row, "status": "failed", "error_code": E_INPUT, "error_message": str(e)[:2000], "attempts": 1}
        timing["algorithm"] = (time.perf_counter() - t0) * 1000
        text = result.text or ""
        # The `source` algorithm's answer also names its blocks' containers (centrum.annotation.labels paths in the
        # parsed source); the DANA family answers text only.
        row.update(text=text, timing_ms=json.dumps(timing), attempts=1,
                   node_paths=list(result.debug.get("node_paths", [])))
        # Metadata and Markdown from the parsed source (the same extractor and converter as rendered rows, the
        # answer's elements found by their paths).
        if self.opts.metadata or self.opts.markdown:
            try:
                row.update(self._source_outputs(task, html, text, row["node_paths"]))
            except Exception as e:  # noqa: BLE001 - metadata and Markdown are a courtesy; the text is the row's point
                row["warnings"] = [f"outputs: {type(e).__name__}: {e}"[:300]]
        if not text.strip():
            row.update(status="failed", error_code=E_EMPTY, error_message=result.message or "no main content")
        else:
            row["status"] = "ok"
        # No node ids: --no-render has no snapshot.
        return row

    def _source_outputs(self, task: Task, html: str, text: str, paths: list[str]) -> dict[str, Any]:
        from ..core.metadata import Metadata, extract_metadata
        from ..output.outputs import from_html, source_markdown

        out: dict[str, Any] = {}
        source_page = from_html(html, task.url)
        meta = extract_metadata(source_page, [], text) if self.opts.metadata else Metadata()
        if self.opts.metadata:
            out["metadata"] = json.dumps(meta.to_json(), ensure_ascii=False)
        if self.opts.markdown and text.strip():
            out["markdown"] = source_markdown(source_page, paths, text, meta)
        return out

    def _renderer(self, archive: bool) -> Any:
        r = self._renderers.get(archive)
        if r is None:
            from ..core.render import Renderer

            r = Renderer(window=self.opts.window, timeout_s=self.opts.timeout_s, archive=archive)
            r.start()
            self._renderers[archive] = r
        return r

    def _drop_renderer(self, archive: bool) -> None:
        r = self._renderers.pop(archive, None)
        if r is None:
            return
        # close() waits on the browser: run it off this thread, bounded, so a wedged Chromium cannot hang us.
        done = self._pool.submit(r.close)
        try:
            done.result(timeout=30)
        except Exception:  # noqa: BLE001 - already dead or wedged: its processes are killed below
            _kill_browsers()

    def _lookup(self, task: Task, notes: list[str]) -> Any:
        """The archive as the renderer sees it for ``task``: a response over a limit is refused (as one the crawl
        lacks) with a note for the row's warnings, and so is every response once the page's archived bodies would
        pass ``page_archive_bytes``."""
        index = self._indexes.get(task.path) or {}
        served = 0

        def lookup(url: str) -> Any:
            nonlocal served
            try:
                entry: IndexEntry | None = follow(task.path, index, url)
                if entry is None:
                    return None
                hit = archived(task.path, entry, page=url == task.url.split("#", 1)[0])
            except TooLarge as e:
                note(f"refused {url[:200]}: {e}")
                return None
            except (OSError, ValueError):
                return None
            if served + len(hit.body) > PAGE_ARCHIVE_BYTES:
                note(f"refused {url[:200]}: the page's archived bodies would pass the page_archive_bytes limit "
                     f"({PAGE_ARCHIVE_BYTES} bytes)")
                return None
            served += len(hit.body)
            return hit

        def note(message: str) -> None:
            if len(notes) < 20:  # a page naming thousands of refused files gets a sample, not a second payload
                notes.append(message[:400])

        return lookup

    def _render_once(self, task: Task, notes: list[str]) -> Any:
        archive = task.kind == "warc"
        renderer = self._renderer(archive)
        target = task.url if task.kind != "file" else task.path
        fut = self._pool.submit(renderer.render, target, True, None, self._lookup(task, notes) if archive else None)
        try:
            return fut.result(timeout=self.opts.page_timeout_s)
        except concurrent.futures.TimeoutError:
            # Kill the browser: the render thread then fails at once and the renderer is replaced.
            _kill_browsers()
            try:
                fut.result(timeout=30)
            except Exception:  # noqa: BLE001 - expected: its browser is gone
                pass
            self._drop_renderer(archive)
            raise TimeoutError(f"page did not render within --page-timeout {self.opts.page_timeout_s:g} s "
                               "(browser killed)") from None
        except Exception:
            self._drop_renderer(archive)
            raise

    def _rendered(self, task: Task, row: dict[str, Any], timing: dict[str, float]) -> dict[str, Any]:
        from .. import algorithms
        from ..annotation.labels import node_paths
        from ..core.snapshot import parse_snapshot
        from ..evaluation.runner import render_class
        from ..output import outputs

        out = None
        errors: list[str] = []
        notes: list[str] = []  # archived responses refused over a limit
        code = E_RENDER
        for attempt in (1, 2):  # once, then once more on a fresh browser
            row["attempts"] = attempt
            notes.clear()
            try:
                out = self._render_once(task, notes)
                break
            except TimeoutError as e:
                code = E_TIMEOUT
                errors.append(f"attempt {attempt}: {e}")
            except Exception as e:  # noqa: BLE001 - RenderError, Playwright errors, a dead browser
                code = E_RENDER if not errors or code != E_TIMEOUT else code
                errors.append(f"attempt {attempt}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        if out is None:
            return {**row, "status": "failed", "error_code": code, "error_message": "; ".join(errors)}
        timing.update({f"render.{k}": float(v) for k, v in out.timing.items()})
        row.update(render_class=render_class(out.stylesheets), stylesheets_loaded=int(out.stylesheets["loaded"]),
                   stylesheets_failed=int(out.stylesheets["failed"]), warnings=list(out.warnings) + errors + notes)
        t0 = time.perf_counter()
        try:
            snapshot = parse_snapshot(out.raw)
        except ValueError as e:
            return {**row, "status": "failed", "error_code": E_SNAPSHOT, "error_message": str(e)[:2000],
                    "timing_ms": json.dumps(timing)}
        timing["parse"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        try:
            result = algorithms.run(self.opts.algorithm, snapshot, self.opts.params)
        except Exception as e:  # noqa: BLE001 - recorded on the row
            return {**row, "status": "failed", "error_code": E_ALGORITHM, "error_message": f"{type(e).__name__}: {e}",
                    "timing_ms": json.dumps(timing)}
        timing["algorithm"] = (time.perf_counter() - t0) * 1000
        # The same text, Markdown and metadata as `centrum extract` (one implementation: centrum.output.outputs).
        o = outputs.Outputs(snapshot, result, url=task.url if task.kind == "warc" else None, timing_ms=timing)
        text = o.text
        row["text"] = text
        row["nodes"] = [int(v) for v in result.nodes]
        try:
            row["node_paths"] = node_paths(snapshot, result.nodes)
        except Exception as e:  # noqa: BLE001 - very deep selections are refused by the path builder
            row["warnings"].append(f"node paths: {e}"[:300])
        try:
            if self.opts.metadata:
                row["metadata"] = json.dumps(o.metadata().to_json(), ensure_ascii=False)
            if self.opts.markdown and result.nodes:
                row["markdown"] = o.markdown()
        except Exception as e:  # noqa: BLE001 - the text stands without them
            row["warnings"].append(f"outputs: {type(e).__name__}: {e}"[:300])
        row["timing_ms"] = json.dumps(timing)
        if not text.strip():
            row.update(status="failed", error_code=E_EMPTY, error_message=result.message or "no main content")
        else:
            row["status"] = "ok"
        return row


def options_json(opts: WorkerOptions) -> dict[str, Any]:
    return asdict(opts)
