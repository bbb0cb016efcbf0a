"""Register the native-messaging host with browsers: host manifests from the package's
``centrum/assets/host-manifests/`` plus a launcher.

The browsers start the host through an executable named in the manifest's ``path``. That launcher pins the absolute
path of the Python that ran ``centrum install-host`` (``python -m centrum.native.nativehost``), so the host runs with
the
same interpreter and packages whatever the browser's environment is. Every file written is recorded in
``$CENTRUM_HOME/installed.json`` so that ``uninstall-host`` removes exactly those files and nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

from ..core.paths import centrum_home, home_is_set

HOST_NAME = "org.centrum.host"
# Chromium-family id, fixed by the public "key" in extension/manifest.json (see extension_id_from_key).
EXTENSION_ID = "ngekkliglbijomphmjkfefphbjfcfjkn"
# Firefox: browser_specific_settings.gecko.id in extension/manifest.json.
GECKO_ID = "centrum@centrum.org"

# Package data (links to the repository's manifest-templates/, copied into the wheel), so that an installed wheel can
# register the host without a source checkout.
TEMPLATES = Path(__file__).resolve().parents[1] / "assets" / "host-manifests"

CHROMIUM_FAMILY = ("chrome", "chromium", "edge", "brave")
BROWSERS = (*CHROMIUM_FAMILY, "firefox")

# Per-user manifest folders (Chrome/Firefox native messaging docs; Edge and Brave follow Chrome's layout).
LINUX_DIRS = {
    "chrome": ".config/google-chrome/NativeMessagingHosts",
    "chromium": ".config/chromium/NativeMessagingHosts",
    "edge": ".config/microsoft-edge/NativeMessagingHosts",
    "brave": ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
    "firefox": ".mozilla/native-messaging-hosts",
}
MACOS_DIRS = {
    "chrome": "Library/Application Support/Google/Chrome/NativeMessagingHosts",
    "chromium": "Library/Application Support/Chromium/NativeMessagingHosts",
    "edge": "Library/Application Support/Microsoft Edge/NativeMessagingHosts",
    "brave": "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
    "firefox": "Library/Application Support/Mozilla/NativeMessagingHosts",
}
# Windows has no manifest folder: a registry key's default value holds the manifest's path.
WINDOWS_KEYS = {
    "chrome": r"HKCU\Software\Google\Chrome\NativeMessagingHosts",
    "chromium": r"HKCU\Software\Chromium\NativeMessagingHosts",
    "edge": r"HKCU\Software\Microsoft\Edge\NativeMessagingHosts",
    "brave": r"HKCU\Software\BraveSoftware\Brave-Browser\NativeMessagingHosts",
    "firefox": r"HKCU\Software\Mozilla\NativeMessagingHosts",
}


class InstallError(RuntimeError):
    pass


@dataclass(frozen=True)
class Installed:
    browser: str
    manifest: Path
    launcher: Path
    registry_key: str | None = None  # Windows: key to point at the manifest


def extension_id_from_key(key_b64: str) -> str:
    """Chromium's extension id: first 32 hex digits of SHA-256 of the DER public key, 0-f mapped to a-p."""
    digest = hashlib.sha256(base64.b64decode(key_b64)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def platform_name() -> str:
    if sys.platform.startswith("win"):
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "linux"


def manifest_dir(browser: str, user_data_dir: Path | None = None, home: Path | None = None,
                 platform: str | None = None) -> Path:
    platform = platform or platform_name()
    if user_data_dir is not None:
        if browser not in CHROMIUM_FAMILY:
            raise InstallError("--user-data-dir applies to Chromium-family browsers; Firefox reads "
                               "$HOME/.mozilla/native-messaging-hosts (set HOME for a test profile)")
        # A Chromium started with --user-data-dir reads host manifests from <dir>/NativeMessagingHosts only.
        return user_data_dir / "NativeMessagingHosts"
    home = home or Path.home()
    if platform == "windows":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return base / "centrum" / "native-messaging-hosts" / browser
    table = MACOS_DIRS if platform == "macos" else LINUX_DIRS
    return home / table[browser]


def render_manifest(browser: str, launcher: Path, extension_id: str = EXTENSION_ID,
                    gecko_id: str = GECKO_ID) -> dict[str, object]:
    template_file = TEMPLATES / ("firefox.json" if browser == "firefox" else "chromium.json")
    if not template_file.exists():
        raise InstallError(f"manifest template missing: {template_file}")

    def esc(s: str) -> str:
        return json.dumps(s)[1:-1]  # JSON-escape (Windows backslashes) without the quotes

    text = Template(template_file.read_text(encoding="utf-8")).substitute(
        HOST_NAME=esc(HOST_NAME), HOST_PATH=esc(str(launcher)), EXTENSION_ID=esc(extension_id),
        GECKO_ID=esc(gecko_id))
    manifest: dict[str, object] = json.loads(text)
    return manifest


def _mkdirs(directory: Path) -> list[str]:
    """mkdir -p that returns the folders it created (deepest last), so uninstall can remove exactly those."""
    missing = []
    d = directory
    while not d.exists():
        missing.append(d)
        d = d.parent
    directory.mkdir(parents=True, exist_ok=True)
    return [str(m) for m in reversed(missing)]


def write_launcher(directory: Path, platform: str | None = None) -> Path:
    """An executable that runs this Python on ``centrum.native.nativehost`` (browsers cannot pass interpreter args)."""
    platform = platform or platform_name()
    # Absolute: a relative CENTRUM_HOME would be read against whatever folder the browser starts the launcher in.
    home_env = str(centrum_home()) if home_is_set() else None
    if platform == "windows":
        path = directory / "centrum-host.bat"
        lines = ["@echo off"]
        if home_env:
            lines.append(f'set "CENTRUM_HOME={home_env}"')
        lines.append(f'"{sys.executable}" -m centrum.native.nativehost %*')
        path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
        return path
    path = directory / "centrum-host"
    lines = ["#!/bin/sh", "# Written by `centrum install-host`: the browser starts this to talk to Centrum."]
    if home_env:
        # The browser does not pass our environment on; keep logs where the installer pointed them.
        lines.append(f"CENTRUM_HOME={shlex.quote(home_env)}; export CENTRUM_HOME")
    lines.append(f"exec {shlex.quote(sys.executable)} -m centrum.native.nativehost \"$@\"")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(0o700)  # only this user's browsers start it; chmod, unlike the create mode, ignores the umask
    return path


def _record_path() -> Path:
    return centrum_home() / "installed.json"


def _load_record() -> list[dict[str, Any]]:
    try:
        data = json.loads(_record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def _save_record(entries: list[dict[str, Any]]) -> None:
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")


def installed_manifests() -> list[Path]:
    """The manifests install() wrote and recorded, those in --user-data-dir profiles included (``centrum doctor``
    finds a profile's host through them)."""
    return [Path(e["manifest"]) for e in _load_record() if isinstance(e.get("manifest"), str)]


def expand(browser: str) -> tuple[str, ...]:
    if browser == "all":
        return BROWSERS
    if browser not in BROWSERS:
        raise InstallError(f"unknown browser {browser!r} (choose from {', '.join(BROWSERS)}, all)")
    return (browser,)


def install(browser: str, user_data_dir: Path | None = None, extension_id: str = EXTENSION_ID,
            gecko_id: str = GECKO_ID, launcher_dir: Path | None = None) -> list[Installed]:
    platform = platform_name()
    if user_data_dir is not None and browser == "firefox":
        manifest_dir(browser, user_data_dir)  # raises the explanation
    browsers = [b for b in expand(browser) if not (user_data_dir is not None and b == "firefox")]
    launcher_parent = launcher_dir or centrum_home() / "bin"
    launcher_dirs = _mkdirs(launcher_parent)
    launcher = write_launcher(launcher_parent, platform)
    record = _load_record()
    # A launcher already recorded keeps the folders recorded with it.
    launcher_dirs = next((e.get("launcher_dirs", []) for e in record if e.get("launcher") == str(launcher)),
                         launcher_dirs)
    out = []
    for b in browsers:  # "all" with --user-data-dir: only the Chromium family has one
        directory = manifest_dir(b, user_data_dir)
        created = _mkdirs(directory)
        manifest_path = directory / f"{HOST_NAME}.json"
        manifest = render_manifest(b, launcher, extension_id, gecko_id)
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        key = f"{WINDOWS_KEYS[b]}\\{HOST_NAME}" if platform == "windows" else None
        out.append(Installed(b, manifest_path, launcher, key))
        previous = next((e for e in record if e.get("manifest") == str(manifest_path)), None)
        entry = {"browser": b, "manifest": str(manifest_path), "launcher": str(launcher),
                 "dirs": previous.get("dirs", []) if previous else created, "launcher_dirs": launcher_dirs}
        record = [e for e in record if e is not previous] + [entry]
    _save_record(record)
    return out


def uninstall(browser: str, user_data_dir: Path | None = None) -> list[Path]:
    """Remove the manifests install() wrote for ``browser``, the folders it created for them (when empty), and the
    launcher once no remaining manifest uses it."""
    targets = {str(manifest_dir(b, user_data_dir) / f"{HOST_NAME}.json")
               for b in expand(browser) if not (user_data_dir is not None and b == "firefox")}
    record = _load_record()
    removed: list[Path] = []
    keep = [e for e in record if e.get("manifest") not in targets]
    # Folders are shared (~/.config made for one browser holds the others): pass every recorded folder, so the
    # last uninstall removes each one that became empty.
    all_dirs = [d for e in record for d in e.get("dirs", [])]
    for e in record:
        if e.get("manifest") in targets:
            _remove(Path(e["manifest"]), all_dirs, removed)
    still_used = {e.get("launcher") for e in keep}
    for e in record:
        launcher = e.get("launcher")
        if launcher and launcher not in still_used:
            still_used.add(launcher)  # once
            _remove(Path(launcher), e.get("launcher_dirs", []), removed)
    _save_record(keep)
    return removed


def _remove(path: Path, created_dirs: list[str], removed: list[Path]) -> None:
    if path.exists():
        path.unlink()
        removed.append(path)
    # Deepest first; a folder that is not empty (another browser's manifest, someone else's file) stays.
    for d in sorted(created_dirs, key=lambda x: len(Path(x).parts), reverse=True):
        try:
            Path(d).rmdir()
        except OSError:
            continue
        removed.append(Path(d))


# Chromium derivatives on Windows have been seen to read Chrome's key instead of their own (Vivaldi does; reports
# for Brave differ): for Brave, register under both.
WINDOWS_EXTRA_KEYS = {"brave": WINDOWS_KEYS["chrome"]}


def windows_commands(installed: list[Installed]) -> list[str]:
    """``reg add`` lines that register the manifests on Windows (what Chrome/Firefox read there)."""
    out = []
    for i in installed:
        if not i.registry_key:
            continue
        keys = [i.registry_key]
        if i.browser in WINDOWS_EXTRA_KEYS:
            keys.append(f"{WINDOWS_EXTRA_KEYS[i.browser]}\\{HOST_NAME}")
        out += [f'reg add "{k}" /ve /t REG_SZ /d "{i.manifest}" /f' for k in keys]
    return out
