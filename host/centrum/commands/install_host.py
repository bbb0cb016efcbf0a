"""Register the native messaging host with browsers (writes host manifests and a launcher; prints where)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..native.install import BROWSERS, EXTENSION_ID, GECKO_ID

    parser.add_argument("--browser", default="all", choices=[*BROWSERS, "all"], help="browser family (default: all)")
    parser.add_argument("--user-data-dir", type=Path, default=None,
                        help="Chromium-family profile started with --user-data-dir: manifest goes to "
                             "DIR/NativeMessagingHosts/")
    parser.add_argument("--extension-id", default=EXTENSION_ID, help="Chromium-family extension id allowed to "
                        "connect (default: the unpacked extension's fixed id)")
    parser.add_argument("--gecko-id", default=GECKO_ID, help="Firefox extension id allowed to connect")


def run(args: argparse.Namespace) -> int:
    from ..native.install import InstallError, install, windows_commands

    try:
        installed = install(args.browser, args.user_data_dir, args.extension_id, args.gecko_id)
    except (InstallError, OSError) as e:
        print(f"install-host: {e}", file=sys.stderr)
        return 1
    if not installed:
        print("install-host: nothing to install (Firefox has no --user-data-dir)", file=sys.stderr)
        return 1
    print(f"launcher: {installed[0].launcher}")
    for i in installed:
        print(f"{i.browser}: {i.manifest}")
    commands = windows_commands(installed)
    if commands:
        print("Windows reads native hosts from the registry; run (or add the keys by hand):")
        for c in commands:
            print(f"  {c}")
    return 0
