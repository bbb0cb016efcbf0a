"""Run the native-messaging host on stdin/stdout (what the browser starts; see `centrum install-host`)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Browsers append the caller's origin (Chrome) or manifest path + extension id (Firefox); accept and log them.
    parser.add_argument("caller", nargs="*", help="arguments the browser passes (logged only)")
    parser.add_argument("--parent-window", help=argparse.SUPPRESS)  # Chrome on Windows


def run(args: argparse.Namespace) -> int:
    from ..native.nativehost import main

    return main(list(args.caller))
