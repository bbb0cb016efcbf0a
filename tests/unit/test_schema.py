"""host/centrum/snapshot.schema.json agrees with the parser on hand-built snapshots (real collector output is
validated in tests/e2e/test_collector.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from centrum.core.builders import T_, E, T, build
from centrum.core.snapshot import SnapshotError, parse_snapshot

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "host" / "centrum" / "snapshot.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def sample() -> dict[str, Any]:
    page = E("html", (0, 0, 1200, 2000), [
        E("head", children=[E("title", children=[T("t")])]),
        E("body", (0, 0, 1200, 2000), [
            E("nav", (0, 0, 1200, 60), [E("a", (0, 0, 80, 20), [T("Home")])], position="fixed"),
            E("article", (100, 100, 800, 900), [
                E("p", (100, 100, 800, 40), [T_("two lines", (100, 100, 800, 20), (100, 120, 300, 20))]),
                E("img", (100, 200, 400, 300), attrs={"src": "a.png", "alt": "x"}),
            ], cls="post", id="main", attrs={"data-article": "1", "aria-label": "story"}),
        ]),
    ])
    return copy.deepcopy(build(page, source="<html data-cx=\"0\"></html>").raw)


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"].endswith("/draft/2020-12/schema")


def test_hand_built_snapshots_validate() -> None:
    raw = sample()
    VALIDATOR.validate(raw)
    parse_snapshot(raw)  # and the parser agrees
    minimal = build(E("html", (0, 0, 10, 10))).raw
    VALIDATOR.validate(minimal)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(raw: dict[str, Any]) -> None:
        *head, last = path.split(".")
        obj: Any = raw
        for key in head:
            obj = obj[int(key)] if isinstance(obj, list) else obj[key]
        if isinstance(obj, list):
            obj[int(last)] = value
        elif value is KeyError:
            del obj[last]
        else:
            obj[last] = value
    return apply


# Each broken snapshot is refused by the schema AND by the parser (which names the field).
BROKEN = {
    "protocol 2": _set("protocol", 2),
    "missing page": _set("page", KeyError),
    "missing elements": _set("elements", KeyError),
    "missing enums.tag": _set("enums.tag", KeyError),
    "viewport zero": _set("page.viewport", [0, 800]),
    "viewport one number": _set("page.viewport", [800]),
    "document negative": _set("page.document", [-1, 10]),
    "dpr zero": _set("page.dpr", 0),
    "title not a string": _set("page.title", 5),
    "warnings not strings": _set("page.warnings", [1]),
    "root parent not -1": _set("elements.parent.0", 0),
    "parent below -1": _set("elements.parent.1", -2),
    "parent a string": _set("elements.parent.1", "0"),
    "tag negative": _set("elements.tag.0", -1),
    "tag fractional": _set("elements.tag.0", 0.5),
    "box not a number": _set("elements.box.2", "wide"),
    "opacity above 1": _set("elements.opacity.0", 1.5),
    "opacity negative": _set("elements.opacity.0", -0.1),
    "font size negative": _set("elements.font_size.0", -3),
    "flags negative": _set("elements.flags.0", -1),
    "flags a bool": _set("elements.flags.0", True),
    "missing elements.box": _set("elements.box", KeyError),
    "attrs value not a string": _set("attrs.value.0", None),
    "attrs node negative": _set("attrs.node.0", -1),
    "text owner negative": _set("text.owner.0", -1),
    "text seq zero": _set("text.seq.0", 0),
    "text not a string": _set("text.text.0", 3),
    "rect offsets not from 0": _set("text.rect_offsets.0", 1),
    "rects not numbers": _set("text.rects.0", None),
    "source not a string": _set("source", ["<html>"]),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_snapshots_are_refused_by_schema_and_parser(name: str) -> None:
    raw = sample()
    BROKEN[name](raw)
    assert not VALIDATOR.is_valid(raw), f"schema accepted: {name}"
    with pytest.raises(SnapshotError):
        parse_snapshot(raw)


def test_cross_field_rules_are_the_parsers_job() -> None:
    # A parent pointing forward passes the schema (JSON Schema cannot compare array positions) but not the parser.
    raw = sample()
    raw["elements"]["parent"][1] = 5
    assert VALIDATOR.is_valid(raw)
    with pytest.raises(SnapshotError) as e:
        parse_snapshot(raw)
    assert e.value.field == "elements.parent[1]"
