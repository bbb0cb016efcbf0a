"""Packed snapshot columns (PROTOCOL.md "Packed columns"): base64 zigzag varints decode to exactly the numbers of the
JSON number-list form, both forms pass the schema, and a broken packed column is a SnapshotError naming it.
(Real collector output in both encodings is compared in tests/e2e/test_transport.py.)"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from centrum.core.builders import T_, E, T, build
from centrum.core.snapshot import MAX_ELEMENTS, SnapshotError, pack_column, pack_snapshot, parse_snapshot

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "host" / "centrum" / "snapshot.schema.json")
                    .read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def sample() -> dict[str, Any]:
    page = E("html", (0, 0, 1200, 123456.7), [
        E("head", children=[E("title", children=[T("t")])]),
        E("body", (0, 0, 1200, 123456.7), [
            E("nav", (-10.5, -3.2, 1200, 60), [E("a", (0, 0, 80.1, 19.9), [T("Home")])], position="fixed"),
            E("article", (100, 100, 800, 900), [
                E("p", (100, 100, 800, 40), [T_("two lines", (100, 100, 800, 20), (100, 120, 300.3, 20))]),
                E("img", (100, 200, 400, 300), attrs={"src": "a.png", "alt": "x"}),
            ], cls="post", id="main", attrs={"data-article": "1"}),
        ]),
    ])
    raw = copy.deepcopy(build(page).raw)
    raw["elements"]["opacity"][3] = 0.333
    raw["elements"]["font_size"][4] = 13.3
    return raw


COLUMNS = ("parent", "tag_code", "box", "display", "position", "visibility", "opacity", "font_size", "flags",
           "text_owner", "text_seq", "text_rect_offsets", "text_rects")


def test_packed_and_number_lists_parse_to_equal_arrays() -> None:
    raw = sample()
    packed = pack_snapshot(raw)
    assert isinstance(packed["elements"]["box"], dict) and isinstance(packed["text"]["rects"], dict)
    a, b = parse_snapshot(raw), parse_snapshot(json.loads(json.dumps(packed)))
    for name in COLUMNS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.attrs == b.attrs and a.texts == b.texts
    assert b.box[4].tolist() == [-10.5, -3.2, 1200.0, 60.0] and b.opacity[3] == 0.333  # the very doubles of the JSON


def test_varint_bytes_follow_zigzag_leb128() -> None:
    # zigzag: 0->0, -1->1, 1->2, 63->126, -64->127, 64->128 (two bytes), 300->600 (0xd8 0x04)
    column = pack_column([0, -1, 1, 63, -64, 64, 300])
    assert base64.b64decode(column["varint"]) == bytes([0, 1, 2, 126, 127, 0x80, 0x01, 0xD8, 0x04])
    # delta: differences between neighbours, then zigzag
    assert base64.b64decode(pack_column([5, 6, 6, 2], delta=True)["varint"]) == bytes([10, 2, 0, 7])


def test_both_forms_pass_the_schema() -> None:
    raw = sample()
    VALIDATOR.validate(raw)
    VALIDATOR.validate(pack_snapshot(raw))


def _broken(edit: Any) -> dict[str, Any]:
    raw = pack_snapshot(sample())
    edit(raw)
    return raw


BROKEN = {
    "not base64": (lambda r: r["elements"]["tag"].update(varint="@@@"), "elements.tag.varint"),
    "cut off": (lambda r: r["elements"]["flags"].update(varint=base64.b64encode(b"\x01\x81").decode()),
                "elements.flags.varint"),
    "count mismatch": (lambda r: r["elements"]["display"].update(count=3), "elements.display"),
    "value too long": (lambda r: r["text"]["seq"].update(varint=base64.b64encode(b"\xff" * 6 + b"\x01").decode(),
                                                          count=1), "text.seq[0]"),
    "unknown field": (lambda r: r["elements"]["box"].update(zlib=True), "elements.box"),
    "bad scale": (lambda r: r["elements"]["box"].update(scale=7), "elements.box.scale"),
    "scaled integers": (lambda r: r["elements"]["parent"].update(scale=10), "elements.parent.scale"),
    "count not an integer": (lambda r: r["text"]["owner"].update(count="2"), "text.owner.count"),
    "over the element limit": (lambda r: r["elements"]["parent"].update(count=MAX_ELEMENTS + 1), "elements.parent"),
    "delta parent goes forward": (lambda r: r["elements"].update(parent=pack_column([-1, 0, 5, 1, 1, 1, 1, 1, 1, 1],
                                                                                     delta=True)),
                                  "elements.parent[2]"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_packed_columns_name_their_field(name: str) -> None:
    edit, field = BROKEN[name]
    raw = _broken(edit)
    with pytest.raises(SnapshotError) as e:
        parse_snapshot(raw)
    assert e.value.field == field, str(e.value)


def test_schema_refuses_a_packed_column_with_unknown_fields() -> None:
    raw = pack_snapshot(sample())
    raw["elements"]["box"]["zlib"] = True
    assert not VALIDATOR.is_valid(raw)
