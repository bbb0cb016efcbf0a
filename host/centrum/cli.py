"""``centrum`` command line. Each subcommand lives in ``centrum/commands/<name>.py`` exposing
``add_arguments(parser)`` and ``run(args) -> int``; this file only dispatches, so commands stay independent."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .core.extras import MissingExtra
from .core.version import __version__

# name -> (module, one-line help). A module that does not exist yet is reported as unavailable.
COMMANDS: dict[str, tuple[str, str]] = {
    "extract": ("centrum.commands.extract", "print the main content of a page (file or URL)"),
    "eval": ("centrum.commands.eval", "evaluate algorithms and peers on data sets"),
    "batch": ("centrum.commands.batch", "main content of whole crawls (WARC files, page folders, URL lists) on Ray"),
    "bench": ("centrum.commands.bench", "benchmark collection, transfer, parsing and every algorithm"),
    "train": ("centrum.commands.train", "train the ensemble's weights on the shared data sets"),
    "train-source": ("centrum.commands.train_source", "train the source-only (--no-render) extractor on data sets"),
    "models": ("centrum.commands.models", "list, install or remove the ensemble's models (weights by name)"),
    "install-host": ("centrum.commands.install_host", "register the native messaging host with browsers"),
    "uninstall-host": ("centrum.commands.uninstall_host", "remove the native messaging host registration"),
    "labels": ("centrum.commands.labels", "export annotator labels and report agreement"),
    "serve": ("centrum.commands.serve", "serve a data-set folder on 127.0.0.1 for annotation campaigns"),
    "host": ("centrum.commands.host", "run the native messaging host on stdin/stdout"),
    "algorithms": ("centrum.commands.algorithms", "list the algorithms and their parameters"),
    "doctor": ("centrum.commands.doctor", "check that each browser finds and can start the native host"),
    "corpus": ("centrum.commands.corpus", "build generated corpora (styled: real static-site engines and themes)"),
}


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    """The parser with every command, or with command ``only``: a command's module imports what it needs (numpy,
    lxml...), so running one command imports that one module, and a request refused before any work is refused
    quickly."""
    parser = argparse.ArgumentParser(prog="centrum", description="Main-content extraction on rendered pages.")
    parser.add_argument("--version", action="version", version=f"centrum {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules: dict[str, object] = {}
    for name, (module_name, help_text) in COMMANDS.items():
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name != module_name:
                raise
            continue
        p = sub.add_parser(name, help=help_text, description=(module.__doc__ or help_text).strip())
        module.add_arguments(p)
        modules[name] = module
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # The command is the first argument when one is given (top-level options are --help and --version only).
    command = argv[0] if argv and argv[0] in COMMANDS else None
    parser, modules = build_parser(command)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return int(modules[args.command].run(args) or 0)  # type: ignore[attr-defined]
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except MissingExtra as e:  # one line naming the extra to install, not a traceback
        print(f"centrum {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`centrum extract page | head`): not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
