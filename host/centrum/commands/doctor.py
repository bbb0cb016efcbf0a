"""Check, for each browser, that its native-messaging host manifest is found, names a launcher that starts and
answers a ping, and lets the extension connect: the first thing to run when the button says the host is missing.

Exit status: 0 when every browser that has a manifest passes every check and at least one has a manifest, else 1."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PING_TIMEOUT_S = 20.0


@dataclass
class Check:
    browser: str
    manifest: Path
    found: bool = False
    problems: list[str] = field(default_factory=list)
    host_version: str | None = None

    @property
    def ok(self) -> bool:
        return self.found and not self.problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..hostinstall import BROWSERS, EXTENSION_ID, GECKO_ID

    parser.add_argument("--browser", default="all", choices=[*BROWSERS, "all"], help="browser family (default: all)")
    parser.add_argument("--user-data-dir", type=Path, default=None,
                        help="Chromium-family profile started with --user-data-dir (its NativeMessagingHosts/)")
    parser.add_argument("--extension-id", default=EXTENSION_ID, help="Chromium-family extension id expected")
    parser.add_argument("--gecko-id", default=GECKO_ID, help="Firefox extension id expected")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def ping_launcher(launcher: Path, timeout: float = PING_TIMEOUT_S) -> dict[str, Any]:
    """Start ``launcher`` as a browser would (no arguments but the caller's origin) and ping it over the real
    native-messaging framing; returns the ping answer's ``result`` or raises RuntimeError saying what went wrong."""
    import io

    from ..framing import FrameError, encode_message, read_response

    request = encode_message({"v": 1, "id": "doctor", "type": "ping"})
    try:
        proc = subprocess.run([str(launcher), "chrome-extension://doctor/"], input=request, capture_output=True,
                              timeout=timeout, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"launcher did not answer a ping within {timeout:.0f} s") from None
    except OSError as e:
        raise RuntimeError(f"launcher cannot be started: {e}") from None
    try:
        answer, _ = read_response(io.BytesIO(proc.stdout))
    except (FrameError, ValueError, KeyError, TypeError):
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"launcher exited {proc.returncode} without a native-messaging answer"
                           + (f": {err[-1]}" if err else "")) from None
    if not isinstance(answer, dict) or answer.get("status") != "ok" or not isinstance(answer.get("result"), dict):
        error = answer.get("error") if isinstance(answer, dict) else None
        raise RuntimeError(f"launcher answered an error: {error or answer!r:.300}")
    return answer["result"]


def check_browser(browser: str, user_data_dir: Path | None, extension_id: str, gecko_id: str) -> Check:
    from .. import __version__
    from ..hostinstall import HOST_NAME, manifest_dir

    c = Check(browser, manifest_dir(browser, user_data_dir) / f"{HOST_NAME}.json")
    if not c.manifest.exists():
        return c
    c.found = True
    try:
        manifest = json.loads(c.manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        c.problems.append(f"manifest unreadable: {e}")
        return c
    if not isinstance(manifest, dict):
        c.problems.append("manifest is not a JSON object")
        return c
    if manifest.get("name") != HOST_NAME:
        c.problems.append(f"manifest name is {manifest.get('name')!r}, expected {HOST_NAME!r}")
    if manifest.get("type") != "stdio":
        c.problems.append("manifest type is not 'stdio'")
    if browser == "firefox":
        allowed = manifest.get("allowed_extensions") or []
        if gecko_id not in allowed:
            c.problems.append(f"extension {gecko_id} is not in allowed_extensions {allowed}")
    else:
        allowed = manifest.get("allowed_origins") or []
        origin = f"chrome-extension://{extension_id}/"
        if origin not in allowed:
            c.problems.append(f"extension id {extension_id} is not in allowed_origins {allowed}")
    launcher = Path(str(manifest.get("path", "")))
    if not launcher.is_absolute():
        c.problems.append(f"launcher path {str(launcher)!r} is not absolute (browsers refuse relative paths)")
    elif not launcher.exists():
        c.problems.append(f"launcher {launcher} does not exist (run `centrum install-host --browser {browser}`)")
    elif not os.access(launcher, os.X_OK):
        c.problems.append(f"launcher {launcher} is not executable")
    else:
        try:
            result = ping_launcher(launcher)
        except RuntimeError as e:
            c.problems.append(str(e))
        else:
            c.host_version = str(result.get("host"))
            if c.host_version != __version__:
                c.problems.append(f"launcher runs host {c.host_version}, this centrum is {__version__} "
                                  "(run `centrum install-host` again)")
    return c


def check_renderer() -> str:
    """What rendering saved pages runs with: Chromium's sandbox, or why not (SECURITY.md). Informational: a renderer
    without its sandbox still renders, and the browsers' checks decide the exit status."""
    try:
        from ..render import Renderer, RenderError, sandbox_state
    except ImportError as e:  # the render extra is not installed
        return f"renderer: not available ({e})"
    wanted, why = sandbox_state()
    if wanted:
        try:
            with Renderer(timeout_s=10) as r:
                why = r.sandbox_note
        except RenderError as e:
            return f"renderer: Chromium does not start: {e}"
    if why:
        return f"renderer: Chromium sandbox OFF, pages render without it: {why}"
    return "renderer: Chromium sandbox on"


def run(args: argparse.Namespace) -> int:
    from ..hostinstall import expand

    browsers = [b for b in expand(args.browser) if not (args.user_data_dir is not None and b == "firefox")]
    checks = [check_browser(b, args.user_data_dir, args.extension_id, args.gecko_id) for b in browsers]
    if args.json:
        print(json.dumps([{"browser": c.browser, "manifest": str(c.manifest), "found": c.found, "ok": c.ok,
                           "host": c.host_version, "problems": c.problems} for c in checks], indent=2))
    else:
        for c in checks:
            if not c.found:
                print(f"{c.browser}: no host manifest at {c.manifest} (run `centrum install-host --browser "
                      f"{c.browser}`)")
            elif c.ok:
                print(f"{c.browser}: ok (manifest {c.manifest}, host {c.host_version} answers)")
            else:
                print(f"{c.browser}: PROBLEM (manifest {c.manifest})")
                for p in c.problems:
                    print(f"  - {p}")
        print(check_renderer())
    found = [c for c in checks if c.found]
    if not found:
        print("doctor: no browser has the Centrum host installed", file=sys.stderr)
        return 1
    return 0 if all(c.ok for c in found) else 1
