"""The local engine of ``centrum batch``: worker processes on this machine, no cluster (the default without
``--address``). Each worker is a spawned Python process holding one :class:`BatchWorker` (its own headless
Chromium when rendering), fed records over a pipe with the same bounded window, chunking and exactly-once writing as
the Ray engine (:class:`.engine.Driver`). A worker that dies (or is killed for outliving its page budget) is
replaced and its records re-run; one that has killed too many workers is written as failed (E_WORKER).

Spawned, not forked: a fork would copy the driver's threads and buffers (the progress bar, pyarrow's pools) into a
process that only needs the extractor. A worker ends when its pipe closes, so workers end with the driver; the
run's :class:`.reaper.Reaper` ends whatever is left below them (a browser of a worker killed mid-page) also when the
driver is SIGKILLed. Nothing here imports Ray.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import tempfile
import time
from collections import deque
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from .engine import BatchError, BatchOptions, BatchSummary, Driver
from .inputs import Task
from .reaper import Reaper
from .shards import ShardWriter
from .worker import WorkerOptions


def _serve(conn: Connection, options: WorkerOptions) -> None:
    """A worker process: ("ready", pid), then per call of ``(items, {WARC path: index file})`` ("rows", rows); on a
    worker that cannot start ("error", message). Ends when the driver closes the pipe (or dies)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle: it stops us by closing the pipe
    from .worker import BatchWorker

    try:
        worker = BatchWorker(options)
    except Exception as e:  # noqa: BLE001 - reported to the driver, which refuses the run with it
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    loaded: set[str] = set()
    try:
        conn.send(("ready", os.getpid()))
        while True:
            try:
                items, index_files = conn.recv()
            except (EOFError, OSError):
                return
            for path, file in index_files.items():
                if path not in loaded:
                    with open(file, "rb") as f:
                        worker.set_index(path, pickle.load(f))  # written by this run's driver, in its temp folder
                    loaded.add(path)
            conn.send(("rows", worker.process_many(items)))
    except (BrokenPipeError, EOFError):
        pass  # the driver is gone
    finally:
        worker.close()


class _Proc:
    """One worker process, its pipe and its calls in order (a worker runs them one after the other)."""

    def __init__(self, ctx: Any, options: WorkerOptions) -> None:
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, options), daemon=True, name="centrum-batch-worker")
        self.proc.start()
        child.close()  # ours is the only end left here: the worker's death reads as EOF
        self.conn: Connection = parent
        self.calls: deque[list[tuple[Task, int]]] = deque()
        self.head_since = time.monotonic()  # when the call now running started
        self.ready = False
        self.indexes: set[str] = set()

    def kill(self) -> None:
        """SIGKILL the worker and the browsers below it (a killed worker cannot close them)."""
        from ..evaluation.runner import _descendants

        below = _descendants(self.proc.pid) if self.proc.pid else []
        for pid in [self.proc.pid, *below]:
            try:
                os.kill(pid, signal.SIGKILL)  # type: ignore[arg-type]
            except (ProcessLookupError, TypeError):
                pass


class _LocalRun(Driver):
    def __init__(self, opts: BatchOptions, done: set[str], writer: ShardWriter, tmp: Path) -> None:
        super().__init__(opts, done, writer, "local")
        self.ctx = multiprocessing.get_context("spawn")
        self.tmp = tmp
        self.index_files: dict[str, str] = {}
        n = max(1, opts.actors or len(os.sched_getaffinity(0)))
        self.summary.actors = n
        self.procs = [_Proc(self.ctx, opts.worker) for _ in range(n)]

    def _index_file(self, path: str) -> str:
        file = self.index_files.get(path)
        if file is None:
            file = str(self.tmp / f"index-{len(self.index_files)}.pickle")
            with open(file, "wb") as f:
                pickle.dump(self.indexes[path], f, protocol=pickle.HIGHEST_PROTOCOL)
            self.index_files[path] = file
        return file

    def _send(self, p: _Proc, items: list[tuple[Task, int]]) -> bool:
        files = {}
        if self.opts.worker.render:  # only a render serves subresources from the index
            files = {t.path: self._index_file(t.path) for t, _ in items if t.kind == "warc"
                     and t.path not in p.indexes}
        p.calls.append(items)
        if len(p.calls) == 1:
            p.head_since = time.monotonic()
        try:
            p.conn.send((items, files))
        except (BrokenPipeError, OSError):
            return False  # dead: found by the loop, which re-runs its calls (this one included)
        p.indexes.update(files)
        return True

    def loop(self) -> None:
        while True:
            for p in self.procs:
                while len(p.calls) < self.opts.window_per_actor:
                    items = self.take_chunk()
                    if not items or not self._send(p, items):
                        break
            if not any(p.calls for p in self.procs) and all(p.ready for p in self.procs):
                break
            conns = {p.conn: p for p in self.procs}
            sentinels = {p.proc.sentinel: p for p in self.procs}
            for ready in wait([*conns, *sentinels], timeout=1.0):
                p = conns.get(ready) or sentinels[ready]  # type: ignore[call-overload]
                if p in self.procs:
                    self._receive(p)
            now = time.monotonic()
            for p in self.procs:
                if p.calls and now - p.head_since > self.stuck_s:
                    p.kill()  # its calls are re-run once its death is seen
            self.writer.tick()
            self.other.tick()

    def _receive(self, p: _Proc) -> None:
        """Everything ``p`` has sent; then, if it is dead, its remaining calls re-run on a fresh worker."""
        try:
            while p.conn.poll():
                kind, value = p.conn.recv()
                if kind == "error":
                    raise BatchError(f"a worker could not start: {value}")
                if kind == "ready":
                    p.ready = True
                    if all(q.ready for q in self.procs):
                        self.ready()
                    continue
                items = p.calls.popleft()
                p.head_since = time.monotonic()
                for row in value:
                    self.write(row)
                del items
        except (EOFError, OSError):
            pass
        if p.proc.is_alive():
            return
        p.conn.close()
        self.summary.worker_deaths += 1
        reason = f"worker process {p.proc.pid} ended with exit code {p.proc.exitcode}"
        calls = list(p.calls)
        self.procs[self.procs.index(p)] = _Proc(self.ctx, self.opts.worker)
        for items in calls:
            self.lost(items, reason)

    def close(self) -> None:
        """Keep the rows written so far, then stop the workers: their pipes close, they close their browsers."""
        self.finish()
        for p in self.procs:
            p.conn.close()
        deadline = time.monotonic() + 30
        for p in self.procs:
            p.proc.join(timeout=max(0.1, deadline - time.monotonic()))
            if p.proc.is_alive():
                p.kill()
                p.proc.join(timeout=5)


def run_local(opts: BatchOptions, done: set[str], writer: ShardWriter) -> BatchSummary:
    from multiprocessing import resource_tracker

    # Spawning starts multiprocessing's resource tracker, which outlives the run by design: started before the
    # reaper, it does not carry the run's token (the reaper would end it, and report it as left over).
    resource_tracker.ensure_running()
    reaper = Reaper()  # started before the workers: they and their browsers inherit its token
    reaper.start()
    try:
        with tempfile.TemporaryDirectory(prefix="centrum-batch-") as tmp:
            run = _LocalRun(opts, done, writer, Path(tmp))
            try:
                run.loop()
            finally:
                run.close()  # also on an interrupt: the rows finished before it are kept
    finally:
        reaper.stop()
    return run.summary
