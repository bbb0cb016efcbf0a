"""Typed algorithm configs from loosely typed parameter dicts (CLI ``--param k=v``, extension panel)."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar

C = TypeVar("C")


class ConfigError(ValueError):
    pass


def config_from_dict(cls: type[C], params: dict[str, Any] | None, base: C | None = None) -> C:
    """Return ``cls`` (a dataclass) with ``params`` applied over ``base`` (or the defaults).

    Unknown keys and values of the wrong type raise :class:`ConfigError` naming the key.
    """
    cfg = base if base is not None else cls()
    if not params:
        return cfg
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    changes: dict[str, Any] = {}
    for key, value in params.items():
        if key not in names:
            raise ConfigError(f"unknown parameter {key!r} for {cls.__name__} (known: {', '.join(sorted(names))})")
        changes[key] = _coerce(key, value, hints[key])
    return dataclasses.replace(cfg, **changes)  # type: ignore[type-var]


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
        if value not in allowed:
            raise ConfigError(f"{key}: expected one of {allowed}, got {value!r}")
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ConfigError(f"{key}: expected true/false, got {value!r}")
    if hint in (int, float):
        if isinstance(value, bool):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        try:
            num = hint(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key}: expected {hint.__name__}, got {value!r}") from None
        if hint is int and isinstance(value, float) and not value.is_integer():
            raise ConfigError(f"{key}: expected an integer, got {value!r}")
        return num
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {value!r}")
        return value
    if origin in (tuple, list):
        if isinstance(value, str):
            value = [v for v in value.split(",") if v]
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        args = typing.get_args(hint)
        item = args[0] if args else Any
        items = [_coerce(key, v, item) if item is not Any and item is not Ellipsis else v for v in value]
        return tuple(items) if origin is tuple else items
    return value
