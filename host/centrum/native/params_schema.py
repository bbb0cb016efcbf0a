"""The algorithms' parameters as the extension's options page shows them: ``extension/src/params.json``, generated
from the typed configs (each algorithm module's ``Config``, its ranges from :func:`centrum.core.config.ranged`), so the
page states every parameter's type, real default and range without asking the host (which may be missing) and
never shows a preset's ``None`` placeholder.

    python -m centrum.native.params_schema --write    # regenerate after a Config changes
    (tests/unit/test_params_schema.py)

A field whose default is ``None`` because a preset fills it in (GCE's ``rows``, ``alpha``...) gets the default
preset's value as its default, and each preset's value under ``presets``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

from .. import algorithms
from ..core.config import field_range

TARGET = Path(__file__).resolve().parents[3] / "extension" / "src" / "params.json"


def _kind(hint: Any) -> tuple[str, list[Any] | None]:
    """("int" | "float" | "bool" | "text" | "list" | "choice", the choices of a Literal) of a field's type."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        return _kind(args[0])
    if typing.get_origin(hint) is typing.Literal:
        return "choice", list(typing.get_args(hint))
    if typing.get_origin(hint) in (tuple, list):
        return "list", None
    kinds = {bool: "bool", int: "int", float: "float", str: "text"}
    if hint in kinds:
        return kinds[hint], None
    raise TypeError(f"no options-page kind for {hint!r}")


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def config_schema(config: type) -> dict[str, dict[str, Any]]:
    """{field: {kind, default, min?, max?, choices?, presets?}} of a Config dataclass, in field order."""
    hints = typing.get_type_hints(config)
    base = config()
    named = getattr(config, "named", None)
    preset_names = typing.get_args(hints["preset"]) if named and "preset" in hints else ()
    presets = {name: named(name) for name in preset_names}
    out: dict[str, dict[str, Any]] = {}
    for f in dataclasses.fields(config):
        kind, choices = _kind(hints[f.name])
        default = getattr(base, f.name)
        entry: dict[str, Any] = {"kind": kind}
        if default is None and presets:
            entry["default"] = _plain(getattr(presets[base.preset], f.name))
            entry["presets"] = {name: _plain(getattr(cfg, f.name)) for name, cfg in presets.items()}
        else:
            entry["default"] = _plain(default)
        if choices is not None:
            entry["choices"] = choices
        rng = field_range(f)
        if rng is not None:
            entry["min"], entry["max"] = rng
        out[f.name] = entry
    return out


def schema() -> dict[str, Any]:
    """Every registered algorithm with a Config: its summary and its parameters (config_schema)."""
    out: dict[str, Any] = {}
    for name, spec in algorithms.REGISTRY.items():
        _, module = algorithms.load(name)  # AlgorithmUnavailable: the file is written where every algorithm imports
        config = getattr(module, "Config", None)
        out[name] = {"summary": spec.summary, "params": config_schema(config) if config else {}}
    return {"generated_by": "python -m centrum.native.params_schema --write", "algorithms": out}


def text() -> str:
    return json.dumps(schema(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {TARGET.name} (else print it)")
    args = parser.parse_args(argv)
    if args.write:
        TARGET.write_text(text(), encoding="utf-8")
    else:
        print(text(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
