"""Centrum: main-content extraction on live rendered DOM snapshots.

``centrum.extract(page, output_format="text" | "markdown" | "html" | "json")``, ``centrum.extract_many(pages)``
and ``centrum.Extractor`` (see ``centrum.api``). They are imported on first use, so ``import centrum`` stays cheap
(no numpy, lxml or browser).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core.version import __version__

__all__ = ["Extractor", "Metadata", "RenderError", "Result", "__version__", "extract", "extract_many"]

if TYPE_CHECKING:
    from .api import Extractor, Result, extract, extract_many
    from .core.metadata import Metadata
    from .core.render import RenderError

_LAZY = {"extract": "api", "extract_many": "api", "Extractor": "api", "Result": "api", "Metadata": "core.metadata",
         "RenderError": "core.render"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'centrum' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
