"""Parameters are data: config_from_dict checks types, sizes and ranges before any algorithm runs (issue #20)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from centrum.algorithms import ensemble, gce
from centrum.core import limits
from centrum.core.config import ConfigError, config_from_dict, ranged


@dataclass(frozen=True)
class Toy:
    count: int = ranged(3, 1, 10)
    ratio: float = ranged(0.5, 0.0, 1.0)
    optional: int | None = ranged(None, 0, 5)
    tags: tuple[str, ...] = ("a",)
    name: str = "x"


@pytest.mark.parametrize(("params", "expected"), [
    ({"count": 10}, {"count": 10}),
    ({"count": "7"}, {"count": 7}),  # CLI strings
    ({"count": 4.0}, {"count": 4}),
    ({"ratio": "0.25"}, {"ratio": 0.25}),
    ({"ratio": 1}, {"ratio": 1.0}),
    ({"optional": None}, {"optional": None}),
    ({"optional": "none"}, {"optional": None}),
    ({"tags": "p,div"}, {"tags": ("p", "div")}),
])
def test_accepted(params: dict, expected: dict) -> None:
    cfg = config_from_dict(Toy, params)
    assert {k: getattr(cfg, k) for k in expected} == expected


@pytest.mark.parametrize(("params", "needle"), [
    ({"count": 11}, "count: 11 is outside its range [1, 10]"),
    ({"count": 0}, "outside its range"),
    ({"count": 4e7}, "count: 40000000 is outside its range"),
    ({"count": 10**400}, "outside its range"),
    ({"count": 2.5}, "expected an integer"),
    ({"count": True}, "expected a number"),
    ({"count": [1]}, "expected a number"),
    ({"ratio": float("nan")}, "finite"),
    ({"ratio": float("inf")}, "finite"),
    ({"ratio": "-inf"}, "finite"),
    ({"ratio": "1e400"}, "finite"),
    ({"ratio": 10**400}, "expected float"),
    ({"ratio": 1.0000001}, "outside its range"),
    ({"optional": 6}, "outside its range"),
    ({"name": "x" * (limits.PARAM_STRING_CHARS + 1)}, "param_string_chars"),
    ({"tags": ["p"] * (limits.PARAM_LIST_ITEMS + 1)}, "param_list_items"),
    ({"tags": ["x" * (limits.PARAM_STRING_CHARS + 1)]}, "param_string_chars"),
    ({"tags": [{"a": 1}]}, "expected a string"),
    ({"nosuch" * 1000: 1}, "unknown parameter"),
])
def test_refused_with_the_parameter_named(params: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict(Toy, params)
    assert needle in str(err.value)
    assert len(str(err.value)) < 400  # a hostile value is never echoed whole


def test_gce_cols_of_the_issue() -> None:
    with pytest.raises(ConfigError, match=r"^cols: 40000000 is outside its range \[1, 32\]$"):
        config_from_dict(gce.Config, {"cols": 40000000})
    assert config_from_dict(gce.Config, {"cols": 8}).cols == 8


@pytest.mark.parametrize("value", ["/etc/passwd", "../models/x", "a/b", "..", ".hidden", "x" * 65, "", "a..b",
                                   "C:\\x", "name.json/..", "\ud800"])
def test_model_names_are_not_paths(value: str) -> None:
    with pytest.raises(ConfigError, match="is not a model name"):
        config_from_dict(ensemble.Config, {"weights": value})


def test_unknown_model_name_message_does_not_depend_on_files(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CENTRUM_HOME", str(tmp_path))
    with pytest.raises(ConfigError) as missing:
        config_from_dict(ensemble.Config, {"weights": "mine"})
    (tmp_path / "mine.json").write_text("{}")  # a file beside the models folder is not a model
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mine.txt").write_text("{}")
    with pytest.raises(ConfigError) as still_missing:
        config_from_dict(ensemble.Config, {"weights": "mine"})
    assert str(missing.value) == str(still_missing.value)
    assert config_from_dict(ensemble.Config, {"weights": "ensemble-v15", "block_weights": "ensemble-v15-blocks"})
