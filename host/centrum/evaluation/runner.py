"""The per-page pipeline and the worker processes of ``centrum eval``.

Per page (in a worker): read the bytes, take the rendered snapshot from the cache or render it (one Chromium per
worker, restarted after any render error), run every algorithm on the parsed snapshot and every peer, and score
each extractor's text against the gold. The parent hands one page at a time to each of ``jobs`` worker processes
and kills a worker (with its Chromium, by process id) that exceeds the hard per-page timeout; that page is recorded
as a failure of every extractor and the run goes on with a fresh worker.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..gold.datasets import PageItem
from ..gold.metrics import node_prf, score_page
from ..gold.tokenize import get as get_tokenizer
from . import peers as peer_mod
from .cache import SnapshotCache, snapshot_key


@dataclass(frozen=True)
class EvalOptions:
    algorithms: tuple[str, ...]
    peers: tuple[str, ...]
    tokenizer: str = "fair"
    window: tuple[int, int] = (1920, 1080)
    timeout_s: float = 15.0  # renderer: bound on waiting for "load"
    render: bool = True  # False: raw-HTML algorithms and HTML peers only (no browser)
    use_cache: bool = True
    cache_dir: str | None = None  # snapshot folder; default $CENTRUM_CACHE/snapshots
    extras: dict[str, str] = field(default_factory=dict)  # renderer extra functions (Readability.js)
    page_timeout: float | None = None  # hard per-page limit (s); default max(180, 6 * timeout_s)
    save_texts: bool = False  # return each extractor's text with its row (written under --out/texts/)
    log_path: str | None = None  # workers' stdout/stderr (peers print warnings) go here, not over the progress bar
    block_stylesheets: bool = False  # render with every stylesheet request aborted (eval --styles off/both)

    @property
    def page_timeout_s(self) -> float:
        # Whole-page budget before the parent kills the worker: load + collection + every extractor.
        return self.page_timeout if self.page_timeout else max(180.0, 6 * self.timeout_s)


def render_class(stylesheets: dict[str, int] | None) -> str:
    """``styled`` when at least one external stylesheet loaded and none failed, else ``unstyled`` (the rule of
    docs/evaluation.md, "Splits")."""
    if stylesheets is None:
        return "unrendered"
    loaded, failed = int(stylesheets.get("loaded", 0)), int(stylesheets.get("failed", 0))
    return "styled" if loaded > 0 and failed == 0 else "unstyled"


def cache_extras(opts: EvalOptions) -> dict[str, str]:
    """The ``extras`` part of a snapshot's cache key: the in-page functions, plus a marker for a render with its
    stylesheets blocked (its own entry; the default render's key, and so the existing cache, is unchanged)."""
    return {**opts.extras, "(stylesheets)": "blocked"} if opts.block_stylesheets else dict(opts.extras)


class _Worker:
    """State of one worker process: the renderer (started lazily: a fully cached run starts no browser)."""

    def __init__(self, opts: EvalOptions) -> None:
        self.opts = opts
        self.cache = SnapshotCache(Path(opts.cache_dir) if opts.cache_dir else None)
        self.renderer: Any = None
        self.tokenize = get_tokenizer(opts.tokenizer)

    def close(self) -> None:
        if self.renderer is not None:
            try:
                self.renderer.close()
            except Exception:  # noqa: BLE001 - a dead browser cannot be closed more cleanly
                pass
            self.renderer = None

    def _render(self, item: PageItem, html: bytes) -> tuple[dict[str, Any] | None, str, bool]:
        """(cache entry, error, from_cache)."""
        key = snapshot_key(html, self.opts.window, cache_extras(self.opts))
        if self.opts.use_cache:
            entry = self.cache.find(html, self.opts.window, cache_extras(self.opts))
            if entry is not None:
                return entry, "", True
        from ..core.render import Renderer

        try:
            if self.renderer is None:
                self.renderer = Renderer(window=self.opts.window, timeout_s=self.opts.timeout_s,
                                         block_stylesheets=self.opts.block_stylesheets)
                self.renderer.start()
            out = self.renderer.render(item.html_path, source=True, extra=self.opts.extras)
        except Exception as e:  # noqa: BLE001 - any render failure is recorded; the browser is restarted
            self.close()
            return None, f"render failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", False
        entry = {"raw": out.raw, "stylesheets": out.stylesheets, "timing": out.timing, "extra": out.extra,
                 "errors": out.errors, "warnings": out.warnings}
        if self.opts.use_cache:  # --no-cache asks for this render, not an earlier one
            entry = self.cache.settle(html, self.opts.window, cache_extras(self.opts), entry)
        try:
            self.cache.store(key, entry)
        except OSError:
            pass  # a full or read-only cache only costs a re-render next time
        return entry, "", False

    @staticmethod
    def _gold_nodes(item: PageItem, snap: Any, page: dict[str, Any]) -> list[int] | None:
        """Node-level gold of a labelled page (meta ``node_paths`` from ``centrum labels export``) in this render;
        None without such gold. A path that no longer resolves makes the page's node gold unusable (noted)."""
        paths = item.meta.get("node_paths")
        if snap is None or not isinstance(paths, list) or not paths:
            return None
        from ..annotation.labels import resolve_path

        nodes = [resolve_path(snap, str(p)) for p in paths]
        if any(v is None for v in nodes):
            page["node_gold"] = f"{sum(v is None for v in nodes)} of {len(nodes)} gold node paths not found"
            return None
        page["node_gold"] = "ok"
        return [int(v) for v in nodes if v is not None]

    def process(self, item: PageItem) -> dict[str, Any]:
        from .. import algorithms
        from ..core.snapshot import parse_snapshot

        html = item.html()
        page: dict[str, Any] = {"dataset": item.dataset, "id": item.id, "language": item.language,
                                "page_type": item.page_type, "bytes": len(html), "gold_kind": item.gold.kind,
                                "render_error": "",
                                "from_cache": False, "stylesheets": None, "render_ms": None, "elements": None,
                                "styles": "off" if self.opts.block_stylesheets else "on"}
        outputs: dict[str, dict[str, Any]] = {}  # extractor -> {"text", "ms", "error", "kind"}
        snap = None
        entry = None
        if self.opts.render and (self.opts.algorithms or any(
                peer_mod.PEERS[p].source == "render" for p in self.opts.peers)):
            entry, err, cached = self._render(item, html)
            page["from_cache"] = cached
            if entry is None:
                page["render_error"] = err
            elif not str(((entry.get("raw") or {}).get("page") or {}).get("url", "file:")).startswith("file:"):
                # A script sent the saved page elsewhere (offline: to Chrome's error page). Judging extractors on
                # "This file couldn't be accessed" would be meaningless: it is a render failure.
                page["render_error"] = f"page navigated away to {entry['raw']['page']['url'][:80]}"
                entry = None
            else:
                page["stylesheets"] = entry.get("stylesheets")
                page["render_ms"] = (entry.get("timing") or {}).get("total")
                t0 = time.perf_counter()
                try:
                    snap = parse_snapshot(entry["raw"])
                    page["elements"] = snap.n
                except Exception as e:  # noqa: BLE001 - a bad snapshot fails the algorithms, not the run
                    page["render_error"] = f"snapshot rejected: {e}"
                page["parse_ms"] = (time.perf_counter() - t0) * 1000
        page["render_class"] = render_class(page["stylesheets"]) if snap is not None else "unrendered"
        gold_nodes = self._gold_nodes(item, snap, page)

        for name in self.opts.algorithms:
            if snap is None and not self.opts.render:  # --no-render: only raw-HTML algorithms are selected
                outputs[name] = _raw_html_output(name, html)
                continue
            if snap is None:
                outputs[name] = {"text": None, "ms": None, "error": page["render_error"] or "not rendered",
                                 "kind": "render"}
                continue
            t0 = time.perf_counter()
            try:
                result = algorithms.run(name, snap)
                ms = (time.perf_counter() - t0) * 1000
                text = result.text_for(snap)
                err = "" if text.strip() else f"empty result: {result.message or 'no nodes'}"
                outputs[name] = {"text": text, "ms": ms, "error": err, "kind": "empty" if err else "",
                                 "nodes": [int(v) for v in result.nodes]}
            except Exception as e:  # noqa: BLE001 - scored 0 and listed
                outputs[name] = {"text": None, "ms": (time.perf_counter() - t0) * 1000,
                                 "error": f"{type(e).__name__}: {e}"[:300], "kind": "error",
                                 "trace": traceback.format_exc(limit=3)[-800:]}

        for name in self.opts.peers:
            ans = peer_mod.run_peer(name, html, item.language, snap, entry, page["render_error"])
            outputs[name] = {"text": ans.text, "ms": ans.ms, "error": ans.error, "kind": ans.kind}

        rows = []
        for name, out in outputs.items():
            score = score_page(item.gold, out["text"], self.tokenize)
            if gold_nodes is not None and snap is not None and name in self.opts.algorithms:
                score["node_p"], score["node_r"], score["node_f1"] = node_prf(snap.subtree_end, gold_nodes,
                                                                              out.get("nodes") or [])
            rows.append({"extractor": name, "ms": out["ms"], "error": out["error"], "failure": out["kind"],
                         **score})
            if self.opts.save_texts:
                rows[-1]["text"] = out["text"]
        page["rows"] = rows
        return page


def _raw_html_output(name: str, html: bytes) -> dict[str, Any]:
    """A raw-HTML algorithm's answer on the page bytes (``--no-render``), as the rendered outputs are recorded."""
    from .. import algorithms

    t0 = time.perf_counter()
    try:
        result = algorithms.run_raw_html(name, html)
    except Exception as e:  # noqa: BLE001 - an unreadable page (SourceError) or a crash: scored 0 and listed
        return {"text": None, "ms": (time.perf_counter() - t0) * 1000, "error": f"{type(e).__name__}: {e}"[:300],
                "kind": "error"}
    text = result.text or ""
    err = "" if text.strip() else f"empty result: {result.message or 'no text'}"
    return {"text": text, "ms": (time.perf_counter() - t0) * 1000, "error": err, "kind": "empty" if err else ""}


def failed_page(item: PageItem, opts: EvalOptions, reason: str) -> dict[str, Any]:
    """Result of a page whose worker crashed or timed out: every extractor failed and scores 0."""
    tokenize = get_tokenizer(opts.tokenizer)
    rows = [{"extractor": name, "ms": None, "error": reason, "failure": "crash", **score_page(item.gold, None,
                                                                                             tokenize)}
            for name in (*opts.algorithms, *opts.peers)]
    return {"dataset": item.dataset, "id": item.id, "language": item.language, "page_type": item.page_type,
            "bytes": item.html_path.stat().st_size,
            "gold_kind": item.gold.kind, "render_error": reason, "from_cache": False, "stylesheets": None,
            "render_ms": None, "elements": None, "render_class": "unrendered", "rows": rows}


def _worker_main(opts: EvalOptions, inbox: Any, outbox: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles ^C and stops the workers
    if opts.log_path:
        fd = os.open(opts.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    worker = _Worker(opts)
    parent = os.getppid()
    try:
        while True:
            try:
                task = inbox.get(timeout=2.0)
            except queue.Empty:
                if os.getppid() != parent:
                    break  # the parent died without stopping us: close the browser and leave, never linger
                continue
            if task is None:
                break
            index, item = task
            try:
                outbox.put((os.getpid(), index, worker.process(item)))
            except Exception as e:  # noqa: BLE001 - never let one page end the worker
                outbox.put((os.getpid(), index, {"__error__": f"{type(e).__name__}: {e}"}))
    finally:
        worker.close()


def _descendants(pid: int) -> list[int]:
    """Process ids below ``pid`` (its browser and helpers), read from /proc before anything is killed."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        for c in children.get(stack.pop(), []):
            out.append(c)
            stack.append(c)
    return out


def _kill_tree(proc: Any) -> None:
    pids = _descendants(proc.pid) if os.path.isdir("/proc") else []
    for pid in [proc.pid, *pids]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.join(timeout=5)


class _Slot:
    def __init__(self, ctx: Any, opts: EvalOptions, outbox: Any) -> None:
        self.inbox = ctx.Queue()
        self.proc = ctx.Process(target=_worker_main, args=(opts, self.inbox, outbox), daemon=True)
        self.proc.start()
        self.task: tuple[int, PageItem] | None = None
        self.started = 0.0


def run_pages(items: list[PageItem], opts: EvalOptions, jobs: int = 1) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(index, page result)`` as pages finish (any order), with ``jobs`` worker processes."""
    if not items:
        return
    ctx = mp.get_context("spawn")  # no inherited threads or Playwright state
    outbox = ctx.Queue()
    pending = list(reversed(list(enumerate(items))))
    slots = [_Slot(ctx, opts, outbox) for _ in range(max(1, min(jobs, len(items))))]
    done = 0
    try:
        while done < len(items):
            for slot in slots:
                if slot.task is None and pending:
                    slot.task = pending.pop()
                    slot.started = time.monotonic()
                    slot.inbox.put(slot.task)
            try:
                pid, index, result = outbox.get(timeout=1.0)
            except queue.Empty:
                pid = None
            if pid is not None:
                for slot in slots:
                    if slot.proc.pid == pid and slot.task is not None and slot.task[0] == index:
                        item = slot.task[1]
                        slot.task = None
                        if "__error__" in result:
                            result = failed_page(item, opts, f"worker error: {result['__error__']}")
                        done += 1
                        yield index, result
                        break
            now = time.monotonic()
            for i, slot in enumerate(slots):
                if slot.task is None:
                    continue
                dead = not slot.proc.is_alive()
                late = now - slot.started > opts.page_timeout_s
                if dead or late:
                    index, item = slot.task
                    reason = (f"page timed out after {opts.page_timeout_s:g} s (worker and browser killed)" if late
                              else f"worker died (exit code {slot.proc.exitcode})")
                    _kill_tree(slot.proc)
                    slots[i] = _Slot(ctx, opts, outbox)
                    done += 1
                    yield index, failed_page(item, opts, reason)
    finally:
        for slot in slots:
            if slot.proc.is_alive():
                slot.inbox.put(None)
        deadline = time.monotonic() + 20
        for slot in slots:
            slot.proc.join(timeout=max(0.1, deadline - time.monotonic()))
            if slot.proc.is_alive():
                _kill_tree(slot.proc)
