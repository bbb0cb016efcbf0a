"""Loader for data sets in the shared layout.

A data set is a folder ``<name>/`` with ``pages/<id>.html`` (page bytes as stored), ``gold/<id>.txt`` (UTF-8 main
text) or ``gold/<id>.json`` (trafilatura-eval: ``{"with": [...], "without": [...]}`` snippets, scored by snippet
precision/recall as trafilatura does, see :mod:`.metrics`), and ``meta.jsonl`` (one JSON object per line with at
least ``id``; ``language`` is used for the per-language tables, ``und`` when absent).

Every problem raises :class:`DatasetError` naming the file (and line) instead of producing a silently smaller set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.limits import read_page_file
from .metrics import Gold


class DatasetError(ValueError):
    """A data set folder that does not follow the layout; the message names the file and line."""


@dataclass(frozen=True)
class PageItem:
    dataset: str
    id: str
    html_path: Path
    gold: Gold
    language: str = "und"
    meta: dict[str, Any] = field(default_factory=dict)

    def html(self) -> bytes:
        return read_page_file(self.html_path)

    @property
    def page_type(self) -> str | None:
        """The page's type (article, forum, product, ...) where its data set's meta.jsonl gives one."""
        value = self.meta.get("page_type")
        return str(value) if value else None


@dataclass(frozen=True)
class Dataset:
    name: str
    root: Path
    pages: list[PageItem]


def _read_meta(path: Path) -> dict[str, dict[str, Any]]:
    meta: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return meta
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{where}: bad meta line (not JSON: {e.msg})") from None
        if not isinstance(obj, dict):
            raise DatasetError(f"{where}: bad meta line (expected a JSON object, got {type(obj).__name__})")
        pid = obj.get("id")
        if not isinstance(pid, str) or not pid:
            raise DatasetError(f"{where}: bad meta line (missing or non-string \"id\")")
        if pid in meta:
            raise DatasetError(f"{where}: duplicate id {pid!r}")
        lang = obj.get("language", "und")
        if lang is not None and not isinstance(lang, str):
            raise DatasetError(f"{where}: \"language\" must be a string, got {lang!r}")
        meta[pid] = obj
    return meta


def _repair_utf16(text: str) -> str:
    """Undo a UTF-16 file that was re-encoded byte by byte as UTF-8 (seen: dragnet gold 27 starts "ÿþP\\x00a\\x00"):
    NUL every other character is never real gold text."""
    if text.count("\x00") * 3 < len(text):
        return text
    try:
        data = text.encode("latin-1")
        return data[: len(data) // 2 * 2].decode("utf-16-le").lstrip("\ufeff")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text.replace("\x00", "")


def _read_gold(gold_dir: Path, pid: str) -> Gold:
    txt, js = gold_dir / f"{pid}.txt", gold_dir / f"{pid}.json"
    if txt.exists():
        try:
            return Gold(text=_repair_utf16(txt.read_text(encoding="utf-8")))
        except UnicodeDecodeError as e:
            raise DatasetError(f"{txt}: gold is not UTF-8 ({e.reason} at byte {e.start})") from None
    if js.exists():
        try:
            obj = json.loads(js.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DatasetError(f"{js}: gold snippets are not valid UTF-8 JSON ({e})") from None
        if not isinstance(obj, dict):
            raise DatasetError(f"{js}: gold snippets must be an object with \"with\"/\"without\" lists")
        parts: dict[str, tuple[str, ...]] = {}
        for key in ("with", "without"):
            value = obj.get(key, [])
            if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                raise DatasetError(f"{js}: \"{key}\" must be a list of strings")
            parts[key] = tuple(s for s in value if s.strip())
        if not parts["with"] and not parts["without"]:
            raise DatasetError(f"{js}: no snippets (both \"with\" and \"without\" are empty): page cannot be scored")
        return Gold(with_=parts["with"], without=parts["without"])
    raise DatasetError(f"{gold_dir}: missing gold for page {pid!r} (expected {pid}.txt or {pid}.json)")


def load_dataset(root: str | Path, limit: int | None = None) -> Dataset:
    """Load the data set in ``root``; ``limit`` keeps the first K pages in id order (quick runs)."""
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"{root}: data set folder does not exist")
    pages_dir, gold_dir = root / "pages", root / "gold"
    if not pages_dir.is_dir():
        raise DatasetError(f"{root}: no pages/ folder (expected pages/<id>.html or pages/<id>.html.gz)")
    if not gold_dir.is_dir():
        raise DatasetError(f"{root}: no gold/ folder (expected gold/<id>.txt or gold/<id>.json)")
    meta = _read_meta(root / "meta.jsonl")
    files = {p.name[: -len(".html")]: p for p in pages_dir.glob("*.html")}
    for p in pages_dir.glob("*.html.gz"):  # gzipped pages (wcxb-dev2), read through limits.read_page_file
        pid = p.name[: -len(".html.gz")]
        if pid in files:
            raise DatasetError(f"{pages_dir}: page {pid!r} is there twice ({pid}.html and {pid}.html.gz)")
        files[pid] = p
    if not files:
        raise DatasetError(f"{pages_dir}: no .html or .html.gz pages")
    orphans = sorted(set(meta) - set(files))
    if orphans:
        raise DatasetError(f"{root / 'meta.jsonl'}: ids without a page file: {', '.join(orphans[:5])}"
                           + (f" (+{len(orphans) - 5} more)" if len(orphans) > 5 else ""))
    ids = sorted(files)
    if limit is not None:
        ids = ids[: max(0, limit)]
    items = []
    for pid in ids:
        m = meta.get(pid, {})
        items.append(PageItem(dataset=root.name, id=pid, html_path=files[pid], gold=_read_gold(gold_dir, pid),
                              language=str(m.get("language") or "und"), meta=m))
    return Dataset(name=root.name, root=root, pages=items)
