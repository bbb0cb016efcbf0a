"""Golden real-page cases: each algorithm's answer on pages written for the repository, so a change shows as a diff.

``tests/pages/<slug>/`` holds ``page.html`` (a page written for this repository: an article with comments, a short
post whose theme puts its comments inside the article, a forum thread, a product page, a documentation page, CJK and
right-to-left news, pages whose metadata is the case), ``snapshot.json.gz`` (the snapshot the
extension's collector took of it in Chromium, through :mod:`centrum.render`), ``expected.json`` (every registered
algorithm's node ids and text on that snapshot) and, written by hand, ``metadata.json`` (the title, author and date a
reader would name, as the page states them). ``tests/unit/test_goldens.py`` runs the algorithms on the stored
snapshots and compares; after an intended change, regenerate and review the diff::

    python -m centrum.goldens --regenerate           # answers from the stored snapshots
    python -m centrum.goldens --regenerate --render  # render the pages again first (a collector or renderer change)
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

from . import algorithms
from .snapshot import Snapshot, parse_snapshot

PAGES = Path(__file__).resolve().parents[2] / "tests" / "pages"
SNAPSHOT = "snapshot.json.gz"
EXPECTED = "expected.json"
METADATA = "metadata.json"  # written by hand, never regenerated: what the page's metadata is, not what we answer


def slugs(pages: Path = PAGES) -> list[str]:
    return sorted(p.name for p in pages.iterdir() if (p / "page.html").is_file())


def read_raw(slug: str, pages: Path = PAGES) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(gzip.decompress((pages / slug / SNAPSHOT).read_bytes()))
    return raw


def load_snapshot(slug: str, pages: Path = PAGES) -> Snapshot:
    return parse_snapshot(read_raw(slug, pages))


def answer(name: str, snapshot: Snapshot) -> dict[str, Any]:
    """What an algorithm answers on a snapshot: node ids and the text a reader gets (or the error it raised)."""
    try:
        r = algorithms.run(name, snapshot)
    except Exception as e:  # noqa: BLE001 - a crash is an answer too, and shows in the diff
        return {"error": f"{type(e).__name__}: {e}"}
    return {"nodes": [int(v) for v in r.nodes], "text": r.text_for(snapshot)}


def answers(snapshot: Snapshot) -> dict[str, dict[str, Any]]:
    return {name: answer(name, snapshot) for name in algorithms.available()}


def metadata(slug: str, pages: Path = PAGES) -> dict[str, str | None]:
    """The metadata Centrum gives for the page: from its snapshot and the default algorithm's answer, as the
    extension's reader header and ``centrum extract`` read it."""
    from .outputs import Outputs

    snap = load_snapshot(slug, pages)
    return Outputs(snap, algorithms.run(algorithms.DEFAULT_ALGORITHM, snap)).metadata().to_json()  # type: ignore[return-value]


def render_page(slug: str, pages: Path = PAGES) -> None:
    """Collect the page in headless Chromium and store the snapshot (gzip without a timestamp: same bytes, same
    file); the page's address is replaced by one that does not depend on where the repository lies."""
    from .render import Renderer

    with Renderer(timeout_s=30, settle_ms=200) as r:
        raw = r.render(pages / slug / "page.html", source=True).raw
    raw["page"]["url"] = f"https://pages.centrum.test/{slug}/"
    raw["page"]["timing"] = {}
    data = json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    (pages / slug / SNAPSHOT).write_bytes(gzip.compress(data, compresslevel=9, mtime=0))


def write_expected(slug: str, pages: Path = PAGES) -> None:
    out = answers(load_snapshot(slug, pages))
    (pages / slug / EXPECTED).write_text(json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                                         encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m centrum.goldens", description=__doc__.split("\n\n")[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite expected.json of every page")
    parser.add_argument("--render", action="store_true", help="render the pages again first (needs Chromium)")
    parser.add_argument("slug", nargs="*", help="only these pages (default: all)")
    args = parser.parse_args(argv)
    chosen = args.slug or slugs()
    unknown = sorted(set(chosen) - set(slugs()))
    if unknown:
        parser.error(f"no such page: {', '.join(unknown)} (known: {', '.join(slugs())})")
    if not args.regenerate:
        parser.error("nothing to do: pass --regenerate")
    for slug in chosen:
        if args.render or not (PAGES / slug / SNAPSHOT).is_file():
            render_page(slug)
        write_expected(slug)
        print(f"{slug}: {len(json.loads((PAGES / slug / EXPECTED).read_text(encoding='utf-8')))} algorithms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
