"""The optional dependencies, each imported through :func:`need` by the code that uses it, so that a missing one is
a one-line error naming the extra that installs it (host/pyproject.toml's optional-dependencies) instead of a
traceback. The core install (lxml, numpy, tqdm, tld, charset-normalizer) runs the native host and
``centrum extract --no-render``."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def message(what: str, extra: str) -> str:
    return f"{what} needs the {extra} extra: pip install 'centrum[{extra}]'"


def need(module: str, extra: str, what: str) -> ModuleType:
    """``import module``, or :class:`MissingExtra` saying that ``what`` needs ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtra(message(what, extra), name=module) from e
