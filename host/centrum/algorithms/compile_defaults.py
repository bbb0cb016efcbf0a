"""Which models are compiled (:mod:`._compiled`), and when: the default ensemble's block filter and the default
source-only model's two stages, by ``centrum models compile``, by ``centrum bench`` before it measures, and by the
native host's warm-up in a low-priority process of its own (``python -m centrum.algorithms.compile_defaults``)."""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import subprocess
import sys
from collections.abc import Callable

from ..core.paths import private_dir
from . import _compiled, source
from . import ensemble as E

log = logging.getLogger(__name__)
BACKGROUND_NICE = 10  # a compilation the host starts yields the CPU to the browser and to presses


def default_texts() -> dict[str, str]:
    """The models worth compiling, by name: the default ensemble's block filter and the default source-only model's
    two stages (the texts the default algorithms load)."""
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
    if not _compiled.available():
        return []
    return [name for name, text in default_texts().items() if not _compiled.is_compiled(text)]


def describe() -> str:
    """Which predictors the default models use in a host started now (``centrum doctor``, ``centrum bench``)."""
    if not _compiled.available():
        return "LightGBM's predictor where LightGBM is installed, else the numpy evaluator (no lleaves)"
    texts = default_texts()
    done = [name for name, text in texts.items() if _compiled.is_compiled(text)]
    rest = [name for name in texts if name not in done]
    hint = f" ({', '.join(rest)} not compiled yet: `centrum models compile`, or a host does it when it starts)"
    return (f"compiled by lleaves: {', '.join(done) or 'none'}; LightGBM's predictor (the numpy evaluator without "
            f"LightGBM): {', '.join([*rest, 'the candidate scorer'])}" + (hint if rest else ""))


def ready(echo: Callable[[str], None]) -> str:
    """Compile what is missing (a benchmark measures what a host has once its warm-up's compilation has ended) and
    say which predictors the default models use."""
    if missing():
        echo("compiling the default models first (lleaves; once per machine)")
        compile_defaults(echo)
    return describe()


def start() -> Callable[[], int | None] | None:
    """Compile the default models in a separate process at low priority when some are missing, so that this process
    (after :func:`._compiled.reload`) and the next ones predict with them. Its output goes to a log file beside them,
    never to this process's stdout (the native host's message channel). Returns a function that waits for the
    compilation to end: this process's child (its exit code), or another host's that holds the lock (None). None
    when nothing is to be compiled."""
    todo = missing() if _compiled.background_allowed() else []
    if not todo:
        return None
    folder = private_dir(_compiled.folder(), tighten=True)
    lock = open(folder / "compile.lock", "ab")  # noqa: SIM115 - handed to the waiter or the child below
    try:  # one compilation at a time, whatever the number of hosts: the child keeps the lock until it exits
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        def other() -> None:
            with lock:
                fcntl.flock(lock, fcntl.LOCK_SH)  # blocks until the compiling process exits
        return other
    log.info("compiling %s in the background (lleaves)", ", ".join(todo))
    with lock, open(folder / "compile.log", "ab") as out:
        # Lowered by the child itself (--background): preexec_fn is unsafe in a process with threads, as the host is.
        proc = subprocess.Popen([sys.executable, "-m", __name__, "--background"], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                pass_fds=(lock.fileno(),))
    return proc.wait


def compile_defaults(echo: Callable[[str], None] = print) -> int:
    """Compile every default model not compiled yet; 0, or 1 when lleaves is missing or a model could not be
    compiled (said in one line each; predictions stay exact without them)."""
    if not _compiled.available():
        echo("lleaves is not installed: pip install 'centrum[fast]' (predictions stay exact without it)")
        return 1
    failed = 0
    for name, text in default_texts().items():
        done = _compiled.is_compiled(text)
        try:
            path = _compiled.compile_text(text)
        except _compiled.CompileError as e:
            echo(f"{name}: not compiled: {e}")
            failed = 1
            continue
        echo(f"{name}: {'already compiled' if done else 'compiled'} ({path})")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}", description=__doc__.split("\n\n")[0])
    parser.add_argument("--background", action="store_true", help="at low priority (the host's warm-up starts it so)")
    if parser.parse_args(argv).background:
        os.nice(BACKGROUND_NICE)
    return compile_defaults()


if __name__ == "__main__":
    sys.exit(main())
