"""`centrum install-host` / `uninstall-host` against temporary homes and profiles, for every browser family."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from centrum.native import install as hostinstall
from centrum.native.framing import encode_message, read_message
from centrum.native.install import EXTENSION_ID, GECKO_ID, HOST_NAME

REPO = Path(__file__).resolve().parents[2]


def cli(args: list[str], home: Path, centrum_home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "CENTRUM_HOME": str(centrum_home)}
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], env=env, capture_output=True, text=True,
                          timeout=60)


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, centrum_home = tmp_path / "home", tmp_path / "centrum"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CENTRUM_HOME", str(centrum_home))
    return home, centrum_home


@pytest.mark.parametrize("browser", ["chrome", "chromium", "edge", "brave", "firefox"])
def test_install_and_uninstall_each_browser(browser: str, homes: tuple[Path, Path]) -> None:
    home, centrum_home = homes
    out = cli(["install-host", "--browser", browser], home, centrum_home)
    assert out.returncode == 0, out.stderr
    expected_dir = home / hostinstall.LINUX_DIRS[browser]
    manifest_path = expected_dir / f"{HOST_NAME}.json"
    assert str(manifest_path) in out.stdout  # prints where
    manifest = json.loads(manifest_path.read_text())
    assert manifest["name"] == HOST_NAME and manifest["type"] == "stdio"
    if browser == "firefox":
        assert manifest["allowed_extensions"] == [GECKO_ID] and "allowed_origins" not in manifest
    else:
        assert manifest["allowed_origins"] == [f"chrome-extension://{EXTENSION_ID}/"]
        assert "allowed_extensions" not in manifest
    launcher = Path(manifest["path"])
    assert launcher.is_absolute() and os.access(launcher, os.X_OK)
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o700  # only this user runs it (issue #20)
    assert launcher.read_text().startswith("#!/bin/sh") and sys.executable in launcher.read_text()

    out = cli(["uninstall-host", "--browser", browser], home, centrum_home)
    assert out.returncode == 0, out.stderr
    assert not manifest_path.exists() and not launcher.exists()
    assert tree(home) == set()  # every folder install created is gone too


def test_launcher_starts_a_working_host(homes: tuple[Path, Path]) -> None:
    home, centrum_home = homes
    installed = hostinstall.install("firefox")
    launcher = installed[0].launcher
    # Browsers start the launcher with their own arguments, from an unrelated working directory.
    proc = subprocess.run([str(launcher), str(installed[0].manifest), GECKO_ID], cwd="/",
                          input=encode_message({"v": 1, "id": "x", "type": "ping"}), capture_output=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    import io

    chunk = read_message(io.BytesIO(proc.stdout))
    assert json.loads(chunk["data"])["result"]["protocol"] == 1
    # CENTRUM_HOME at install time is baked into the launcher: the log is where the installer pointed.
    assert "started" in (centrum_home / "host.log").read_text()


def test_user_data_dir_for_chromium_family(tmp_path: Path, homes: tuple[Path, Path]) -> None:
    home, centrum_home = homes
    profile = tmp_path / "profile"
    profile.mkdir()
    out = cli(["install-host", "--browser", "chromium", "--user-data-dir", str(profile)], home, centrum_home)
    assert out.returncode == 0, out.stderr
    assert tree(profile) == {"NativeMessagingHosts", f"NativeMessagingHosts/{HOST_NAME}.json"}
    assert tree(home) == set()  # nothing in the user's real profile folders
    before = tree(centrum_home)
    out = cli(["install-host", "--browser", "firefox", "--user-data-dir", str(profile)], home, centrum_home)
    assert out.returncode == 1 and "Chromium-family" in out.stderr
    assert tree(centrum_home) == before and tree(home) == set()  # a refused install writes nothing
    out = cli(["uninstall-host", "--browser", "chromium", "--user-data-dir", str(profile)], home, centrum_home)
    assert out.returncode == 0 and tree(profile) == set()


def test_all_browsers_and_partial_uninstall_keeps_shared_launcher(homes: tuple[Path, Path]) -> None:
    home, centrum_home = homes
    installed = hostinstall.install("all")
    assert [i.browser for i in installed] == list(hostinstall.BROWSERS)
    launcher = installed[0].launcher
    assert all(i.launcher == launcher for i in installed)
    removed = hostinstall.uninstall("firefox")
    assert installed[-1].manifest in removed and launcher.exists()  # still used by the Chromium family
    assert not (home / ".mozilla").exists()
    hostinstall.uninstall("all")
    assert not launcher.exists() and tree(home) == set()


def test_uninstall_leaves_folders_it_did_not_create(homes: tuple[Path, Path]) -> None:
    home, _ = homes
    other = home / ".config" / "chromium" / "NativeMessagingHosts" / "com.other.host.json"
    other.parent.mkdir(parents=True)
    other.write_text("{}")
    hostinstall.install("chromium")
    hostinstall.uninstall("chromium")
    assert tree(home) == {".config", ".config/chromium", ".config/chromium/NativeMessagingHosts",
                          ".config/chromium/NativeMessagingHosts/com.other.host.json"}


def test_uninstall_without_install_removes_nothing(homes: tuple[Path, Path]) -> None:
    home, centrum_home = homes
    mine = home / ".config" / "google-chrome" / "NativeMessagingHosts" / f"{HOST_NAME}.json"
    mine.parent.mkdir(parents=True)
    mine.write_text("{}")  # written by someone else: not in the install record
    out = cli(["uninstall-host", "--browser", "chrome"], home, centrum_home)
    assert out.returncode == 0 and "nothing to remove" in out.stdout
    assert mine.exists()


def test_macos_and_windows_locations(tmp_path: Path) -> None:
    assert hostinstall.manifest_dir("chrome", home=tmp_path, platform="macos") == \
        tmp_path / "Library/Application Support/Google/Chrome/NativeMessagingHosts"
    assert hostinstall.manifest_dir("firefox", home=tmp_path, platform="macos") == \
        tmp_path / "Library/Application Support/Mozilla/NativeMessagingHosts"
    assert hostinstall.manifest_dir("brave", home=tmp_path, platform="macos") == \
        tmp_path / "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts"
    installed = [hostinstall.Installed("edge", Path("C:/x/org.centrum.host.json"), Path("C:/x/centrum-host.bat"),
                                       hostinstall.WINDOWS_KEYS["edge"] + "\\" + HOST_NAME)]
    assert hostinstall.windows_commands(installed) == [
        'reg add "HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\org.centrum.host" /ve /t REG_SZ '
        '/d "C:/x/org.centrum.host.json" /f']
    brave = hostinstall.Installed("brave", Path("C:/b.json"), Path("C:/l.bat"),
                                  hostinstall.WINDOWS_KEYS["brave"] + "\\" + HOST_NAME)
    assert [c.split('"')[1] for c in hostinstall.windows_commands([brave])] == [
        "HKCU\\Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts\\org.centrum.host",
        "HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.centrum.host"]


def test_windows_path_is_json_escaped() -> None:
    manifest = hostinstall.render_manifest("chrome", Path("C:\\Users\\a b\\centrum-host.bat"))
    assert manifest["path"] == "C:\\Users\\a b\\centrum-host.bat"


def test_fixed_ids_match_the_extension_manifest() -> None:
    manifest = json.loads((REPO / "extension" / "manifest.json").read_text())
    assert hostinstall.extension_id_from_key(manifest["key"]) == EXTENSION_ID
    assert manifest["browser_specific_settings"]["gecko"]["id"] == GECKO_ID
    assert sorted(manifest["permissions"]) == ["activeTab", "nativeMessaging", "scripting", "storage"]
    assert "host_permissions" not in manifest and "content_scripts" not in manifest
