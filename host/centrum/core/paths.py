"""Where Centrum keeps its files, and how private files are made: the one place for these rules.

``$CENTRUM_HOME`` (default ``~/.local/share/centrum``) is the host's data folder: the label database, ``host.log``,
the launcher ``install-host`` writes. It holds what an annotator saved from the pages they read, so it is private
to the user: the folder 0700, the files in it 0600, whatever the umask. ``$CENTRUM_CACHE`` (default
``~/.cache/centrum``) holds rendered snapshots and downloaded peer code: shareable, left to the umask.

Both are made absolute when they are read: a relative ``CENTRUM_HOME`` would otherwise be baked as a relative path
into the launcher and the host manifests (which the browsers reject) and would move with the working directory.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def centrum_home() -> Path:
    """The host's data folder: ``$CENTRUM_HOME`` or ``~/.local/share/centrum``, absolute. Not created here."""
    raw = os.environ.get("CENTRUM_HOME")
    return Path(os.path.abspath(raw if raw else Path.home() / ".local" / "share" / "centrum"))


def home_is_set() -> bool:
    """Whether ``$CENTRUM_HOME`` is set (the launcher then passes it on to the host)."""
    return bool(os.environ.get("CENTRUM_HOME"))


def chromium_override() -> str | None:
    """``$CENTRUM_CHROMIUM``: the Chromium binary to use instead of the system's, when set."""
    return os.environ.get("CENTRUM_CHROMIUM") or None


def collector_override() -> Path | None:
    """``$CENTRUM_COLLECTOR``: the collector script to inject instead of the package's copy, when set."""
    raw = os.environ.get("CENTRUM_COLLECTOR")
    return Path(raw) if raw else None


def cache_root() -> Path:
    """Cache folder (snapshots, peer code): ``$CENTRUM_CACHE`` or ``~/.cache/centrum``, absolute."""
    raw = os.environ.get("CENTRUM_CACHE")
    return Path(os.path.abspath(raw if raw else Path.home() / ".cache" / "centrum"))


def private_dir(path: Path, *, tighten: bool = False) -> Path:
    """``mkdir -p path`` where ``path`` itself ends up 0700 whatever the umask; missing parents get the default mode.

    A folder this call creates is always chmod-ed (``mkdir(mode=)`` is filtered by the umask, chmod is not).
    ``tighten=True`` also closes an existing folder (the data folder of an older install was 0755), but never one
    that belongs to someone else or is sticky (a shared folder such as /tmp that CENTRUM_HOME was pointed at):
    closing those would break other users, and chmod there would fail anyway unless we are root.
    """
    existed = path.is_dir()
    path.mkdir(parents=True, exist_ok=True)
    st = path.stat()
    if stat.S_IMODE(st.st_mode) == PRIVATE_DIR_MODE:
        return path
    if not existed or (tighten and _ours(st) and not st.st_mode & stat.S_ISVTX):
        os.chmod(path, PRIVATE_DIR_MODE)
    return path


def data_dir() -> Path:
    """The data folder, created or tightened to 0700 (see :func:`private_dir`)."""
    return private_dir(centrum_home(), tighten=True)


def private_file(path: Path) -> Path:
    """Create ``path`` if missing and make it 0600 whatever the umask; the contents are left alone.

    Used before a library opens the file (``logging.FileHandler``, SQLite), so the file never exists with a wider
    mode. An existing file of another user is left as it is (we could not chmod it; reading it is still allowed).
    """
    try:
        # O_EXCL: created here with 0600 (less the umask, which chmod below undoes); never follows a symlink.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    except FileExistsError:
        pass
    make_private(path)
    return path


def make_private(path: Path) -> None:
    """chmod an existing file of ours to 0600 (files a library created itself, e.g. SQLite's -wal/-shm)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    # Regular files only: a folder where the database should be stays a folder (SQLite then reports it).
    if stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) != PRIVATE_FILE_MODE and _ours(st):
        os.chmod(path, PRIVATE_FILE_MODE)


def is_private_dir(path: Path) -> bool:
    """``path`` is a folder of this user, closed to everyone else (0700): nobody else can have put a file there."""
    try:
        st = path.stat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and _ours(st) and stat.S_IMODE(st.st_mode) == PRIVATE_DIR_MODE


def _ours(st: os.stat_result) -> bool:
    getuid = getattr(os, "getuid", None)
    return getuid is None or st.st_uid == getuid()


@contextmanager
def atomic_path(final: Path) -> Iterator[Path]:
    """A temporary path beside ``final`` to write to; on success it replaces ``final`` in one step (``os.replace``),
    on any error it is removed and the error goes on. So a reader, a resumed run or a worker killed mid-write never
    sees half a file. The name starts with a dot (folder readers such as pyarrow's datasets and ``*.parquet`` globs
    skip it) and is unique, so concurrent writers of the same entry never share one."""
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
