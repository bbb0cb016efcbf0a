"""List the algorithms, whether they are available, and their parameters with defaults."""

from __future__ import annotations

import argparse
import json

from .. import algorithms
from ..core.result import json_default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    info = algorithms.describe()
    if args.json:
        print(json.dumps(info, indent=2, default=json_default))
        return 0
    for entry in info:
        mark = "" if entry["available"] else "  (not available)"
        default = "  [default]" if entry["name"] == algorithms.DEFAULT_ALGORITHM else ""
        print(f"{entry['name']}{default}{mark}: {entry['summary']}")
        for k, v in entry["params"].items():  # type: ignore[union-attr]
            print(f"    {k} = {v!r}")
    return 0
