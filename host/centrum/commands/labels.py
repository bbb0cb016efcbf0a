"""Annotator labels stored by the native host (``$CENTRUM_HOME/labels.sqlite3``, default ~/.local/share/centrum).

  centrum labels list [--db FILE] [--json]
  centrum labels export DIR [--db FILE] [--every] [--force]   a data set that ``centrum eval DIR`` accepts
  centrum labels agreement [--db FILE] [--tokenizer fair|aeb] [--json]
  centrum labels delete [ID ...] [--url URL] [--older-than AGE] [--db FILE] [--dry-run]
      AGE: a number and a unit, s m h d w (30d, 12h, 2w); every given selector must hold
  centrum labels campaign create NAME --pages DIR|URLS.txt [--annotators a,b] [--overlap K] [--limit N] [--db FILE]
  centrum labels campaign status NAME [--threshold F1] [--json] [--db FILE]
  centrum labels export --campaign NAME DIR [--force]   node-level gold, adjudicated where available
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..annotation import campaigns
from ..annotation import labels as store
from ..gold.tokenize import TOKENIZERS


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
    p.add_argument("--campaign", default=None, metavar="NAME",
                   help="only this campaign's pages, gold adjudicated where available (node-level gold in meta)")
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
    _campaign_arguments(sub.add_parser("campaign", help="annotation campaigns: a queue of pages, agreement"), with_db)


def _campaign_arguments(parser: argparse.ArgumentParser, with_db: Any) -> None:
    sub = parser.add_subparsers(dest="campaign_command", metavar="ACTION")
    p = with_db(sub.add_parser("create", help="a new campaign: each page goes to K distinct annotators"))
    p.add_argument("name", metavar="NAME", help="campaign name (A-Z a-z 0-9 . _ -)")
    p.add_argument("--pages", required=True, metavar="DIR|URLS.txt",
                   help="a data-set folder (pages/<id>.html; serve it with centrum serve DIR) or a file of URLs "
                        f"(one a line); every URL, in the file or in the folder's meta.jsonl, must be http(s) and at "
                        f"most {campaigns.MAX_URL_CHARS} characters")
    p.add_argument("--annotators", default=None, metavar="a,b",
                   help="who may annotate (default: anyone who asks for a page)")
    p.add_argument("--overlap", type=int, default=1, metavar="K", help="annotators per page (default 1)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="the first N pages (id or list order)")
    p = with_db(sub.add_parser("status", help="progress per annotator, agreement, the adjudication list"))
    p.add_argument("name", metavar="NAME")
    p.add_argument("--threshold", type=float, default=campaigns.DEFAULT_THRESHOLD, metavar="F1",
                   help="pages whose lowest pair node F1 is below this go to adjudication "
                        f"(default {campaigns.DEFAULT_THRESHOLD})")
    p.add_argument("--tokenizer", choices=sorted(TOKENIZERS), default="fair", help="tokens for token F1")
    p.add_argument("--json", action="store_true", help="machine-readable output")


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
    if args.campaign is not None:
        if args.every:
            print("centrum labels export: --every and --campaign do not go together", file=sys.stderr)
            return 2
        rows = campaigns.export_campaign(args.db, args.campaign, args.dir, force=args.force)
        adjudicated = sum(r["gold_from"].startswith("adjudicated") for r in rows)
        print(f"wrote {len(rows)} pages ({adjudicated} adjudicated) to {args.dir} (run: centrum eval {args.dir})")
        return 0
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


def _campaign_create(args: argparse.Namespace) -> int:
    try:
        dataset, pages = campaigns.pages_from(args.pages)
    except (ValueError, UnicodeDecodeError) as e:
        print(f"centrum labels campaign create: {e}", file=sys.stderr)
        return 2
    if args.limit is not None:
        if args.limit < 1:
            print("centrum labels campaign create: --limit must be at least 1", file=sys.stderr)
            return 2
        pages = pages[: args.limit]
    names = args.annotators.split(",") if args.annotators is not None else None
    info = campaigns.create_campaign(args.db, args.name, pages, overlap=args.overlap, annotators=names,
                                     dataset=dataset)
    who = ", ".join(info["annotators"]) if info["annotators"] else "anyone"
    print(f"campaign {info['name']}: {info['pages']} pages, {info['overlap']} annotator(s) per page ({who})"
          + (f"; serve the pages with: centrum serve {_served_folder(Path(args.pages))}" if dataset else ""))
    return 0


def _served_folder(pages: Path) -> Path:
    """The folder to give `centrum serve` (which serves DIR/pages/ only) for a campaign made from ``pages``."""
    return pages.parent if not (pages / "pages").is_dir() and pages.name == "pages" else pages


def _pct(x: float | None) -> str:
    return "    -" if x is None else f"{x:5.3f}"


def _campaign_status(args: argparse.Namespace) -> int:
    st = campaigns.status(args.db, args.name, threshold=args.threshold, tokenizer=args.tokenizer)
    if args.json:
        print(json.dumps(st, ensure_ascii=False, indent=2))
        return 0
    info = st["campaign"]
    print(f"campaign {info['name']}: {info['pages']} pages, {info['overlap']} per page, "
          f"{st['complete_pages']} complete")
    print(f"{'annotator':20}  {'done':>5}  {'skipped':>7}  {'flagged':>7}  {'open':>4}  {'of':>5}  changed")
    for who, c in st["annotators"].items():
        changed = f"{c['changed']}/{c['with_suggestion']}" if c["with_suggestion"] else "-"
        print(f"{_clip(who, 20):20}  {c['done']:>5}  {c['skipped']:>7}  {c['flagged']:>7}  {c['open']:>4}  "
              f"{c['total']:>5}  {changed}")
    print(f"\n{'page':40}  {'labels':>6}  {'node F1':>7}  {'token F1':>8}  {'kappa':>5}  adjudicated")
    for p in st["pages"]:
        adj = p["adjudicated"]
        print(f"{_clip(p['page_id'], 40):40}  {len(p['annotators']):>6}  {_pct(p['node_f1']):>7}  "
              f"{_pct(p['token_f1']):>8}  {_pct(p['kappa'])}  "
              + (f"{adj['how']} by {_clip(adj['reviewer'], 20)}" if adj else ""))
        for q in p["pairs"]:
            who = f"  {_clip(q['a'], 17)} vs {_clip(q['b'], 17)}"
            print(f"{who:40}  {'':>6}  {_pct(q['node_f1']):>7}  {_pct(q['token_f1']):>8}  {_pct(q['kappa'])}")
    print(f"{'mean over pages with 2+ labels':40}  {'':>6}  {_pct(st['node_f1']):>7}  {_pct(st['token_f1']):>8}  "
          f"{_pct(st['kappa'])}")
    print(f"\nto adjudicate (lowest pair node F1 < {st['threshold']}): {', '.join(st['adjudicate']) or 'none'}")
    for f in st["flagged"]:
        print(f"flagged: {f['page_id']} by {_clip(f['annotator'], 20)}: {_clip(f['reason'], 80)}")
    return 0


def _campaign(args: argparse.Namespace) -> int:
    action = {"create": _campaign_create, "status": _campaign_status}.get(args.campaign_command or "")
    if action is None:
        print("centrum labels campaign: choose an action: create NAME --pages ..., status NAME", file=sys.stderr)
        return 2
    return action(args)


def run(args: argparse.Namespace) -> int:
    action = {"list": _list, "export": _export, "agreement": _agreement, "delete": _delete,
              "campaign": _campaign}.get(args.labels_command or "")
    if action is None:
        print("centrum labels: choose an action: list, export DIR, agreement, delete, campaign", file=sys.stderr)
        return 2
    db = Path(args.db) if args.db else store.default_db_path()
    creating = args.labels_command == "campaign" and getattr(args, "campaign_command", None) == "create"
    if not db.is_file() and not creating:
        # Reading commands never create a database: a typo in --db should not look like "0 labels".
        print(f"centrum labels: no label database at {db} (the native host stores labels in annotator mode)",
              file=sys.stderr)
        return 1
    try:
        return action(args)
    except (store.LabelError, FileExistsError, OSError) as e:
        print(f"centrum labels: {getattr(e, 'message', None) or e}", file=sys.stderr)
        return 1
