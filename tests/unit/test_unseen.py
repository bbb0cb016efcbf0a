"""The snapshot's optional ``unseen`` section (collector 1.4.0, PROTOCOL.md "Unseen elements"): parsed and checked
like every column, read by the outputs only (text, Markdown, HTML leave that text out), never by an algorithm. The
rule that fills it runs in a real browser: tests/e2e/test_outputs_untrusted.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from centrum import algorithms
from centrum.core.builders import E, T, build
from centrum.core.result import Result
from centrum.core.snapshot import SnapshotError, pack_snapshot, parse_snapshot
from centrum.output.outputs import Outputs

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "host" / "centrum" / "snapshot.schema.json")
                    .read_text(encoding="utf-8"))
SOURCE = ('<html data-cx="0"><body data-cx="1"><article data-cx="2"><p data-cx="3">Seen first paragraph.</p>'
          '<div data-cx="4"><p data-cx="5">Clipped away.</p></div><p data-cx="6">Letters <span data-cx="7">'
          'invisible</span> around.</p><p data-cx="8">Seen last paragraph.</p></article></body></html>')


def page_raw(unseen: dict[str, Any] | None) -> dict[str, Any]:
    page = E("html", (0, 0, 1000, 1000), [E("body", (0, 0, 1000, 1000), [
        E("article", (0, 0, 800, 600), [
            E("p", (0, 0, 800, 20), [T("Seen first paragraph.")]),
            E("div", (0, 40, 800, 20), [E("p", (0, 40, 800, 20), [T("Clipped away.")])]),
            E("p", (0, 80, 800, 20), [T("Letters"), E("span", (60, 80, 60, 20), [T("invisible")]), T("around.")]),
            E("p", (0, 120, 800, 20), [T("Seen last paragraph.")]),
        ]),
    ])])
    raw = copy.deepcopy(build(page, source=SOURCE).raw)
    if unseen is not None:
        raw["unseen"] = unseen
    return raw


def test_parsed_in_both_forms_and_valid_by_the_schema() -> None:
    raw = page_raw({"subtree": [4], "text": [7]})
    packed = pack_snapshot(raw)
    assert isinstance(packed["unseen"]["subtree"], dict)
    for form in (raw, packed):
        jsonschema.validate(form, SCHEMA)
        snap = parse_snapshot(form)
        assert snap.unseen_subtree is not None and snap.unseen_text is not None
        assert snap.unseen_subtree.tolist() == [4] and snap.unseen_text.tolist() == [7]
    old = parse_snapshot(page_raw(None))  # a collector before 1.4.0
    assert old.unseen_subtree is None and old.unseen_text is None


@pytest.mark.parametrize(("unseen", "field"), [
    ({"subtree": [99], "text": []}, "unseen.subtree[0]"),
    ({"subtree": [], "text": [-1]}, "unseen.text[0]"),
    ({"subtree": []}, "unseen.text"),
    ({"subtree": "4", "text": []}, "unseen.subtree"),
    ([4], "unseen"),
])
def test_broken_sections_name_their_field(unseen: Any, field: str) -> None:
    with pytest.raises(SnapshotError) as e:
        parse_snapshot(page_raw(unseen))
    assert e.value.field == field


def test_outputs_leave_unseen_text_out_and_answers_do_not_change() -> None:
    raw = page_raw({"subtree": [4], "text": [7]})
    snap = parse_snapshot(raw)
    out = Outputs(snap, Result("test", [2]))
    for text in (out.text, out.markdown(), out.html()):
        assert "Seen first paragraph." in text and "Seen last paragraph." in text, text
        assert "Letters" in text and "around." in text
        assert "Clipped away" not in text and "invisible" not in text, text
    # Without the section the same outputs hold everything (what an older collector's snapshot gives).
    plain = Outputs(parse_snapshot(page_raw(None)), Result("test", [2]))
    assert "Clipped away" in plain.text and "invisible" in plain.markdown()
    # No algorithm reads the section: the same answer with or without it.
    for name in ("gce", "semantic", "r4", algorithms.DEFAULT_ALGORITHM):
        with_section = algorithms.run(name, snap)
        without = algorithms.run(name, parse_snapshot(page_raw(None)))
        assert (with_section.nodes, with_section.text) == (without.nodes, without.text), name


def test_an_algorithms_own_text_loses_the_unseen_text_only() -> None:
    # Zoning and the ensemble's block filter state their own text, narrower than their elements' subtrees: the
    # unseen text nodes are cut out of it, and nothing else changes (no text of the subtrees comes back).
    snap = parse_snapshot(page_raw({"subtree": [4], "text": [7]}))
    stated = "Letters invisible around.\nSeen last paragraph."
    assert Outputs(snap, Result("test", [2], text=stated)).text == "Letters around.\nSeen last paragraph."
    assert Outputs(parse_snapshot(page_raw(None)), Result("test", [2], text=stated)).text == stated
