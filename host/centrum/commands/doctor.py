"""Check, for each browser, that its native-messaging host manifest is found, names a launcher that starts and
answers a ping, and lets the extension connect: the first thing to run when the button says the host is missing.

Each manifest file is checked once: every browser's default location, the Chromium profile given with
--user-data-dir (whichever Chromium-family browser runs it reads DIR/NativeMessagingHosts), and the profiles
`centrum install-host --user-data-dir` recorded in $CENTRUM_HOME/installed.json.

Exit status: 0 when every manifest found passes every check and at least one is found, else 1."""

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
    browser: str  # a browser, or "chromium-family" for a profile any of them may run
    manifest: Path
    found: bool = False
    problems: list[str] = field(default_factory=list)
    host_version: str | None = None
    profile: Path | None = None  # the --user-data-dir profile whose manifest this is (None: the default location)
    launcher: Path | None = None

    @property
    def ok(self) -> bool:
        return self.found and not self.problems

    @property
    def where(self) -> str:
        return f" in profile {self.profile}" if self.profile is not None else ""

    def install_command(self) -> str:
        family = "chromium" if self.browser == "chromium-family" else self.browser
        profile = f" --user-data-dir {self.profile}" if self.profile is not None else ""
        return f"centrum install-host --browser {family}{profile}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..native.install import BROWSERS, EXTENSION_ID, GECKO_ID

    parser.add_argument("--browser", default="all", choices=[*BROWSERS, "all"], help="browser family (default: all)")
    parser.add_argument("--user-data-dir", type=Path, default=None,
                        help="Chromium-family profile started with --user-data-dir (its NativeMessagingHosts/)")
    parser.add_argument("--extension-id", default=EXTENSION_ID, help="Chromium-family extension id expected")
    parser.add_argument("--gecko-id", default=GECKO_ID, help="Firefox extension id expected")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


# The host's module before the package's layout by data flow (0.1.0 until #41): a launcher written then cannot start.
OLD_HOST_MODULE = b"-m centrum.nativehost"


def _old_layout_hint(launcher: Path, c: Check) -> str:
    try:
        old = OLD_HOST_MODULE in launcher.read_bytes()[:4096]
    except OSError:
        return ""
    return f" (the launcher runs the host's former module: run `{c.install_command()}` again)" if old else ""


def ping_launcher(launcher: Path, timeout: float = PING_TIMEOUT_S) -> dict[str, Any]:
    """Start ``launcher`` as a browser would (no arguments but the caller's origin) and ping it over the real
    native-messaging framing; returns the ping answer's ``result`` or raises RuntimeError saying what went wrong."""
    import io

    from ..native.framing import FrameError, encode_message, read_response

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


def targets(browser: str, user_data_dir: Path | None) -> list[Check]:
    """What to check, each manifest file once: the given profile first, then each browser's default location, then
    the profiles install-host recorded."""
    from ..native.install import CHROMIUM_FAMILY, HOST_NAME, expand, installed_manifests, manifest_dir

    browsers = expand(browser)
    out: list[Check] = []
    seen: set[Path] = set()

    def add(c: Check) -> None:
        key = Path(os.path.abspath(c.manifest))
        if key not in seen:
            seen.add(key)
            out.append(c)

    # A profile is read by whichever Chromium-family browser was started with it: named after the browser asked
    # for, when one was.
    family = browsers[0] if len(browsers) == 1 and browsers[0] in CHROMIUM_FAMILY else "chromium-family"
    if user_data_dir is not None:
        add(Check(family, manifest_dir("chromium", user_data_dir) / f"{HOST_NAME}.json", profile=user_data_dir))
    defaults = {b: manifest_dir(b) / f"{HOST_NAME}.json" for b in expand("all")}
    for b in browsers:
        add(Check(b, defaults[b]))
    if any(b in CHROMIUM_FAMILY for b in browsers):
        default_paths = {Path(os.path.abspath(m)) for m in defaults.values()}
        for m in installed_manifests():
            if Path(os.path.abspath(m)) not in default_paths and m.parent.name == "NativeMessagingHosts":
                add(Check(family, m, profile=m.parent.parent))
    return out


def check_manifest(c: Check, extension_id: str, gecko_id: str) -> Check:
    """Fill ``c`` in: is its manifest there, well formed, allowing the extension, naming a launcher that answers."""
    from ..core.version import __version__
    from ..native.install import HOST_NAME

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
    if c.browser == "firefox":
        allowed = manifest.get("allowed_extensions") or []
        if gecko_id not in allowed:
            c.problems.append(f"extension {gecko_id} is not in allowed_extensions {allowed}")
    else:
        allowed = manifest.get("allowed_origins") or []
        origin = f"chrome-extension://{extension_id}/"
        if origin not in allowed:
            c.problems.append(f"extension id {extension_id} is not in allowed_origins {allowed}")
    launcher = c.launcher = Path(str(manifest.get("path", "")))
    if not launcher.is_absolute():
        c.problems.append(f"launcher path {str(launcher)!r} is not absolute (browsers refuse relative paths)")
    elif not launcher.exists():
        c.problems.append(f"launcher {launcher} does not exist (run `{c.install_command()}`)")
    elif not os.access(launcher, os.X_OK):
        c.problems.append(f"launcher {launcher} is not executable")
    else:
        try:
            result = ping_launcher(launcher)
        except RuntimeError as e:
            c.problems.append(str(e) + _old_layout_hint(launcher, c))
        else:
            c.host_version = str(result.get("host"))
            if c.host_version != __version__:
                c.problems.append(f"launcher runs host {c.host_version}, this centrum is {__version__} "
                                  f"(run `{c.install_command()}` again)")
    return c


def check_renderer() -> str:
    """What rendering saved pages runs with: Chromium's sandbox, or why not (SECURITY.md). Informational: a renderer
    without its sandbox still renders, and the browsers' checks decide the exit status."""
    try:
        from ..core.render import Renderer, RenderError, sandbox_state
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
    from ..algorithms import compile_defaults
    from ..native.install import InstallError

    if args.user_data_dir is not None and args.browser == "firefox":
        print("doctor: --user-data-dir is a Chromium-family profile; Firefox reads "
              "$HOME/.mozilla/native-messaging-hosts", file=sys.stderr)
        return 2
    try:
        checks = [check_manifest(c, args.extension_id, args.gecko_id) for c in targets(args.browser,
                                                                                      args.user_data_dir)]
    except InstallError as e:
        print(f"doctor: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([{"browser": c.browser, "profile": None if c.profile is None else str(c.profile),
                           "manifest": str(c.manifest), "found": c.found, "ok": c.ok, "host": c.host_version,
                           "launcher": None if c.launcher is None else str(c.launcher), "problems": c.problems}
                          for c in checks], indent=2))
    else:
        for c in checks:
            if not c.found:
                print(f"{c.browser}: no host manifest{c.where} at {c.manifest} (run `{c.install_command()}`)")
            elif c.ok:
                print(f"{c.browser}: ok{c.where} (manifest {c.manifest}, launcher {c.launcher}, host "
                      f"{c.host_version} answers)")
            else:
                print(f"{c.browser}: PROBLEM{c.where} (manifest {c.manifest})")
                for p in c.problems:
                    print(f"  - {p}")
        print(check_renderer())
        print(f"predictors: {compile_defaults.describe()}")
    found = [c for c in checks if c.found]
    if not found:
        looked = ", ".join(f"{c.browser}{c.where}" for c in checks)
        print(f"doctor: no Centrum host manifest found (looked for {looked})", file=sys.stderr)
        return 1
    return 0 if all(c.ok for c in found) else 1
