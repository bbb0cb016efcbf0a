"""LightGBM models compiled to machine code by lleaves (the ``fast`` extra), for the models that score many rows a
page: the ensemble's block filter and the source-only model's two stages.

A compiled model adds its trees' outputs one tree at a time for every row (``fblocksize=1``), in tree order from 0,
as LightGBM's predictor does, so its scores are LightGBM's doubles (``tests/unit/test_compiled.py``); lleaves' default
blocking sums the trees in blocks and differs in the last bit. The candidate scorer is left to LightGBM or
:mod:`._trees`: it scores a few dozen candidates a page, and its 1,500 trees take minutes to compile.

Compiling takes seconds per model, so a press never compiles: ``centrum models compile`` does, and the native host
starts it in a separate low-priority process when it warms up and finds a model not compiled yet (:func:`start`;
``CENTRUM_COMPILE=off`` turns that off). The files live in ``$CENTRUM_CACHE/compiled``, shared by every host of the
user whatever its data folder, named by a hash of the model's text, the compiler's versions and the CPU they were
compiled for. They are code the process loads, so that folder is made 0700 and a folder that is not the user's, or
that others may open, is not loaded from.
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import hashlib
import importlib.util
import logging
import os
import stat
import subprocess
import sys
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


def compile_text(text: str) -> Path:
    """Compile the model ``text`` into the private folder (once: an existing file is kept) and return the binary's
    path. Written under temporary names and renamed, so a process that loads meanwhile sees a whole file or none."""
    import lleaves

    model_file, binary = _paths(text)
    private_dir(folder(), tighten=True)
    if model_file.is_file() and binary.is_file():
        return binary
    with tempfile.TemporaryDirectory(dir=folder(), prefix=".compiling-") as tmp:
        tmp_model, tmp_binary = Path(tmp) / model_file.name, Path(tmp) / binary.name
        tmp_model.write_text(text, encoding="utf-8")
        lleaves.Model(model_file=str(tmp_model)).compile(cache=str(tmp_binary), fblocksize=1)
        os.replace(tmp_model, model_file)
        os.replace(tmp_binary, binary)
    return binary


def default_texts() -> dict[str, str]:
    """The models worth compiling, by name: the default ensemble's block filter and the default source-only model's
    two stages (the texts the default algorithms load)."""
    from . import ensemble as E
    from . import source

    out = {}
    block_model = E.load_block_model()
    if hasattr(block_model, "text"):
        out[E.Config().block_weights] = block_model.text
    cfg = source.Config()
    out[cfg.weights] = source.load_model(cfg.weights).text
    out[cfg.context_weights] = source.load_model(cfg.context_weights, context=True).text
    return out


def missing() -> list[str]:
    """Names of the default models not compiled yet (empty when lleaves is not installed: nothing can be)."""
    if not available():
        return []
    return [name for name, text in default_texts().items() if not all(p.is_file() for p in _paths(text))]


def start() -> subprocess.Popen[bytes] | None:
    """Compile the default models in a separate process at low priority when some are missing, so that the next
    process (or this one, after :func:`reload`) predicts with them. Its output goes to a log file beside them, never
    to this process's stdout (the native host's message channel). None when nothing is to be compiled."""
    todo = missing() if background_allowed() else []
    if not todo:
        return None
    private_dir(folder(), tighten=True)
    with open(folder() / "compile.lock", "ab") as lock, open(folder() / "compile.log", "ab") as out:
        try:  # one compilation at a time, whatever the number of hosts: the child keeps the lock until it exits
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None
        log.info("compiling %s in the background (lleaves)", ", ".join(todo))
        return subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(lock.fileno(),),
                                preexec_fn=lambda: os.nice(10))  # noqa: PLW1509 - only os.nice, before exec


def compile_defaults(echo: Callable[[str], None] = print) -> int:
    """Compile every default model not compiled yet; 0, or 1 when lleaves is missing."""
    if not available():
        echo("lleaves is not installed: pip install 'centrum[fast]' (predictions stay exact without it)")
        return 1
    for name, text in default_texts().items():
        done = all(p.is_file() for p in _paths(text))
        path = compile_text(text)
        echo(f"{name}: {'already compiled' if done else 'compiled'} ({path})")
    return 0


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog=f"python -m {__name__}", description=__doc__.split("\n\n")[0]).parse_args(argv)
    return compile_defaults()


if __name__ == "__main__":
    sys.exit(main())
