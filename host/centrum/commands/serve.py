"""Serve a data-set folder's pages (shared layout: DIR/pages/<id>.html) on the loopback interface for an annotation
campaign, offline.

  centrum serve DIR [--port N] [--idle-timeout S]

Each page is at http://<random>.centrum.localhost:PORT/p/<id>, as saved, under a host name of this run (browsers
resolve *.localhost to 127.0.0.1 themselves), so no other local service's cookies or storage are reachable from a
page; each page is sandboxed (an opaque origin: no cookies, no storage, other saved pages unreadable); nothing is
fetched from other origins (Content-Security-Policy), nothing but pages/ is served (not gold/, not meta.jsonl).
See centrum/annotation/serve.py for the connection limits.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..annotation.serve import IDLE_TIMEOUT_S

    parser.add_argument("dir", metavar="DIR", help="data-set folder holding pages/<id>.html (only pages/ is served)")
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: a free one; the campaign keys pages by id, not URL)")
    parser.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT_S, metavar="S",
                        help=f"seconds a connection may take to send its request (default {IDLE_TIMEOUT_S:g})")


def run(args: argparse.Namespace) -> int:
    from ..annotation.serve import DatasetServer, Limits, ServeError

    if not 0 <= args.port <= 65535:
        print("centrum serve: --port must be 0..65535", file=sys.stderr)
        return 2
    try:
        server = DatasetServer(args.dir, args.port, Limits(idle_timeout_s=args.idle_timeout))
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
