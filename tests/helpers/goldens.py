"""Golden pages: every algorithm's answer and the default's Markdown on pages written for the repository, so that a
change of behaviour shows as a diff in review (as Readability.js's test pages do).

``tests/pages/<slug>/`` holds ``page.html`` (a page written for this repository), ``snapshot.json.gz`` (what the
extension's collector took of it in headless Chromium, through :mod:`centrum.core.render`), ``expected.json`` (every
registered algorithm's node ids and text on that snapshot) and ``expected.md`` (what ``centrum extract -f markdown``
prints with the default algorithm), and, written by hand, ``metadata.json`` (the title, author and date a reader
would name, as the page states them; never regenerated). ``tests/unit/test_goldens.py`` compares them on the stored
snapshots;
``tests/e2e/test_outputs.py`` renders some pages live and compares ``expected.md`` with the CLI's output.

    python tests/helpers/goldens.py --regenerate           # answers from the stored snapshots
    python tests/helpers/goldens.py --regenerate --render  # render the pages again first (collector, renderer)
    python tests/helpers/goldens.py --new SLUG PAGE.html   # a new golden case from a page, rendered and answered
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from centrum import algorithms
from centrum.core.snapshot import Snapshot, parse_snapshot
from centrum.output.outputs import Outputs

PAGES = Path(__file__).resolve().parents[1] / "pages"
SNAPSHOT = "snapshot.json.gz"
EXPECTED = "expected.json"
EXPECTED_MD = "expected.md"
REGENERATE = "python tests/helpers/goldens.py --regenerate"
METADATA = "metadata.json"  # written by hand, never regenerated: what the page's metadata is, not what we answer


def slugs(pages: Path = PAGES) -> list[str]:
    return sorted(p.name for p in pages.iterdir() if (p / "page.html").is_file())


def read_raw(slug: str, pages: Path = PAGES) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(gzip.decompress((pages / slug / SNAPSHOT).read_bytes()))
    return raw


def load_snapshot(slug: str, pages: Path = PAGES) -> Snapshot:
    return parse_snapshot(read_raw(slug, pages))


def answer(name: str, snapshot: Snapshot) -> dict[str, Any]:
    """What an algorithm answers on a snapshot: node ids and the text a reader gets (or the error it raised), and the
    comment sections it set aside when it did (``Result.comments``). The reader's own text of a page, where the page
    keeps one, is its ``reader.txt`` (tests/e2e/test_ui_reader_threads.py)."""
    try:
        r = algorithms.run(name, snapshot)
    except Exception as e:  # noqa: BLE001 - a crash is an answer too, and shows in the diff
        return {"error": f"{type(e).__name__}: {e}"}
    out: dict[str, Any] = {"nodes": [int(v) for v in r.nodes], "text": r.text_for(snapshot)}
    if r.comments:  # the comment sections set aside, which the reader offers as "Comments (N)"
        out["comments"] = r.comments
    return out


def answers(snapshot: Snapshot) -> dict[str, dict[str, Any]]:
    return {name: answer(name, snapshot) for name in algorithms.available()}


def metadata(slug: str, pages: Path = PAGES) -> dict[str, str | None]:
    """The metadata Centrum gives for the page: from its snapshot and the default algorithm's answer, as the
    extension's reader header and ``centrum extract`` read it."""
    snap = load_snapshot(slug, pages)
    answer = algorithms.run(algorithms.DEFAULT_ALGORITHM, snap)
    return Outputs(snap, answer).metadata().to_json()  # type: ignore[return-value]


def render_page(slug: str, pages: Path = PAGES) -> None:
    """Collect the page in headless Chromium and store the snapshot (gzip without a timestamp: same bytes, same
    file); the page's address is replaced by one that does not depend on where the repository lies."""
    from centrum.core.render import Renderer

    with Renderer(timeout_s=30, settle_ms=200) as r:
        raw = r.render(pages / slug / "page.html", source=True).raw
    raw["page"]["url"] = f"https://pages.centrum.test/{slug}/"
    raw["page"]["timing"] = {}
    data = json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    (pages / slug / SNAPSHOT).write_bytes(gzip.compress(data, compresslevel=9, mtime=0))


def markdown(snapshot: Snapshot) -> str:
    """What ``centrum extract -f markdown`` prints for the page: the default algorithm's answer as Markdown."""
    return Outputs(snapshot, algorithms.run(algorithms.DEFAULT_ALGORITHM, snapshot)).markdown()


def write_expected(slug: str, pages: Path = PAGES) -> None:
    snapshot = load_snapshot(slug, pages)
    out = answers(snapshot)
    (pages / slug / EXPECTED).write_text(json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                                         encoding="utf-8")
    (pages / slug / EXPECTED_MD).write_text(markdown(snapshot), encoding="utf-8")


def new_case(slug: str, page: Path, pages: Path = PAGES) -> None:
    """A new golden case from a page file: copied into ``tests/pages/<slug>/``, rendered, answered."""
    folder = pages / slug
    if folder.exists():
        raise SystemExit(f"tests/pages/{slug} exists already: pick another slug, or --regenerate {slug}")
    if not page.is_file():
        raise SystemExit(f"no such page file: {page}")
    folder.mkdir(parents=True)
    shutil.copyfile(page, folder / "page.html")
    render_page(slug, pages)
    write_expected(slug, pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/helpers/goldens.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite expected.json and expected.md")
    parser.add_argument("--render", action="store_true", help="render the pages again first (needs Chromium)")
    parser.add_argument("--new", nargs=2, metavar=("SLUG", "PAGE"), help="a new golden case from a page file")
    parser.add_argument("slug", nargs="*", help="only these pages (default: all)")
    args = parser.parse_args(argv)
    if args.new:
        new_case(args.new[0], Path(args.new[1]))
        print(f"tests/pages/{args.new[0]}: rendered and answered; review expected.json and expected.md")
        return 0
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
