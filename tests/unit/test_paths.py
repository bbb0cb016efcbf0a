"""centrum.core.paths: the data and cache folders, and private files made 0700/0600 whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from centrum.core import paths


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_homes_default_env_and_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.delenv("CENTRUM_HOME", raising=False)
    monkeypatch.delenv("CENTRUM_CACHE", raising=False)
    assert paths.centrum_home() == tmp_path / "h" / ".local" / "share" / "centrum"
    assert paths.cache_root() == tmp_path / "h" / ".cache" / "centrum"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CENTRUM_HOME", "rel/../data")
    monkeypatch.setenv("CENTRUM_CACHE", "cache")
    # A relative folder is made absolute against the working directory at the time it is read.
    assert paths.centrum_home() == tmp_path / "data"
    assert paths.cache_root() == tmp_path / "cache"
    assert not (tmp_path / "data").exists()  # reading the path creates nothing


def test_private_dir_and_files_under_umask_022(tmp_path: Path, umask022: None) -> None:
    d = paths.private_dir(tmp_path / "a" / "b")
    assert mode(d) == 0o700
    assert mode(tmp_path / "a") == 0o755  # parents keep the umask's mode: only the data folder is ours
    f = paths.private_file(d / "x.log")
    assert mode(f) == 0o600 and f.read_bytes() == b""
    f.write_text("kept")
    f.chmod(0o644)
    paths.private_file(f)
    assert mode(f) == 0o600 and f.read_text() == "kept"  # an old file is closed, never truncated
    wal = d / "x-wal"
    wal.write_text("w")
    assert mode(wal) == 0o644
    paths.make_private(wal)
    paths.make_private(d / "missing")  # nothing to do, no error
    assert mode(wal) == 0o600 and not (d / "missing").exists()


def test_existing_folders_are_tightened_only_when_asked_and_safe(tmp_path: Path, umask022: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / "old"
    old.mkdir()
    assert mode(old) == 0o755
    paths.private_dir(old)
    assert mode(old) == 0o755  # a folder the user gave (e.g. the parent of --db) is not changed
    monkeypatch.setenv("CENTRUM_HOME", str(old))
    assert paths.data_dir() == old and mode(old) == 0o700  # the data folder of an older install is closed
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("CENTRUM_HOME", str(shared))
    paths.data_dir()
    assert mode(shared) == 0o1777  # a sticky shared folder (like /tmp) is never closed


def test_a_folder_in_place_of_a_private_file_stays_a_folder(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    paths.make_private(tmp_path / "db")
    assert (tmp_path / "db").is_dir() and mode(tmp_path / "db") & 0o700 == 0o700
    with pytest.raises(OSError):
        paths.private_file(tmp_path / "no" / "such" / "file")


def test_atomic_path_replaces_whole_files_only(tmp_path: Path) -> None:
    from centrum.core.paths import atomic_path

    final = tmp_path / "sub" / "entry.parquet"
    with atomic_path(final) as tmp:
        assert tmp.parent == final.parent and tmp.name.startswith(".entry.parquet.") and not final.exists()
        tmp.write_text("first")
    assert final.read_text() == "first"
    # A write that fails half way leaves the old file and no temporary behind, and the error goes on.
    with pytest.raises(RuntimeError), atomic_path(final) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert final.read_text() == "first" and sorted(p.name for p in final.parent.iterdir()) == ["entry.parquet"]
    # Two writers of the same entry never share a temporary file.
    with atomic_path(final) as a, atomic_path(final) as b:
        assert a != b
        a.write_text("a")
        b.write_text("b")
    assert final.read_text() == "a" and sorted(p.name for p in final.parent.iterdir()) == ["entry.parquet"]


def test_is_private_dir_only_for_our_closed_folders(tmp_path: Path) -> None:
    folder = paths.private_dir(tmp_path / "compiled")
    assert paths.is_private_dir(folder)
    os.chmod(folder, 0o750)  # another user of the group could have put a file there
    assert not paths.is_private_dir(folder)
    os.chmod(folder, 0o700)
    (folder / "file").write_text("x")
    assert not paths.is_private_dir(folder / "file") and not paths.is_private_dir(tmp_path / "missing")
    link = tmp_path / "link"
    link.symlink_to(folder)
    assert paths.is_private_dir(link)  # the folder it names is what is read
    if os.getuid() == 0:  # root can hand a folder to another user: one it does not own is not trusted
        os.chown(folder, 65534, -1)
        assert not paths.is_private_dir(folder)
