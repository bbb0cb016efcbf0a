"""Typed algorithm configs from loosely typed parameter dicts (CLI ``--param k=v``, extension panel).

Parameters are data from a request (a page can fill the debugger's parameter box), so every value is checked
before an algorithm runs: its type, the length of strings and lists (``centrum.core.limits``), and for every number the
range declared next to its field with :func:`ranged` (``rows: int | None = ranged(None, 1, 32)``). NaN and
infinities are refused. A field may also carry ``metadata={"check": fn}``, ``fn(key, value)`` raising ConfigError
(the ensemble's model names). The ranges are listed in PROTOCOL.md ("Parameter ranges", generated from the configs by
``centrum algorithms``), and a test checks that every numeric field of every algorithm's config has one.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, TypeVar

from . import limits

C = TypeVar("C")
Number = int | float


class ConfigError(ValueError):
    pass


def ranged(default: Any, lo: Number, hi: Number) -> Any:
    """A dataclass field whose number must lie in [lo, hi] (None, where the type allows it, is always accepted)."""
    return dataclasses.field(default=default, metadata={"range": (lo, hi)})


def field_range(f: dataclasses.Field[Any]) -> tuple[Number, Number] | None:
    rng = f.metadata.get("range")
    return None if rng is None else (rng[0], rng[1])


def is_numeric(hint: Any) -> bool:
    """int or float, alone or in a union (``int | None``); bool is not a number here."""
    if hint in (int, float):
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(is_numeric(a) for a in typing.get_args(hint))
    return False


def _clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:80]}... ({len(text)} characters)"


def config_from_dict(cls: type[C], params: dict[str, Any] | None, base: C | None = None) -> C:
    """Return ``cls`` (a dataclass) with ``params`` applied over ``base`` (or the defaults).

    Unknown keys, values of the wrong type, over-long strings or lists and numbers outside their field's range raise
    :class:`ConfigError` naming the key.
    """
    cfg = base if base is not None else cls()
    if not params:
        return cfg
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    changes: dict[str, Any] = {}
    for key, value in params.items():
        if key not in fields:
            raise ConfigError(f"unknown parameter {_clip(key)} for {cls.__name__} "
                              f"(known: {', '.join(sorted(fields))})")
        _check_size(key, value)
        coerced = _coerce(key, value, hints[key])
        rng = field_range(fields[key])
        if rng is not None and coerced is not None and not rng[0] <= coerced <= rng[1]:
            raise ConfigError(f"{key}: {_clip(coerced)} is outside its range [{rng[0]}, {rng[1]}]")
        check = fields[key].metadata.get("check")
        if check is not None:  # a field's own rule, e.g. the ensemble's model names (raises ConfigError)
            check(key, coerced)
        changes[key] = coerced
    return dataclasses.replace(cfg, **changes)  # type: ignore[type-var]


def _check_size(key: str, value: Any) -> None:
    """Strings and lists are bounded before anything is converted (PROTOCOL.md "Limits")."""
    if isinstance(value, str) and len(value) > limits.PARAM_STRING_CHARS:
        raise ConfigError(f"{key}: a string of {len(value)} characters exceeds the limit "
                          f"param_string_chars = {limits.PARAM_STRING_CHARS}")
    if isinstance(value, list | tuple):
        if len(value) > limits.PARAM_LIST_ITEMS:
            raise ConfigError(f"{key}: a list of {len(value)} items exceeds the limit "
                              f"param_list_items = {limits.PARAM_LIST_ITEMS}")
        for item in value:
            if isinstance(item, str) and len(item) > limits.PARAM_STRING_CHARS:
                raise ConfigError(f"{key}: an item of {len(item)} characters exceeds the limit "
                                  f"param_string_chars = {limits.PARAM_STRING_CHARS}")


def _coerce(key: str, value: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for arg in typing.get_args(hint):
            if arg is type(None):
                if value is None or value == "none":
                    return None
                continue
            try:
                return _coerce(key, value, arg)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError("; ".join(errors))
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        if isinstance(value, list | dict) or value not in allowed:  # unhashable values cannot be members
            raise ConfigError(f"{key}: expected one of {allowed}, got {_clip(value)}")
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ConfigError(f"{key}: expected true/false, got {_clip(value)}")
    if hint in (int, float):
        return _number(key, value, hint)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {_clip(value)}")
        return value
    if origin in (tuple, list):
        if isinstance(value, str):
            value = [v for v in value.split(",") if v]
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{key}: expected a list, got {_clip(value)}")
        args = typing.get_args(hint)
        item = args[0] if args else Any
        items = [_coerce(key, v, item) if item is not Any and item is not Ellipsis else v for v in value]
        return tuple(items) if origin is tuple else items
    return value


def _number(key: str, value: Any, hint: type) -> Number:
    """A finite int or float from a JSON number or a CLI string; NaN, infinities and 1e400 are refused."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"{key}: expected a number, got {_clip(value)}")
    if hint is int and isinstance(value, int):
        return value  # exact, however large: the range check refuses it by value
    try:
        num = float(value)
    except (ValueError, OverflowError):  # OverflowError: an int beyond float, e.g. 10**400
        raise ConfigError(f"{key}: expected {hint.__name__}, got {_clip(value)}") from None
    if not math.isfinite(num):
        raise ConfigError(f"{key}: expected a finite number, got {_clip(value)}")
    if hint is float:
        return num
    if not num.is_integer():
        raise ConfigError(f"{key}: expected an integer, got {_clip(value)}")
    return int(num)
