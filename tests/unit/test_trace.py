"""centrum.core.trace: stages timed into Result.timing_ms, their trace entries, caps, rounding and typed overlays."""

import json

from centrum.core.result import OVERLAY_KINDS, json_default
from centrum.core.trace import Trace


def test_stages_are_timed_and_shown_and_the_result_carries_both() -> None:
    tr = Trace("x", cap=3)
    out = tr.stage("double", lambda v: v * 2, 21, show=lambda v: {"value": v})
    assert out == 42 and tr.debug["double"] == {"value": 42}
    tr.stage("quiet", sum, [1, 2])
    r = tr.result([5], message="m")
    assert set(r.timing_ms) == {"stage.double", "stage.quiet"} and all(v >= 0 for v in r.timing_ms.values())
    assert r.algorithm == "x" and r.nodes == [5] and r.debug == {"double": {"value": 42}} and r.message == "m"


def test_caps_and_rounding() -> None:
    tr = Trace("x", cap=3, digits=2)
    assert tr.ids(range(10)) == [0, 1, 2] and tr.capped(list(range(5))) == ([0, 1, 2], True)
    assert tr.r(1.23456) == 1.23 and tr.rs([0.111, 2.0]) == [0.11, 2.0]
    for k in range(5):
        tr.overlay("candidate", f"c{k}", 0.5, nodes=range(10))
    tr.overlay("answer", "kept although candidates were cut", nodes=[1])
    assert len(tr.overlays) == 4 and tr.overlays[0].nodes == [0, 1, 2] and tr.overlays[-1].kind == "answer"


def test_overlays_serialize_with_nodes_or_box_only() -> None:
    tr = Trace("x")
    tr.overlay("answer", "chosen", nodes=[4])
    tr.overlay("point", "C1", box=[1.04, 2.0, 12, 12])
    data = json.loads(json.dumps(tr.result([4]).to_json(), default=json_default))
    assert data["overlays"] == [{"kind": "answer", "label": "chosen", "nodes": [4]},
                                {"kind": "point", "label": "C1", "box": [1.0, 2.0, 12.0, 12.0]}]
    assert {o["kind"] for o in data["overlays"]} <= set(OVERLAY_KINDS)
    assert "overlays" not in tr.result([4]).to_json(with_debug=False)


def test_text_for_prefers_the_algorithms_own_text() -> None:
    from centrum.core.builders import E, T, build
    from centrum.core.result import Result

    b = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [
        E("p", (0, 0, 100, 20), [T("Kept")], name="p"), E("p", (0, 20, 100, 20), [T("Other")])])]))
    s = b.snapshot
    assert Result("x", [b.ids["p"]]).text_for(s) == "Kept"
    assert Result("x", [b.ids["p"]], text="own words").text_for(s) == "own words"
    assert Result("x", []).text_for(s) == ""
