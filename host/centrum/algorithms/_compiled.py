"""LightGBM models compiled to machine code by lleaves (the ``fast`` extra), for the models that score many rows a
page: the ensemble's block filter and the source-only model's two stages.

A compiled model adds its trees' outputs one tree at a time for every row (``fblocksize=1``), in tree order from 0,
as LightGBM's predictor does, so its scores are LightGBM's doubles (``tests/unit/test_compiled.py``); lleaves' default
blocking sums the trees in blocks and differs in the last bit. The candidate scorer is left to LightGBM or
:mod:`._trees`: it scores a few dozen candidates a page, and its 1,500 trees take minutes to compile.

Compiling takes seconds per model, so a press never compiles: ``centrum models compile`` does, and the native host
starts it in a separate low-priority process when it warms up and finds a model not compiled yet
(:mod:`.compile_defaults`; ``CENTRUM_COMPILE=off`` turns that off). The files live in ``$CENTRUM_CACHE/compiled``,
shared by every host of the user whatever its data folder, named by a hash of the model's text, the compiler's
versions and the CPU they were compiled for. They are code the process loads, so that folder is made 0700 and a
folder that is not the user's, or that others may open, is not loaded from.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..core.paths import PRIVATE_DIR_MODE, cache_root, private_dir
from ._trees import K_ZERO

log = logging.getLogger(__name__)

Predictor = Callable[[np.ndarray], np.ndarray]
# Raised by :func:`reload` when a compilation has ended: a model that found no compiled file looks again.
generation = 0


def reload() -> None:
    global generation
    generation += 1


def available() -> bool:
    """Whether lleaves is installed (the ``fast`` extra)."""
    return importlib.util.find_spec("lleaves") is not None


def folder() -> Path:
    return cache_root() / "compiled"


def _trusted(path: Path) -> bool:
    """The folder is the user's and closed to others (0700): nobody else could have put code there."""
    try:
        st = path.stat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == PRIVATE_DIR_MODE


def background_allowed() -> bool:
    """Whether the host may compile in the background (``CENTRUM_COMPILE=off`` says no)."""
    return os.environ.get("CENTRUM_COMPILE", "").strip().lower() not in ("off", "0", "no", "false")


@functools.cache
def _compiler() -> str:
    """The compiler's versions and the CPU it compiles for (a file compiled elsewhere may not run here)."""
    import importlib.metadata

    import llvmlite
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    target = f"{llvm.get_host_cpu_name()} {llvm.get_host_cpu_features().flatten()}"
    return f"lleaves {importlib.metadata.version('lleaves')} llvmlite {llvmlite.__version__} {target}"


def _key(text: str) -> str:
    return hashlib.sha256(f"{text}\0{_compiler()}".encode()).hexdigest()[:40]


def _paths(text: str) -> tuple[Path, Path]:
    key = _key(text)
    return folder() / f"{key}.lgb.txt", folder() / f"{key}.so"


def load(text: str) -> Predictor | None:
    """The compiled predictor of the model ``text`` when it has been compiled on this machine, else None (also when
    lleaves is not installed, or the file does not load: the caller then predicts as without it)."""
    if not available():
        return None
    try:
        model_file, binary = _paths(text)
        if not (model_file.is_file() and binary.is_file()):
            return None
        if not _trusted(folder()):
            log.warning("not loading compiled models from %s: the folder is not yours alone (0700)", folder())
            return None
        import lleaves

        model = lleaves.Model(model_file=str(model_file))
        model.compile(cache=str(binary), fblocksize=1)
        log.info("loaded compiled model %s", binary.name)
    except Exception:  # noqa: BLE001 - a compiled model is an optimisation; the caller's predictor stays exact
        log.warning("compiled model %s did not load", binary if "binary" in locals() else "?", exc_info=True)
        return None

    def predict(X: np.ndarray) -> np.ndarray:
        # LightGBM reads a value of magnitude at most kZeroThreshold as 0 (it keeps rows as sparse pairs); lleaves
        # compares the value itself.
        X = np.asarray(X, dtype=np.float64)
        X = np.where(np.abs(X) <= K_ZERO, 0.0, X)
        return np.asarray(model.predict(X, n_jobs=1))

    return predict


def is_compiled(text: str) -> bool:
    return all(path.is_file() for path in _paths(text))


def compile_text(text: str) -> Path:
    """Compile the model ``text`` into the private folder (once: an existing file is kept) and return the binary's
    path. Written under temporary names and renamed, so a process that loads meanwhile sees a whole file or none."""
    import lleaves

    model_file, binary = _paths(text)
    private_dir(folder(), tighten=True)
    if is_compiled(text):
        return binary
    with tempfile.TemporaryDirectory(dir=folder(), prefix=".compiling-") as tmp:
        tmp_model, tmp_binary = Path(tmp) / model_file.name, Path(tmp) / binary.name
        tmp_model.write_text(text, encoding="utf-8")
        lleaves.Model(model_file=str(tmp_model)).compile(cache=str(tmp_binary), fblocksize=1)
        os.replace(tmp_model, model_file)
        os.replace(tmp_binary, binary)
    return binary
