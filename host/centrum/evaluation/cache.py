"""On-disk cache of rendered snapshots: ``$CENTRUM_CACHE`` (default ``~/.cache/centrum``) ``/snapshots/<key>.json.gz``.

The key is the sha256 of the page bytes, the collector (its ``VERSION`` and a hash of ``collect.js``, so an edited
collector never serves stale snapshots even if its version string was not bumped), the renderer's
``RENDERER_VERSION`` (bumped by hand when loading or decoding changes; ``SnapshotCache.find`` keeps the renders of an
earlier version that the bump does not change), the window size and the names and versions
of the in-page ``extra`` functions (Readability.js). An entry stores
``{"raw", "stylesheets", "timing", "extra", "errors", "warnings"}``; writes go through ``paths.atomic_path`` so a
killed worker never leaves half an entry behind, and an unreadable entry counts as a miss.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import re
import zlib
from pathlib import Path
from typing import Any

from ..core.paths import atomic_path, cache_root

_VERSION = re.compile(r"""\bVERSION\s*=\s*["']([^"']+)["']""")


@functools.cache
def collector_version() -> str:
    """``<VERSION in collect.js>+<sha256(collect.js)[:12]>``, or ``unknown`` when the collector is missing."""
    try:
        from ..core.render import collector_source

        src = collector_source()
    except Exception:  # the renderer or the script is missing: rendering will fail with its own message
        return "unknown"
    m = _VERSION.search(src)
    return f"{m.group(1) if m else '?'}+{hashlib.sha256(src.encode()).hexdigest()[:12]}"


def renderer_version() -> int:
    from ..core.render import RENDERER_VERSION

    return RENDERER_VERSION


def snapshot_key(page: bytes, window: tuple[int, int], extras: dict[str, str] | None = None,
                 version: int | None = None) -> str:
    """The key of the page's render by the current renderer (or by renderer ``version``)."""
    h = hashlib.sha256()
    h.update(hashlib.sha256(page).digest())
    h.update(f"|collector={collector_version()}|window={window[0]}x{window[1]}|".encode())
    version = renderer_version() if version is None else version
    if version > 1:  # version 1 keys are the unversioned ones of the first caches (see render.RENDERER_VERSION)
        h.update(f"renderer={version}|".encode())
    for name in sorted(extras or {}):
        h.update(f"extra={name}:{(extras or {})[name]}|".encode())
    return h.hexdigest()


class SnapshotCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.dir = directory or cache_root() / "snapshots"

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.json.gz"

    def load(self, key: str) -> dict[str, Any] | None:
        path = self.path(key)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                entry = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, EOFError, zlib.error, ValueError, UnicodeDecodeError):
            return None  # truncated or corrupt entry: render again and overwrite it
        return entry if isinstance(entry, dict) and "raw" in entry else None

    def find(self, page: bytes, window: tuple[int, int], extras: dict[str, str] | None = None
             ) -> dict[str, Any] | None:
        """The page's entry of the current renderer, else one of an earlier version that the renderer carries over
        (``render.CARRIED_OVER``: its render would be the same), copied under the current key."""
        from ..core.render import CARRIED_OVER

        key = snapshot_key(page, window, extras)
        entry = self.load(key)
        if entry is not None:
            return entry
        for version, same in sorted(CARRIED_OVER.items(), reverse=True):
            old = self.load(snapshot_key(page, window, extras, version))
            if old is not None and same(old, page):
                self.store(key, old)
                return old
        return None

    def settle(self, page: bytes, window: tuple[int, int], extras: dict[str, str] | None,
               fresh: dict[str, Any]) -> dict[str, Any]:
        """The entry to keep for a fresh render of the page: the render of an earlier version that
        ``render.SAME_WHEN_RULES_AGREE`` makes the same when the same rules shaped both, else the fresh one."""
        from ..core.render import SAME_WHEN_RULES_AGREE, SINCE_7, rules_taken

        for version in sorted(SAME_WHEN_RULES_AGREE, reverse=True):
            old = self.load(snapshot_key(page, window, extras, version))
            if old is not None and rules_taken(old) == rules_taken(fresh) and SINCE_7(old, page):
                return old
        return fresh

    def store(self, key: str, entry: dict[str, Any]) -> None:
        with atomic_path(self.path(key)) as tmp, gzip.open(tmp, "wt", encoding="utf-8", compresslevel=5) as f:
            json.dump(entry, f, ensure_ascii=False, separators=(",", ":"))
