"""Serve a data-set folder (shared layout: pages/<id>.html) on 127.0.0.1 for an annotation campaign, offline.

  centrum serve DIR [--port N]

Each page is at http://127.0.0.1:PORT/p/<id>, as saved; nothing is fetched from other origins (Content-Security-
Policy), nothing but the pages is served (not gold/, not meta.jsonl, nothing of the campaign's queue).
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="data-set folder (pages/<id>.html) or a folder of .html files")
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: a free one; the campaign keys pages by id, not URL)")


def run(args: argparse.Namespace) -> int:
    from ..serve import DatasetServer, ServeError

    if not 0 <= args.port <= 65535:
        print("centrum serve: --port must be 0..65535", file=sys.stderr)
        return 2
    try:
        server = DatasetServer(args.dir, args.port)
    except (ServeError, OSError) as e:
        print(f"centrum serve: {e}", file=sys.stderr)
        return 1
    print(f"serving {len(server.ids)} pages of {args.dir} at {server.url} (pages at {server.url}p/<id>; "
          "Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.httpd.server_close()
    return 0
