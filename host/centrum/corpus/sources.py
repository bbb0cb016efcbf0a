"""Where the styled corpus takes its article bodies from: full-text gold of the shared data sets.

Only text gold (``gold/<id>.txt``) serves: snippet gold has no body to insert. Each source keeps its data set, id,
language and the *site* of the page it came from (the cross-validation group), so a generated page is never tested
in a fold that trained on its source page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..gold.datasets import load_dataset
from .bodies import Body, structure

MIN_CHARS = 400  # shorter gold is a caption or a stub, not an article
MAX_CHARS = 30_000  # longer gold is a whole forum thread or a book chapter: slow to build, not an article page
MIN_BLOCKS = 3


@dataclass(frozen=True)
class Source:
    dataset: str
    id: str
    language: str
    site: str
    body: Body


def _language(raw: str) -> str:
    """``ru/cyrillic`` -> ``ru``: the primary tag only."""
    return raw.split("/")[0].split("-")[0].strip().lower() or "und"


def load_sources(root: Path, languages: set[str] | None = None) -> list[Source]:
    """Every usable text-gold page of every data set under ``root`` (sorted: the order does not depend on the disk)."""
    from ..gold.sites import page_site

    out: list[Source] = []
    for folder in sorted(p for p in root.iterdir() if (p / "meta.jsonl").is_file()):
        for item in load_dataset(folder).pages:
            lang = _language(item.language)
            text = item.gold.text
            if text is None or (languages is not None and lang not in languages):
                continue
            if not MIN_CHARS <= len(text) <= MAX_CHARS:
                continue
            title = str(item.meta.get("title") or "").strip() or f"{item.dataset} {item.id}"
            body = structure(text, title[:120])
            if len(body.blocks) < MIN_BLOCKS or len(body.gold) < MIN_CHARS:
                continue
            out.append(Source(item.dataset, item.id, lang, page_site(item), body))
    return out
