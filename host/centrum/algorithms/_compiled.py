"""LightGBM models compiled to machine code by lleaves (the ``fast`` extra), for the models that score many rows a
page: the ensemble's block filter and the source-only model's two stages.

A compiled model adds its trees' outputs one tree at a time for every row (``fblocksize=1``), in tree order from 0,
as LightGBM's predictor does, so its scores are LightGBM's doubles (``tests/integration/test_compiled.py``); lleaves'
default blocking sums the trees in blocks and differs in the last bit. The candidate scorer is left to LightGBM or
:mod:`._trees`: it scores a few dozen candidates a page, and its 1,500 trees take minutes to compile.

lleaves writes an object file; the system's linker (``cc`` or ``ld``) makes it a shared library, which a process
loads with ctypes: LLVM (llvmlite, ~50 MB of a host's memory) is needed to compile, never to predict.

Compiling takes seconds per model, so a press never compiles: ``centrum models compile`` does, and the native host
starts it in a separate low-priority process when it warms up and finds a model not compiled yet
(:mod:`.compile_defaults`; ``CENTRUM_COMPILE=off`` turns that off). The files live in ``$CENTRUM_CACHE/compiled``,
shared by every host of the user whatever its data folder, named by a hash of the model's text, lleaves' and
llvmlite's versions and the CPU they were compiled for. They are code the process loads, so that folder is made 0700
and a folder that is not the user's, or that others may open, is not loaded from.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import platform
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..core.paths import cache_root, is_private_dir, private_dir
from ._trees import K_ZERO, Trees

log = logging.getLogger(__name__)

Predictor = Callable[[np.ndarray], np.ndarray]
# Raised by :func:`reload` when a compilation has ended: a model that found no compiled file looks again.
generation = 0
_DOUBLES = ctypes.POINTER(ctypes.c_double)
LINK_TIMEOUT_S = 120


class CompileError(RuntimeError):
    """A model could not be compiled here (no linker, or the linker failed): predictions stay LightGBM's."""


def reload() -> None:
    global generation
    generation += 1


def available() -> bool:
    """Whether lleaves is installed (the ``fast`` extra)."""
    return importlib.util.find_spec("lleaves") is not None


def folder() -> Path:
    return cache_root() / "compiled"


def background_allowed() -> bool:
    """Whether the host may compile in the background (``CENTRUM_COMPILE=off`` says no)."""
    return os.environ.get("CENTRUM_COMPILE", "").strip().lower() not in ("off", "0", "no", "false")


@functools.cache
def _compiler() -> str:
    """The compiler's versions and the CPU (a file compiled for another CPU may not run here), read without
    importing LLVM."""
    versions = " ".join(f"{name} {importlib.metadata.version(name)}" for name in ("lleaves", "llvmlite"))
    cpu = platform.machine()
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        cpu += " " + " ".join(re.findall(r"^(?:model name|flags|Features)\s*:\s*(.*)$", info, re.M)[:2])
    except OSError:
        cpu += " " + platform.processor()
    return f"{versions} {cpu}"


def _binary(text: str) -> Path:
    return folder() / (hashlib.sha256(f"{text}\0{_compiler()}".encode()).hexdigest()[:40] + ".so")


def is_compiled(text: str) -> bool:
    return available() and _binary(text).is_file()


def load(text: str, width: int | None = None) -> Predictor | None:
    """The compiled predictor of the model ``text`` (of ``width`` features: the caller's parse of it, else parsed
    here) when it has been compiled on this machine, else None (also when lleaves is not installed, or the file does
    not load: the caller then predicts as without it)."""
    if not is_compiled(text):
        return None
    binary = _binary(text)
    if not is_private_dir(folder()):
        log.warning("not loading compiled models from %s: the folder is not yours alone (0700)", folder())
        return None
    try:
        width = len(Trees.parse(text).feature_names) if width is None else width
        forest = ctypes.CDLL(str(binary)).forest_root
    except (OSError, ValueError, AttributeError):
        log.warning("compiled model %s did not load", binary.name, exc_info=True)
        return None
    forest.argtypes = [_DOUBLES, _DOUBLES, ctypes.c_int32, ctypes.c_int32]
    forest.restype = None
    log.info("loaded compiled model %s", binary.name)

    def predict(X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != width or X.shape[0] >= 2**31 - 1:
            raise ValueError(f"rows of {width} features expected, got shape {X.shape}")
        # LightGBM reads a value of magnitude at most kZeroThreshold as 0 (it keeps rows as sparse pairs); the
        # compiled code compares the value itself. np.where also makes the C-ordered copy the code reads.
        X = np.ascontiguousarray(np.where(np.abs(X) <= K_ZERO, 0.0, X))
        out = np.zeros(X.shape[0])
        forest(X.ctypes.data_as(_DOUBLES), out.ctypes.data_as(_DOUBLES), 0, X.shape[0])
        return out

    return predict


def _linker() -> list[str]:
    for name, extra in (("cc", ["-lm"]), ("gcc", ["-lm"]), ("ld", [])):
        path = shutil.which(name)
        if path:
            return [path, "-shared", *extra]
    raise CompileError("no linker found (cc or ld): install one (Debian: apt install binutils)")


def compile_text(text: str) -> Path:
    """Compile the model ``text`` into the private folder (once: an existing file is kept) and return the shared
    library's path. Written under a temporary name and renamed, so a process that loads meanwhile sees a whole file
    or none. CompileError when it cannot be made here."""
    import lleaves

    Trees.parse(text)  # a model the evaluator reads (one output; ModelFormatError otherwise), before any work
    binary = _binary(text)
    private_dir(folder(), tighten=True)
    if binary.is_file():
        return binary
    link = _linker()
    with tempfile.TemporaryDirectory(dir=folder(), prefix=".compiling-") as tmp:
        model, obj, lib = Path(tmp) / "model.lgb.txt", Path(tmp) / "model.o", Path(tmp) / "model.so"
        model.write_text(text, encoding="utf-8")
        lleaves.Model(model_file=str(model)).compile(cache=str(obj), fblocksize=1)
        done = subprocess.run([*link[:2], "-o", str(lib), str(obj), *link[2:]], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=LINK_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise CompileError(f"{link[0]} failed: {done.stderr.decode(errors='replace')[-500:]}")
        os.replace(lib, binary)
    return binary
