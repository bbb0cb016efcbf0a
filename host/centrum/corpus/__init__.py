"""Generated corpora: the styled corpus (real static-site engines and their themes around the shared data sets'
gold texts), built on demand into a cache, never committed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def source_site(meta: Mapping[str, Any]) -> str | None:
    """The cross-validation group of a generated page: the site of the data-set page its body came from (so the
    generated page and its source are never on both sides of a fold); None for a page of any other data set."""
    if meta.get("source_set") and meta.get("source_id"):
        site = meta.get("source_site")
        return str(site) if site else f"page:{meta['source_set']}/{meta['source_id']}"
    return None
