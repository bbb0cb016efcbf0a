"""The Ray side of ``centrum batch``: start (or join) a cluster, keep a pool of :class:`BatchWorker` actors busy
with a bounded window of records, stream rows into shards, and re-run the records of a worker that died.

Ray is imported here only (the ``batch`` extra); ``import centrum`` and the extractors never import it.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .inputs import Task, WarcIndex, iter_inputs
from .shards import ShardWriter, done_ids, shard_files
from .worker import E_WORKER, BatchWorker, WorkerOptions, empty_row

LOCAL_IP = "127.0.0.1"


class BatchError(RuntimeError):
    """The batch cannot start (Ray missing, output folder in use, unreachable cluster)."""


@dataclass
class BatchOptions:
    inputs: list[Path]
    out: Path
    worker: WorkerOptions
    fmt: str = "parquet"
    limit: int | None = None  # at most this many input records (in input order), counting ones already done
    resume: bool = False
    actors: int | None = None  # default: one per CPU of the cluster
    address: str | None = None  # None: a local cluster bound to 127.0.0.1; "auto" or HOST:PORT: join one
    object_store_mb: int = 384  # the local cluster's object store (rows are small; records never pass through it)
    rows_per_shard: int = 1000
    window_per_actor: int = 2  # calls queued per actor: one running, one ready (the backpressure bound)
    chunk: int | None = None  # records per call; default 1 rendered (a page is ~1 s), 16 --no-render (~ms each)
    max_worker_deaths: int = 2  # a record whose worker died this often is written as failed (E_WORKER)
    progress: bool = True


@dataclass
class BatchSummary:
    records: int = 0  # rows written by this run
    ok: int = 0
    failed: int = 0
    skipped: int = 0  # already in the output (--resume)
    worker_deaths: int = 0
    actors: int = 0
    nodes: set[str] = field(default_factory=set)
    seconds: float = 0.0
    first_row_s: float | None = None  # since the start: the first and last row (steady-state rate between them)
    last_row_s: float | None = None
    shards: list[str] = field(default_factory=list)

    @property
    def pages_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def steady_pages_per_s(self) -> float:
        """Rows per second between the first and the last row: without cluster and browser start-up."""
        if self.first_row_s is None or self.last_row_s is None or self.last_row_s <= self.first_row_s:
            return 0.0
        return (self.records - 1) / (self.last_row_s - self.first_row_s)


def _import_ray() -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never phone home (before the first import)
    try:
        import ray
    except ImportError:
        raise BatchError("centrum batch needs Ray: pip install 'centrum[batch]'") from None
    return ray


def init_ray(address: str | None, object_store_mb: int) -> Any:
    """A local cluster on 127.0.0.1 (no dashboard, bounded object store), or the cluster at ``address``."""
    ray = _import_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": "warning"}
    try:
        if address:
            ray.init(address=address, **kwargs)
        else:
            # address="local": a new cluster even when `ray start` left one running here (join it with --address)
            ray.init(address="local", _node_ip_address=LOCAL_IP, include_dashboard=False,
                     object_store_memory=object_store_mb * 1024 * 1024, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise BatchError(f"cannot {'join the Ray cluster at ' + address if address else 'start Ray'}: {e}") from None
    return ray


def _tasks(opts: BatchOptions, done: set[str], summary: BatchSummary,
           on_index: Any, on_total: Any) -> Iterator[Task]:
    seen = 0
    for path, index, tasks in iter_inputs(opts.inputs):
        if opts.limit is not None:
            tasks = tasks[: max(0, opts.limit - seen)]
        seen += len(tasks)
        todo = [t for t in tasks if t.record_id not in done]
        summary.skipped += len(tasks) - len(todo)
        on_total(len(todo))
        if index is not None and todo:
            on_index(str(path), index)
        yield from todo
        if opts.limit is not None and seen >= opts.limit:
            return


class _Slot:
    """One actor and what it holds: its in-flight calls and the WARC indexes it was given."""

    def __init__(self, cls: Any, options: WorkerOptions) -> None:
        self.actor = cls.remote(options)
        self.inflight = 0
        self.indexes: set[str] = set()
        self.alive = True


def run_batch(opts: BatchOptions) -> BatchSummary:
    existing = shard_files(opts.out) if opts.out.is_dir() else []
    if existing and not opts.resume:
        raise BatchError(f"{opts.out} already holds {len(existing)} shard(s): pass --resume to add only the missing "
                         "records, or choose another --out")
    done = done_ids(opts.out) if opts.resume and existing else set()
    writer = ShardWriter(opts.out, opts.fmt, opts.rows_per_shard)
    ray = init_ray(opts.address, opts.object_store_mb)
    from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError, WorkerCrashedError

    lost = (RayActorError, WorkerCrashedError)
    summary = BatchSummary()
    cpus = int(ray.cluster_resources().get("CPU", 1))
    n = max(1, opts.actors or cpus)
    # One CPU per actor (a browser and the algorithms keep a core busy); SPREAD places them over every node.
    cls = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(BatchWorker)
    slots = [_Slot(cls, opts.worker) for _ in range(n)]
    summary.actors = n
    index_refs: dict[str, Any] = {}  # WARC path -> its index in the object store (put once, shared by actors)

    from tqdm import tqdm

    bar = tqdm(total=0, unit="page", disable=not opts.progress, dynamic_ncols=True, desc="centrum batch")

    def on_index(path: str, index: WarcIndex) -> None:
        index_refs[path] = ray.put(index)

    def on_total(count: int) -> None:
        bar.total = (bar.total or 0) + count
        bar.refresh()

    source = _tasks(opts, done, summary, on_index, on_total)
    retry: deque[tuple[Task, int]] = deque()
    inflight: dict[Any, tuple[_Slot, list[tuple[Task, int]], float]] = {}
    # Source-only records take milliseconds: several per call keep Ray's per-call cost off the figure.
    chunk = max(1, opts.chunk or (1 if opts.worker.render else 16))
    exhausted = False
    # A worker whose call runs far past the page budget (both attempts plus parsing and the algorithm) is stuck
    # outside the browser: it is killed and its record re-run elsewhere.
    # (A queued call waits for the one before it, hence the window factor.)
    stuck_s = opts.window_per_actor * chunk * (2 * opts.worker.page_timeout_s + 60.0) + 60.0
    t_start = time.monotonic()

    def submit(slot: _Slot, items: list[tuple[Task, int]]) -> None:
        for path in {t.path for t, _ in items if t.kind == "warc"} - slot.indexes:
            slot.actor.set_index.remote(path, index_refs[path])  # ordered before the call below
            slot.indexes.add(path)
        ref = slot.actor.process_many.remote(items)
        slot.inflight += 1
        inflight[ref] = (slot, items, time.monotonic())

    def take() -> tuple[Task, int] | None:
        nonlocal exhausted
        while True:
            if retry:
                item = retry.popleft()
            elif not exhausted:
                try:
                    item = next(source), 1
                except StopIteration:
                    exhausted = True
                    return None
            else:
                return None
            if item[0].record_id not in done:
                return item

    def replace(slot: _Slot) -> None:
        if slot.alive:
            slot.alive = False
            summary.worker_deaths += 1
            slots[slots.index(slot)] = _Slot(cls, opts.worker)

    def write(row: dict[str, Any]) -> None:
        if row["record_id"] in done:
            return  # exactly once, whatever happened to the worker that made it
        done.add(row["record_id"])
        writer.add(row)
        summary.records += 1
        summary.last_row_s = time.monotonic() - t_start
        if summary.first_row_s is None:
            summary.first_row_s = summary.last_row_s
        if row["status"] == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
        if row.get("worker_node"):
            summary.nodes.add(str(row["worker_node"]))
        bar.update(1)
        bar.set_postfix(failed=summary.failed, refresh=False)

    try:
        while True:
            for slot in list(slots):
                while slot.alive and slot.inflight < opts.window_per_actor:
                    items = []
                    while len(items) < chunk and (item := take()) is not None:
                        items.append(item)
                    if not items:
                        break
                    submit(slot, items)
            if not inflight:
                break
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
            if ready:  # and whatever else has finished meanwhile
                ready, _ = ray.wait(list(inflight), num_returns=len(inflight), timeout=0)
            for ref in ready:
                slot, items, _t = inflight.pop(ref)
                slot.inflight -= 1
                try:
                    for row in ray.get(ref):
                        write(row)
                except lost as e:
                    replace(slot)
                    for task, attempts in items:
                        if attempts > opts.max_worker_deaths:
                            write(empty_row(task, opts.worker.algorithm, E_WORKER,
                                            f"the worker died {attempts} times on this record: {str(e)[:300]}"))
                        else:
                            retry.append((task, attempts + 1))
                except (RayTaskError, GetTimeoutError) as e:
                    for task, _attempts in items:
                        write(empty_row(task, opts.worker.algorithm, E_WORKER, f"worker error: {str(e)[:1000]}"))
            now = time.monotonic()
            for slot, _items, started in list(inflight.values()):
                if slot.alive and now - started > stuck_s:
                    ray.kill(slot.actor, no_restart=True)  # its calls now fail as lost and are re-run
    finally:
        writer.flush()  # rows finished before an interrupt are whole: keep them for --resume
        summary.seconds = time.monotonic() - t_start
        bar.close()
        # Close the browsers; then the actors go with the job.
        closing = [s.actor.close.remote() for s in slots if s.alive]
        try:
            ray.get(closing, timeout=30)
        except Exception:  # noqa: BLE001 - a dead actor has no browser left to close
            pass
        for s in slots:
            try:
                ray.kill(s.actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        ray.shutdown()
    summary.shards = [str(p) for p in writer.written]
    return summary
