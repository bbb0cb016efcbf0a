"""Remove the native messaging host registration written by `centrum install-host` (and nothing else)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..native.install import BROWSERS

    parser.add_argument("--browser", default="all", choices=[*BROWSERS, "all"], help="browser family (default: all)")
    parser.add_argument("--user-data-dir", type=Path, default=None,
                        help="the --user-data-dir given to install-host")


def run(args: argparse.Namespace) -> int:
    from ..native.install import HOST_NAME, InstallError, platform_name, uninstall

    try:
        removed = uninstall(args.browser, args.user_data_dir)
    except (InstallError, OSError) as e:
        print(f"uninstall-host: {e}", file=sys.stderr)
        return 1
    for p in removed:
        print(f"removed {p}")
    if not removed:
        print("nothing to remove (install-host has not written anything for that browser)")
    if platform_name() == "windows":
        print(f"also delete the registry keys ...\\NativeMessagingHosts\\{HOST_NAME} (reg delete KEY /f)")
    return 0
