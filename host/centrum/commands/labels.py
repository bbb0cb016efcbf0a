"""Annotator labels stored by the native host (``$CENTRUM_HOME/labels.sqlite3``, default ~/.local/share/centrum).

  centrum labels list [--db FILE] [--json]
  centrum labels export DIR [--db FILE] [--every] [--force]   a data set that ``centrum eval DIR`` accepts
  centrum labels agreement [--db FILE] [--tokenizer fair|aeb] [--json]
  centrum labels delete [ID ...] [--url URL] [--older-than AGE] [--db FILE] [--dry-run]
      AGE: a number and a unit, s m h d w (30d, 12h, 2w); every given selector must hold
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import timedelta
from pathlib import Path

from .. import labels as store
from ..evaluation.tokenize import TOKENIZERS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="labels_command", metavar="ACTION")

    def with_db(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--db", default=None, metavar="FILE",
                       help=f"label database (default: $CENTRUM_HOME/{store.DB_NAME}, "
                            f"~/.local/share/centrum/{store.DB_NAME})")
        return p

    p = with_db(sub.add_parser("list", help="list the stored labels"))
    p.add_argument("--json", action="store_true", help="one JSON object per label")
    p = with_db(sub.add_parser("export", help="write the labels as a data set (pages/, gold/, meta.jsonl)"))
    p.add_argument("dir", metavar="DIR", help="output folder (must be empty unless --force)")
    p.add_argument("--every", action="store_true",
                   help="one page per label (default: one page per labelled page, gold of its first label)")
    p.add_argument("--force", action="store_true", help="replace pages/, gold/ and meta.jsonl of a non-empty DIR")
    p = with_db(sub.add_parser("agreement", help="agreement between annotators of the same page"))
    p.add_argument("--tokenizer", choices=sorted(TOKENIZERS), default="fair", help="tokens for token F1")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = with_db(sub.add_parser("delete", help="delete labels by id, URL and/or age (every given selector holds)"))
    p.add_argument("ids", nargs="*", type=int, metavar="ID", help="label ids (see `centrum labels list`)")
    p.add_argument("--url", default=None, help="the stored URL, exactly (stored without query unless kept)")
    p.add_argument("--older-than", type=age, default=None, metavar="AGE",
                   help="saved longer ago than AGE: a number and s, m, h, d or w (30d, 12h, 2w)")
    p.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")


_AGE = re.compile(r"(\d{1,9})([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def age(text: str) -> timedelta:
    """``30d`` -> 30 days (argparse type of --older-than)."""
    m = _AGE.fullmatch(text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age like 30d, 12h or 2w (units: s m h d w)")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


def _clip(s: str | None, width: int) -> str:
    s = (s or "").encode("unicode_escape").decode("ascii") if s and not s.isprintable() else (s or "")
    return s if len(s) <= width else s[: width - 1] + "…"


def _list(args: argparse.Namespace) -> int:
    rows = store.list_labels(args.db)
    if args.json:
        for r in rows:
            print(json.dumps(r, ensure_ascii=False))
        return 0
    print(f"{'id':>5}  {'time (UTC)':24}  {'annotator':16}  {'nodes':>5}  {'words':>6}  url")
    for r in rows:
        print(f"{r['id']:>5}  {r['created']:24}  {_clip(r['annotator'], 16):16}  {len(r['nodes']):>5}  "
              f"{len(r['text'].split()):>6}  {_clip(r['url'], 80)}")
    print(f"{len(rows)} labels")
    return 0


def _export(args: argparse.Namespace) -> int:
    rows = store.export_dataset(args.db, args.dir, every=args.every, force=args.force)
    print(f"wrote {len(rows)} pages to {args.dir} (run: centrum eval {args.dir})")
    return 0


def _agreement(args: argparse.Namespace) -> int:
    out = store.agreement(args.db, tokenizer=args.tokenizer)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    if not out["pages"]:
        print("no page has labels from two or more annotators")
        return 0
    print(f"{'page':60}  {'annotators':>10}  {'token F1':>8}  {'node F1':>8}")
    for page in out["pages"]:
        name = page["page_id"] or page["url"]
        print(f"{_clip(name, 60):60}  {len(page['annotators']):>10}  {page['token_f1']:8.3f}  {page['node_f1']:8.3f}")
        for pair in page["pairs"]:
            who = f"  {_clip(pair['a'], 20)} vs {_clip(pair['b'], 20)}"
            print(f"{who:60}  {'':>10}  {pair['token_f1']:8.3f}  {pair['node_f1']:8.3f}")
    print(f"{'mean over ' + str(len(out['pages'])) + ' pages':60}  {'':>10}  {out['token_f1']:8.3f}  "
          f"{out['node_f1']:8.3f}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    if not args.ids and args.url is None and args.older_than is None:
        print("centrum labels delete: give label ids, --url or --older-than (to delete every label, remove the "
              "database file)", file=sys.stderr)
        return 2
    gone = store.delete_labels(args.db, ids=args.ids, url=args.url, older_than=args.older_than,
                               dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    print(f"{verb} {len(gone)} label{'s' if len(gone) != 1 else ''}" + (f": {', '.join(map(str, gone))}"
                                                                       if gone else ""))
    return 0


def run(args: argparse.Namespace) -> int:
    action = {"list": _list, "export": _export, "agreement": _agreement, "delete": _delete}.get(
        args.labels_command or "")
    if action is None:
        print("centrum labels: choose an action: list, export DIR, agreement, delete", file=sys.stderr)
        return 2
    db = Path(args.db) if args.db else store.default_db_path()
    if not db.is_file():
        # Reading commands never create a database: a typo in --db should not look like "0 labels".
        print(f"centrum labels: no label database at {db} (the native host stores labels in annotator mode)",
              file=sys.stderr)
        return 1
    try:
        return action(args)
    except (store.LabelError, FileExistsError, OSError) as e:
        print(f"centrum labels: {getattr(e, 'message', None) or e}", file=sys.stderr)
        return 1
