"""Centrum: main-content extraction on live rendered DOM snapshots.

``centrum.extract(page, output="text" | "markdown" | "html" | "json")`` and ``centrum.Extractor`` (see
``centrum.api``). They are imported on first use, so ``import centrum`` stays cheap (no numpy, lxml or browser).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Extractor", "Metadata", "RenderError", "__version__", "extract"]

if TYPE_CHECKING:
    from .api import Extractor, extract
    from .metadata import Metadata
    from .render import RenderError

_LAZY = {"extract": "api", "Extractor": "api", "Metadata": "metadata", "RenderError": "render"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'centrum' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
