"""What the press leaves out keeps the answer the same: after a ping the host warms the default algorithm in a
background thread (the ping's answer is written first, and only the serving thread writes frames), and a base
algorithm run by another algorithm (the ensemble's proposers), or run without debug, skips what only its debug
trace and its answer text need, with the same nodes and candidates."""

from __future__ import annotations

import contextvars
import io
import json

import pytest
from helpers import goldens

from centrum import algorithms
from centrum.algorithms import ensemble
from centrum.core.trace import wanting
from centrum.native import nativehost
from centrum.native.framing import encode_message, read_frame


def serve(warm: bool) -> dict:
    request = encode_message({"v": 1, "id": 1, "type": "ping"})
    out = io.BytesIO()
    assert nativehost.Host(io.BytesIO(request), out, warm=warm).serve() == 0
    out.seek(0)
    body = read_frame(out)
    assert body is not None and read_frame(out) is None  # one answer, nothing else on the frame stream
    chunk = json.loads(body)
    assert chunk["chunks"] == 1
    answer: dict = json.loads(chunk["data"])
    return answer


def test_ping_then_the_default_algorithm_is_warmed_in_the_background() -> None:
    nativehost._WARM.clear()
    ensemble._shipped.cache_clear()
    assert serve(warm=False)["status"] == "ok" and not nativehost._WARM  # the loop alone starts nothing
    answer = serve(warm=True)
    assert answer["status"] == "ok" and answer["result"]["default"] == algorithms.DEFAULT_ALGORITHM
    thread = nativehost._WARM[0]
    assert thread.daemon  # never keeps the host alive after the browser closes stdin
    thread.join(120)
    assert not thread.is_alive()
    assert ensemble._shipped.cache_info().currsize == 2  # candidate scorer and block filter loaded
    assert nativehost.warm_up() is thread  # once per process


def answers(result: algorithms.Result) -> tuple:
    return result.nodes, [(c.nodes, c.score, c.label, c.features) for c in result.candidates], result.message


@pytest.mark.parametrize("name", ["zoning", "r4", "dana", "danag", "addanag", "gce", "semantic"])
@pytest.mark.parametrize("slug", goldens.slugs())
def test_lean_runs_answer_the_same(name: str, slug: str) -> None:
    snap = goldens.load_snapshot(slug)
    full = algorithms.run(name, snap)
    with wanting(debug=False, text=False):
        lean = algorithms.run(name, snap)
    assert answers(lean) == answers(full)
    if name in ("zoning", "r4", "dana", "danag", "addanag") and full.nodes:
        assert full.text and lean.text is None
    if name == "zoning" and full.nodes:
        assert full.debug["zones"] and "zones" not in lean.debug


def test_a_run_inside_another_is_lean() -> None:
    snap = goldens.load_snapshot(goldens.slugs()[0])

    def nested() -> algorithms.Result:
        algorithms._DEPTH.set(1)  # as inside the ensemble's algorithms.run
        return algorithms.run("zoning", snap)

    inner = contextvars.copy_context().run(nested)
    top = algorithms.run("zoning", snap)
    assert answers(inner) == answers(top) and top.nodes
    assert inner.text is None and inner.debug == {} and top.text
