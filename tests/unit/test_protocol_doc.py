"""PROTOCOL.md's limits, error codes and parameter ranges match what the host does (one source each:
centrum/core/limits.py,
nativehost.ERROR_CODES, the ranges next to each algorithm's config fields)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
import typing
from pathlib import Path

import pytest
from helpers.protocol_doc import PROTOCOL, section, table_rows

from centrum.algorithms import REGISTRY
from centrum.core import limits
from centrum.core.config import field_range, is_numeric
from centrum.native import nativehost

NATIVEHOST = Path(nativehost.__file__)


def number(text: str) -> float:
    return float(text.replace(",", ""))


def test_limits_table_matches_the_host() -> None:
    documented = {}
    for row in table_rows(section("Limits")):
        name = row[0].strip("`")
        documented[name] = int(number(row[1].split()[0]))
    assert documented == limits.LIMITS
    assert nativehost.LIMITS is limits.LIMITS


def test_error_table_matches_the_host_codes() -> None:
    rows = table_rows(section("Error codes"))
    host_codes = {row[0].strip("`") for row in rows if row[1] == "host"}
    assert host_codes == set(nativehost.ERROR_CODES)
    # ... and every code the host's source raises is one of them (HostError("E_...") / LabelError("E_...")).
    used = set()
    for path in (NATIVEHOST, NATIVEHOST.parents[1] / "annotation" / "labels.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"E_[A-Z_]+",
                                                                                                node.value):
                used.add(node.value)
    assert used <= set(nativehost.ERROR_CODES), used - set(nativehost.ERROR_CODES)


def configs() -> dict[str, type]:
    """Algorithm name(s) -> its Config class (the DANA variants share one)."""
    by_module: dict[str, list[str]] = {}
    for name, spec in REGISTRY.items():
        by_module.setdefault(spec.module, []).append(name)
    return {", ".join(f"`{n}`" for n in names): importlib.import_module(module).Config
            for module, names in by_module.items()}


def test_parameter_ranges_table_matches_the_configs() -> None:
    documented = {row[0]: row[1] for row in table_rows(section("Parameters"))}
    expected = configs()
    assert set(documented) == set(expected)
    for algo, cls in expected.items():
        hints = typing.get_type_hints(cls)
        ranges = {f.name: field_range(f) for f in dataclasses.fields(cls) if is_numeric(hints[f.name])}
        text = documented[algo]
        if not ranges:
            assert text == "none"
            continue
        doc = {m[1]: (number(m[2]), number(m[3])) for m in re.finditer(r"(\w+) ([\d.,]+)–([\d.,]+)", text)}
        assert doc == {k: (float(v[0]), float(v[1])) for k, v in ranges.items() if v is not None}, algo


@pytest.mark.parametrize("algo", list(configs()))
def test_every_numeric_parameter_has_a_range_holding_its_defaults(algo: str) -> None:
    cls = configs()[algo]
    hints = typing.get_type_hints(cls)
    presets = getattr(importlib.import_module(cls.__module__), "PRESETS", {})  # gce's named parameter sets
    variants = [cls()] + [cls.named(p) for p in presets]
    for f in dataclasses.fields(cls):
        if not is_numeric(hints[f.name]):
            continue
        rng = field_range(f)
        assert rng is not None, f"{algo}.{f.name} has no range"
        for cfg in variants:  # the defaults and every preset's values lie inside the range
            value = getattr(cfg, f.name)
            assert value is None or rng[0] <= value <= rng[1], (algo, f.name, value)


EXTENSION_SRC = PROTOCOL.parents[1] / "extension" / "src"


def test_error_table_is_the_one_list_of_the_extension_codes_too() -> None:
    """The extension's codes (quoted "E_X" strings and ``E_X:`` keys of its message tables) are all in the table,
    and every code the table gives to the extension is one the extension raises."""
    rows = table_rows(section("Error codes"))
    documented = {row[0].strip("`") for row in rows}
    extension_codes = {row[0].strip("`") for row in rows if row[1] == "extension"}
    used: dict[str, set[str]] = {}
    for path in EXTENSION_SRC.rglob("*.js"):
        text = path.read_text(encoding="utf-8")
        for code in re.findall(r"""["'`](E_[A-Z_]+)["'`]|\b(E_[A-Z_]+):""", text):
            used.setdefault(code[0] or code[1], set()).add(path.name)
    unknown = {c: sorted(files) for c, files in used.items() if c not in documented}
    assert not unknown, f"codes used by the extension but missing from PROTOCOL.md's error table: {unknown}"
    raised = {c for c, files in used.items() if files - {"highlight.js"}}  # highlight.js only explains codes
    assert extension_codes <= raised, extension_codes - raised


def test_overlay_kinds_are_documented() -> None:
    from centrum.core.result import OVERLAY_KINDS

    assert {row[0].strip("`") for row in table_rows(section("Overlays"))[7:]} == set(OVERLAY_KINDS)
