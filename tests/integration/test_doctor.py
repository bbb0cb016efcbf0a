"""`centrum doctor` as a real subprocess against temporary homes and profiles: every manifest file checked once (a
--user-data-dir profile once, not once per Chromium-family browser), the profile install-host registered found with
or without --user-data-dir, and what it found said (launcher, host version), the install command when missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import centrum
from centrum.native.install import HOST_NAME


def cli(*args: str, home: Path, centrum_home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "CENTRUM_HOME": str(centrum_home)}
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def doctor_json(*args: str, home: Path, centrum_home: Path) -> tuple[int, list[dict[str, Any]]]:
    p = cli("doctor", "--json", *args, home=home, centrum_home=centrum_home)
    return p.returncode, json.loads(p.stdout)


def test_a_profile_is_checked_once_and_found_after_install(tmp_path: Path) -> None:
    home, centrum_home, profile = tmp_path / "home", tmp_path / "centrum", tmp_path / "profile"
    home.mkdir()
    manifest = profile / "NativeMessagingHosts" / f"{HOST_NAME}.json"
    installed = cli("install-host", "--user-data-dir", str(profile), home=home, centrum_home=centrum_home)
    assert installed.returncode == 0, installed.stderr

    # With the profile: that one file once, found and answering, beside each browser's default location (empty).
    rc, checks = doctor_json("--user-data-dir", str(profile), home=home, centrum_home=centrum_home)
    assert rc == 0
    manifests = [c["manifest"] for c in checks]
    assert len(manifests) == len(set(manifests)) == 6  # the profile + chrome, chromium, edge, brave, firefox
    (found,) = [c for c in checks if c["found"]]
    assert found == {"browser": "chromium-family", "profile": str(profile), "manifest": str(manifest),
                     "found": True, "ok": True, "host": centrum.__version__,
                     "launcher": str(centrum_home / "bin" / "centrum-host"), "problems": []}
    assert [c["browser"] for c in checks if not c["found"]] == ["chrome", "chromium", "edge", "brave", "firefox"]

    # Without --user-data-dir, install-host's record leads to the profile all the same.
    rc, checks = doctor_json(home=home, centrum_home=centrum_home)
    assert rc == 0 and [c["manifest"] for c in checks if c["ok"]] == [str(manifest)]

    # Named after the browser asked for; the text report says "ok" once, with what it found.
    p = cli("doctor", "--browser", "chromium", "--user-data-dir", str(profile), home=home, centrum_home=centrum_home)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [line for line in lines if ": ok" in line] == [
        f"chromium: ok in profile {profile} (manifest {manifest}, launcher {centrum_home / 'bin' / 'centrum-host'}, "
        f"host {centrum.__version__} answers)"]
    assert f"chromium: no host manifest at {home / '.config/chromium/NativeMessagingHosts'}" in p.stdout
    assert "chrome:" not in p.stdout and "edge:" not in p.stdout
    # The predictors a host would use: with lleaves (the test environment's fast extra) and a fresh cache, none of
    # the default models is compiled yet, and the report says how to compile them.
    (predictors,) = [line for line in lines if line.startswith("predictors: ")]
    assert predictors.startswith("predictors: compiled by lleaves: none;") and "`centrum models compile`" in predictors


def test_nothing_installed_says_where_it_looked_and_what_to_run(tmp_path: Path) -> None:
    home, centrum_home, profile = tmp_path / "home", tmp_path / "centrum", tmp_path / "profile"
    home.mkdir()
    p = cli("doctor", "--browser", "edge", "--user-data-dir", str(profile), home=home, centrum_home=centrum_home)
    assert p.returncode == 1
    assert (f"edge: no host manifest in profile {profile} at {profile / 'NativeMessagingHosts' / HOST_NAME}.json "
            f"(run `centrum install-host --browser edge --user-data-dir {profile}`)") in p.stdout
    assert p.stderr == f"doctor: no Centrum host manifest found (looked for edge in profile {profile}, edge)\n"
    p = cli("doctor", "--browser", "firefox", "--user-data-dir", str(profile), home=home, centrum_home=centrum_home)
    assert p.returncode == 2 and "Chromium-family profile" in p.stderr


def test_a_broken_profile_manifest_names_its_problem_once(tmp_path: Path) -> None:
    home, centrum_home, profile = tmp_path / "home", tmp_path / "centrum", tmp_path / "profile"
    home.mkdir()
    assert cli("install-host", "--user-data-dir", str(profile), home=home, centrum_home=centrum_home).returncode == 0
    manifest = profile / "NativeMessagingHosts" / f"{HOST_NAME}.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["path"] = str(tmp_path / "gone" / "centrum-host")
    manifest.write_text(json.dumps(data), encoding="utf-8")
    p = cli("doctor", "--user-data-dir", str(profile), home=home, centrum_home=centrum_home)
    assert p.returncode == 1
    assert p.stdout.count("PROBLEM") == 1 and p.stdout.count("does not exist") == 1
    assert f"(run `centrum install-host --browser chromium --user-data-dir {profile}`)" in p.stdout
