"""The engines of ``centrum batch`` and what they share.

:class:`Driver` is the engine-neutral part: the input records in order (duplicates and repeats marked), a row for
every record of interest (the ones needing no extraction written here, never sent to a worker), exactly-once
writing into shards, the progress bar and the summary. Two engines keep workers busy with a bounded window of
records and re-run the records of a worker that died: the Ray engine here (a local cluster bound to 127.0.0.1, or
one joined with ``--address``), and the local engine (:mod:`.local`: a process per worker, no cluster), the default
on one machine.

Ray is imported here only, inside the Ray engine's functions (the ``batch`` extra); ``import centrum``, the local
engine and the extractors never import it.
"""

from __future__ import annotations

import ipaddress
import os
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .inputs import (
    HTTP_ERROR,
    INTEREST,
    OK,
    SKIPPED_DUPLICATE,
    SKIPPED_NOT_HTML,
    SKIPPED_REVISIT,
    Repeats,
    Task,
    WarcCounts,
    WarcIndex,
    as_duplicate,
    iter_inputs,
)
from .reaper import Reaper
from .shards import ShardWriter, done_ids, shard_files
from .worker import E_WORKER, BatchWorker, WorkerOptions, empty_row

__all__ = ["SKIPPED_DUPLICATE", "E_DUPLICATE_ID", "BatchError", "BatchOptions", "BatchSummary", "open_run", "run_ray"]
# The error code of a row whose record repeats an earlier record's WARC-Record-ID (status SKIPPED_DUPLICATE).
E_DUPLICATE_ID = "E_DUPLICATE_ID"
ENGINES = ("local", "ray")

LOCAL_IP = "127.0.0.1"
# Ray's local-only mode (its default on Windows and macOS). Without it, Ray replaces a loopback node address
# (``ray.init(_node_ip_address="127.0.0.1")``, ``ray start --node-ip-address 127.0.0.1``, or the host of a
# ``127.0.0.1:PORT`` address to join) by the address this machine would reach the internet from (eth0's:
# ``services.resolve_ip_for_localhost`` -> ``get_node_ip_address`` -> ``node_ip_address_from_perspective``), and a
# node whose address is not 127.0.0.1 listens on every interface. With it, a node on 127.0.0.1 advertises
# 127.0.0.1 and binds every server (GCS, raylet, object manager, workers, dashboard and runtime-env agents,
# metrics, client server) to 127.0.0.1 only. Ray reads it when imported, and the processes of a cluster inherit it
# from the process that starts them. On Linux it changes nothing else, except that ``ray start --address`` refuses
# to add a node (a second node on 127.0.0.1 must be started without the CLI, as tests/e2e/test_batch.py does).
LOOPBACK_ENV: dict[str, str] = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


class BatchError(RuntimeError):
    """The batch cannot start (Ray missing, output folder in use, unreachable cluster)."""


@dataclass
class BatchOptions:
    inputs: list[Path]
    out: Path
    worker: WorkerOptions
    engine: str | None = None  # "local" | "ray"; default: ray with an address, else local
    fmt: str = "parquet"
    limit: int | None = None  # at most this many input records (in input order), counting ones already done
    resume: bool = False
    actors: int | None = None  # default: one per CPU of the cluster
    address: str | None = None  # None: a local cluster bound to 127.0.0.1; "auto" or HOST:PORT: join one
    object_store_mb: int = 384  # the local cluster's object store (rows are small; records never pass through it)
    rows_per_shard: int = 1000
    seconds_per_shard: float = 60.0  # a shard is also written once its first row is this old (work lost on a kill)
    window_per_actor: int = 2  # calls queued per actor: one running, one ready (the backpressure bound)
    chunk: int | None = None  # records per call; default 1 rendered (a page is ~1 s), 16 --no-render (~ms each)
    max_worker_deaths: int = 2  # a record whose worker died this often is written as failed (E_WORKER)
    progress: bool = True
    # Only rows with status ok in OUT; every other row (skipped, http_error, E_*) in OUT/other/, so the run still
    # accounts for every record and --resume still skips them.
    only_ok: bool = False


OTHER = "other"


@dataclass
class BatchSummary:
    records: int = 0  # rows written by this run
    ok: int = 0
    failed: int = 0  # rows with an error code other than a duplicate id (E_*)
    http_error: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # "not HTML", "revisit", "duplicate record id" -> rows
    errors: dict[str, int] = field(default_factory=dict)  # error code -> rows
    already_done: int = 0  # records already in the output (--resume)
    beyond_limit: int = 0  # records of interest not taken (--limit)
    read: dict[str, int] = field(default_factory=dict)  # records read: WARC records by WARC-Type, files, URLs
    duplicates: int = 0  # rows written with status SKIPPED_DUPLICATE (included in `records` and `skipped`)
    worker_deaths: int = 0
    engine: str = ""
    actors: int = 0
    nodes: set[str] = field(default_factory=set)
    seconds: float = 0.0
    # Since the start: the engine is up (local: every worker ready; Ray: cluster started or joined and a first answer
    # from an actor, its first chunk included, since Ray starts actors asynchronously).
    start_s: float | None = None
    first_row_s: float | None = None  # since the start: the first and last row (steady-state rate between them)
    last_row_s: float | None = None
    shards: list[str] = field(default_factory=list)

    @property
    def of_interest(self) -> int:
        """The records that each get a row: WARC response and revisit records, files, URLs."""
        return sum(n for kind, n in self.read.items() if kind in (*INTEREST, "file", "url"))

    def to_json(self) -> dict[str, Any]:
        """The command's summary line: the rows by status add up to the records of interest read (with the ones
        already done and the ones past --limit); ``read`` has every record read by kind."""
        return {"records": self.records, "ok": self.ok, "http_error": self.http_error,
                "skipped": sum(self.skipped.values()), "skipped_by_reason": dict(sorted(self.skipped.items())),
                "failed": self.failed, "errors": dict(sorted(self.errors.items())),
                "already_done": self.already_done, "beyond_limit": self.beyond_limit,
                "read": dict(sorted(self.read.items())), "of_interest": self.of_interest,
                "duplicates": self.duplicates, "worker_deaths": self.worker_deaths, "engine": self.engine,
                "actors": self.actors, "nodes": len(self.nodes), "seconds": round(self.seconds, 2),
                "start_s": round(self.start_s or 0.0, 2), "pages_per_s": round(self.pages_per_s, 3),
                "shards": len(self.shards)}

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
    # Also when joining: it keeps a 127.0.0.1:PORT (or `auto`) address as given; a driver's own address is its
    # node's whatever the mode, so a cluster on other hosts is joined as before.
    os.environ.update(LOOPBACK_ENV)
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
            # address="local": a new cluster even when `ray start` left one running here (join it with --address).
            # No prestarted workers: Ray would start one idle Python (~50 MB) per CPU, where a run with fewer
            # --actors than CPUs uses only as many; an actor's worker starts when the actor does.
            ray.init(address="local", _node_ip_address=LOCAL_IP, include_dashboard=False,
                     object_store_memory=object_store_mb * 1024 * 1024,
                     _system_config={"prestart_worker_first_driver": False, "enable_worker_prestart": False},
                     **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise BatchError(f"cannot {'join the Ray cluster at ' + address if address else 'start Ray'}: {e}") from None
    if not address:
        _check_loopback(ray)
    return ray


def _check_loopback(ray: Any) -> None:
    """Refuse a local cluster that advertises another address than loopback: Ray was imported (by the host
    program) before :data:`LOOPBACK_ENV` was set, and its servers listen on every interface."""
    host = ray.get_runtime_context().gcs_address.rpartition(":")[0].strip("[]")
    if not ipaddress.ip_address(host).is_loopback:
        ray.shutdown()
        setting = " ".join(f"{k}={v}" for k, v in LOOPBACK_ENV.items())
        raise BatchError(f"the local Ray cluster advertises {host}, not {LOCAL_IP}, and listens beyond it: set "
                         f"{setting} in the environment (Ray was imported before centrum could set it)")


def _tasks(opts: BatchOptions, done: set[str], summary: BatchSummary,
           on_index: Any, on_total: Any) -> Iterator[Task]:
    seen = 0
    ids: set[str] = set()  # every record id of the inputs so far, in input order (the same on --resume)
    repeats = Repeats()
    counts = WarcCounts(summary.read)
    for path, index, tasks in iter_inputs(opts.inputs, counts):
        for t in tasks:
            if t.kind != "warc":
                counts.add(t.kind)
        if opts.limit is not None:
            summary.beyond_limit += max(0, len(tasks) - max(0, opts.limit - seen))
            tasks = tasks[: max(0, opts.limit - seen)]
        seen += len(tasks)
        tasks = [repeats.mark(t) for t in _mark_duplicates(tasks, ids)]
        todo = [t for t in tasks if t.record_id not in done]
        summary.already_done += len(tasks) - len(todo)
        on_total(len(todo))
        if index is not None and any(not t.status for t in todo):
            on_index(str(path), index)
        yield from todo
        if opts.limit is not None and seen >= opts.limit:
            return  # the inputs after it are not read (nor counted)


def _mark_duplicates(tasks: list[Task], ids: set[str]) -> list[Task]:
    """``tasks`` with each WARC record whose id is already in ``ids`` turned into its duplicate row's task (so every
    record is accounted for); a file or URL repeated across inputs is the same page and is left out."""
    marked = []
    for task in tasks:
        if task.record_id not in ids:
            ids.add(task.record_id)
            marked.append(task)
        elif task.kind == "warc":
            marked.append(as_duplicate(task))
    return marked


def decided_row(task: Task, algorithm: str) -> dict[str, Any]:
    """The row of a record whose status its headers decide (:attr:`Task.status`): not extracted, accounted for."""
    if task.status == SKIPPED_DUPLICATE:
        row = empty_row(task, algorithm, E_DUPLICATE_ID,
                        f"{SKIPPED_DUPLICATE}: this record ({task.path} at offset {task.offset}) has the "
                        f"WARC-Record-ID {task.repeats_id} of an earlier input record, whose row has that id; "
                        f"this one was not processed", status=SKIPPED_DUPLICATE)
    else:
        why = {SKIPPED_NOT_HTML: f"not an HTML response (Content-Type {task.content_type or 'missing'!r})",
               SKIPPED_REVISIT: "a revisit record (no payload of its own; duplicate_of names the record it refers to)",
               HTTP_ERROR: f"HTTP status {task.http_status}: the response is not the page (no text extracted)"}
        row = empty_row(task, algorithm, "", why.get(task.status, ""), status=task.status)
    return {**row, "worker_pid": None, "worker_node": ""}  # no worker made it (the driver did)


class Driver:
    """What every engine shares: the records to run (lost workers' first), the rows of records no worker needs,
    exactly-once writing, the progress bar and the summary. An engine calls :meth:`take` for work, :meth:`write`
    for each row, :meth:`lost` for the records of a worker that died, and :meth:`finish` at the end."""

    def __init__(self, opts: BatchOptions, done: set[str], writer: ShardWriter, engine: str,
                 t_start: float | None = None) -> None:
        from tqdm import tqdm

        self.opts, self.done, self.writer = opts, done, writer
        self.other = (ShardWriter(opts.out / OTHER, opts.fmt, opts.rows_per_shard, opts.seconds_per_shard)
                      if opts.only_ok else writer)
        self.summary = BatchSummary(engine=engine)
        self.t_start = time.monotonic() if t_start is None else t_start
        self.bar = tqdm(total=0, unit="page", disable=not opts.progress, dynamic_ncols=True, desc="centrum batch")
        self.indexes: dict[str, WarcIndex] = {}  # WARC path -> its index, for engines that render
        self.source = _tasks(opts, done, self.summary, self.on_index, self._on_total)
        self.retry: deque[tuple[Task, int]] = deque()
        self.exhausted = False
        # Source-only records take milliseconds: several per call keep the per-call cost off the figure.
        self.chunk = max(1, opts.chunk or (1 if opts.worker.render else 16))
        # A worker whose call runs far past the page budget (both attempts plus parsing and the algorithm) is stuck
        # outside the browser: it is killed and its record re-run elsewhere.
        # (A queued call waits for the one before it, hence the window factor.)
        self.stuck_s = opts.window_per_actor * self.chunk * (2 * opts.worker.page_timeout_s + 60.0) + 60.0

    def on_index(self, path: str, index: WarcIndex) -> None:
        self.indexes[path] = index

    def _on_total(self, count: int) -> None:
        self.bar.total = (self.bar.total or 0) + count
        self.bar.refresh()

    def ready(self) -> None:
        """The engine's workers are up (the start-up time in the summary)."""
        if self.summary.start_s is None:
            self.summary.start_s = time.monotonic() - self.t_start

    def take_chunk(self) -> list[tuple[Task, int]]:
        items: list[tuple[Task, int]] = []
        while len(items) < self.chunk and (item := self.take()) is not None:
            items.append(item)
        return items

    def take(self) -> tuple[Task, int] | None:
        """The next record to run with its attempt number: a lost worker's records first, then new ones."""
        while True:
            if self.retry:
                item = self.retry.popleft()
            elif not self.exhausted:
                try:
                    item = next(self.source), 1
                except StopIteration:
                    self.exhausted = True
                    return None
            else:
                return None
            if item[0].record_id in self.done:
                continue
            if item[0].status:  # accounted for here, never sent to a worker
                self.write(decided_row(item[0], self.opts.worker.algorithm))
                continue
            return item

    def lost(self, items: list[tuple[Task, int]], reason: str) -> None:
        """The records of a worker that died: re-run, unless they have killed too many workers."""
        for task, attempts in items:
            if attempts > self.opts.max_worker_deaths:
                self.write(empty_row(task, self.opts.worker.algorithm, E_WORKER,
                                     f"the worker died {attempts} times on this record: {reason[:300]}"))
            else:
                self.retry.append((task, attempts + 1))

    def write(self, row: dict[str, Any]) -> None:
        summary = self.summary
        if row["record_id"] in self.done:
            return  # exactly once, whatever happened to the worker that made it
        self.done.add(row["record_id"])
        (self.writer if row["status"] == OK else self.other).add(row)
        summary.records += 1
        summary.last_row_s = time.monotonic() - self.t_start
        if summary.first_row_s is None:
            summary.first_row_s = summary.last_row_s
        status = row["status"]
        if status == OK:
            summary.ok += 1
        elif status == HTTP_ERROR:
            summary.http_error += 1
        elif status.startswith("skipped: "):
            reason = status[len("skipped: "):]
            summary.skipped[reason] = summary.skipped.get(reason, 0) + 1
            summary.duplicates += status == SKIPPED_DUPLICATE
        else:
            summary.failed += 1
            code = row.get("error_code") or "E_UNKNOWN"
            summary.errors[code] = summary.errors.get(code, 0) + 1
        if row.get("worker_node"):
            summary.nodes.add(str(row["worker_node"]))
        self.bar.update(1)
        self.bar.set_postfix(failed=summary.failed, refresh=False)

    def finish(self) -> None:
        """Keep the rows written so far (whole, for --resume)."""
        self.writer.flush()
        self.other.flush()
        self.summary.seconds = time.monotonic() - self.t_start
        self.bar.close()


class _Slot:
    """One actor and what it holds: its in-flight calls and the WARC indexes it was given."""

    def __init__(self, cls: Any, options: WorkerOptions) -> None:
        self.actor = cls.remote(options)
        self.inflight = 0
        self.indexes: set[str] = set()
        self.alive = True


class _RayRun(Driver):
    """One batch run on Ray: the actor pool and the calls in flight. Its methods are the steps of :func:`run_ray`."""

    def __init__(self, opts: BatchOptions, ray: Any, done: set[str], writer: ShardWriter, t_start: float) -> None:
        from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError, WorkerCrashedError

        super().__init__(opts, done, writer, "ray", t_start)  # the run's time includes starting or joining Ray
        self.ray = ray
        self.lost_errors = (RayActorError, WorkerCrashedError)
        self.errors = (RayTaskError, GetTimeoutError)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        n = max(1, opts.actors or cpus)
        # One CPU per actor (a browser and the algorithms keep a core busy); SPREAD places them over every node.
        self.cls = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(BatchWorker)
        self.slots = [_Slot(self.cls, opts.worker) for _ in range(n)]
        self.summary.actors = n
        self.index_refs: dict[str, Any] = {}  # WARC path -> its index in the object store (put once, shared)
        self.inflight: dict[Any, tuple[_Slot, list[tuple[Task, int]], float]] = {}

    def on_index(self, path: str, index: WarcIndex) -> None:
        self.index_refs[path] = self.ray.put(index)

    def loop(self) -> None:
        """Keep every actor's window full, collect finished calls, kill stuck workers; until nothing is left."""
        while True:
            self._fill()
            if not self.inflight:
                break
            ready, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=1.0)
            if ready:  # and whatever else has finished meanwhile
                ready, _ = self.ray.wait(list(self.inflight), num_returns=len(self.inflight), timeout=0)
            for ref in ready:
                self._collect(ref)
            self._kill_stuck()
            self.writer.tick()
            self.other.tick()

    def _fill(self) -> None:
        for slot in list(self.slots):
            while slot.alive and slot.inflight < self.opts.window_per_actor:
                items = self.take_chunk()
                if not items:
                    break
                self._submit(slot, items)

    def _submit(self, slot: _Slot, items: list[tuple[Task, int]]) -> None:
        for path in {t.path for t, _ in items if t.kind == "warc"} - slot.indexes:
            slot.actor.set_index.remote(path, self.index_refs[path])  # ordered before the call below
            slot.indexes.add(path)
        ref = slot.actor.process_many.remote(items)
        slot.inflight += 1
        self.inflight[ref] = (slot, items, time.monotonic())

    def _collect(self, ref: Any) -> None:
        """Write a finished call's rows; a lost worker's records are re-run until they have killed too many."""
        slot, items, _t = self.inflight.pop(ref)
        slot.inflight -= 1
        self.ready()  # Ray starts actors asynchronously: start-up ends with the first answer from one
        try:
            for row in self.ray.get(ref):
                self.write(row)
        except self.lost_errors as e:
            self._replace(slot)
            self.lost(items, str(e))
        except self.errors as e:
            for task, _attempts in items:
                self.write(empty_row(task, self.opts.worker.algorithm, E_WORKER, f"worker error: {str(e)[:1000]}"))

    def _replace(self, slot: _Slot) -> None:
        if slot.alive:
            slot.alive = False
            self.summary.worker_deaths += 1
            self.slots[self.slots.index(slot)] = _Slot(self.cls, self.opts.worker)

    def _kill_stuck(self) -> None:
        now = time.monotonic()
        for slot, _items, started in list(self.inflight.values()):
            if slot.alive and now - started > self.stuck_s:
                self.ray.kill(slot.actor, no_restart=True)  # its calls now fail as lost and are re-run

    def close(self) -> None:
        """Keep the rows written so far (whole, for --resume), close the browsers, stop the actors and Ray."""
        self.finish()
        # Close the browsers; then the actors go with the job.
        closing = [s.actor.close.remote() for s in self.slots if s.alive]
        try:
            self.ray.get(closing, timeout=30)
        except Exception:  # noqa: BLE001 - a dead actor has no browser left to close
            pass
        for s in self.slots:
            try:
                self.ray.kill(s.actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.ray.shutdown()


def _done_before(opts: BatchOptions) -> set[str]:
    """The record ids already in ``opts.out`` (with --resume); a filled folder without it is refused."""
    folders = [opts.out, opts.out / OTHER]
    existing = [p for d in folders if d.is_dir() for p in shard_files(d)]
    if existing and not opts.resume:
        raise BatchError(f"{opts.out} already holds {len(existing)} shard(s): pass --resume to add only the missing "
                         "records, or choose another --out")
    return {i for d in folders if d.is_dir() for i in done_ids(d)} if opts.resume and existing else set()


def engine_of(opts: BatchOptions) -> str:
    """The engine a run uses: the one asked for; else Ray to join a cluster (--address), the local one otherwise."""
    if opts.engine is not None:
        if opts.engine not in ENGINES:
            raise BatchError(f"unknown engine {opts.engine!r} (known: {', '.join(ENGINES)})")
        if opts.engine == "local" and opts.address:
            raise BatchError("--address joins a Ray cluster: it needs --engine ray (the default with --address)")
        return opts.engine
    return "ray" if opts.address else "local"


def open_run(opts: BatchOptions) -> tuple[str, set[str], ShardWriter]:
    """(engine, record ids already in ``opts.out``, the shard writer) of a run about to start."""
    return engine_of(opts), _done_before(opts), ShardWriter(opts.out, opts.fmt, opts.rows_per_shard,
                                                            opts.seconds_per_shard)


def run_ray(opts: BatchOptions, done: set[str], writer: ShardWriter) -> BatchSummary:
    """Run every input record not in ``done`` on Ray, streaming its rows into ``writer``'s shards."""
    # A local cluster is this run's own: its processes end with the run, also when the driver is killed.
    reaper = Reaper() if not opts.address else None
    if reaper is not None:
        reaper.start()
    try:
        t_start = time.monotonic()
        run = _RayRun(opts, init_ray(opts.address, opts.object_store_mb), done, writer, t_start)
        try:
            run.loop()
        finally:
            run.close()  # also on an interrupt: the rows finished before it are kept
    finally:
        if reaper is not None:
            reaper.stop()
    return run.summary
