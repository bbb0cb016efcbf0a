"""`centrum models install NAME` restores a former model that the package no longer ships: fetched from a folder or
an address (here a real HTTP server on 127.0.0.1 serving the repository's models/), checked against the size and
SHA-256 the package lists, then usable by name; a file that differs is refused."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def centrum(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CENTRUM_HOME": str(home)})


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    folder = tmp_path / "release"
    folder.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", folder
    finally:
        server.shutdown()
        server.server_close()


def test_the_package_ships_the_default_models_only() -> None:
    shipped = sorted(p.name for p in (resources.files("centrum") / "weights").iterdir() if p.name.endswith(".txt"))
    assert shipped == ["ensemble-v15-blocks.lgb.txt", "ensemble-v15.lgb.txt", "source-v4-context2.lgb.txt",
                       "source-v4.lgb.txt"]


def test_a_former_model_is_restored_by_name_and_a_changed_file_refused(tmp_path: Path,
                                                                        served: tuple[str, Path]) -> None:
    url, folder = served
    home = tmp_path / "home"
    listed = centrum(home, "models", "list")
    assert "ensemble-v11\tformer\tcentrum models install ensemble-v11" in listed.stdout.splitlines(), listed.stdout
    # Not in the package: unusable by name until installed.
    ask = [sys.executable, "-c", "from centrum.algorithms import ensemble as E; print(E.load_model('ensemble-v11'))"]
    before = subprocess.run(ask, capture_output=True, text=True, env={**os.environ, "CENTRUM_HOME": str(home)})
    assert before.returncode != 0 and "ensemble-v11" in before.stderr
    # A server with a tampered copy: refused, nothing installed.
    good = (REPO / "models" / "ensemble-v11.lgb.txt").read_bytes()
    (folder / "ensemble-v11.lgb.txt").write_bytes(good.replace(b"\n", b"\n ", 1))
    refused = centrum(home, "models", "install", "ensemble-v11", "--from", url)
    assert refused.returncode == 2 and "size or SHA-256 differ" in refused.stderr, refused.stderr
    assert not (home / "models" / "ensemble-v11.lgb.txt").exists()
    # The release's own file: installed, listed, loaded by name.
    (folder / "ensemble-v11.lgb.txt").write_bytes(good)
    done = centrum(home, "models", "install", "ensemble-v11", "--from", url)
    assert done.returncode == 0, done.stderr
    assert (home / "models" / "ensemble-v11.lgb.txt").read_bytes() == good
    after = subprocess.run(ask, capture_output=True, text=True, env={**os.environ, "CENTRUM_HOME": str(home)})
    assert after.returncode == 0, after.stderr
    assert "ensemble-v11\tinstalled" in centrum(home, "models", "list").stdout


def test_without_a_source_the_message_says_where_to_find_them(tmp_path: Path) -> None:
    out = centrum(tmp_path / "home", "models", "install", "ensemble-v9", "--from", str(tmp_path / "nowhere"))
    assert out.returncode == 2 and "cannot fetch ensemble-v9.lgb.txt" in out.stderr, out.stderr
