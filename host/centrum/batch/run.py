"""`centrum batch`'s entry: the engine a run asks for (:func:`centrum.batch.engine.engine_of`) runs every input
record not yet in the output folder. The local engine and the Ray engine each import the shared run types from
``engine``; this module, above both, is the only one that knows them both."""

from __future__ import annotations

from .engine import BatchOptions, BatchSummary, open_run, run_ray
from .local import run_local


def run_batch(opts: BatchOptions) -> BatchSummary:
    """Run every input record not yet in ``opts.out`` on the chosen engine, streaming its rows into shards there."""
    engine, done, writer = open_run(opts)
    summary = run_local(opts, done, writer) if engine == "local" else run_ray(opts, done, writer)
    summary.shards = [str(p) for p in writer.written]
    return summary
