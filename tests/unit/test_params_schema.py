"""extension/src/params.json (the options page's parameters: kinds, real defaults, ranges) is what
``python -m centrum.native.params_schema --write`` makes of the typed configs now: a Config changed without
regenerating it
fails here."""

from __future__ import annotations

import json
from pathlib import Path

from centrum.native import params_schema

PARAMS = Path(__file__).resolve().parents[2] / "extension" / "src" / "params.json"


def test_params_json_is_generated_from_the_configs() -> None:
    expected = params_schema.text()  # every algorithm's extra is installed where the tests run (tox)
    assert PARAMS.read_text(encoding="utf-8") == expected, (
        "extension/src/params.json is out of date: run python -m centrum.native.params_schema --write")


def test_every_parameter_has_a_real_default_and_numbers_a_range() -> None:
    data = json.loads(PARAMS.read_text(encoding="utf-8"))
    assert {"semantic", "gce", "ensemble"} <= set(data["algorithms"])
    for name, algo in data["algorithms"].items():
        for key, p in algo["params"].items():
            assert p["default"] is not None, (name, key)  # never a "null" placeholder on the options page
            if p["kind"] in ("int", "float"):
                assert p["min"] <= p["default"] <= p["max"], (name, key)
            if p["kind"] == "choice":
                assert p["default"] in p["choices"], (name, key)
    rows = data["algorithms"]["gce"]["params"]["rows"]
    assert rows == {"kind": "int", "default": 4, "presets": {"paper": 7, "framework": 4}, "min": 1, "max": 32}
