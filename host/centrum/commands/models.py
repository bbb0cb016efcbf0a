"""The ensemble's models (weights files), chosen by name in ``--param weights=NAME`` / ``block_weights=NAME``.

  centrum models list                                  shipped, installed and former models
  centrum models install FILE [--name NAME] [--force]  copy a `centrum train` output into $CENTRUM_HOME/models/
  centrum models install NAME [--from SOURCE]          restore a former model (not in the package) by name
  centrum models remove NAME                           delete an installed model
  centrum models compile                               compile the default block filter and source-only model
                                                       with lleaves (the `fast` extra; the native host also does
                                                       it in the background when it starts)

The package ships the default models only; former ones (listed in ``centrum/assets/former-models.json`` with their
size and SHA-256) are fetched from a folder or an address that holds them (``--from``, ``$CENTRUM_MODELS_URL``, or
the source checkout's ``models/`` folder), checked against that list, then installed like a trained file.

A request (the extension's parameter box, which a page could fill) names a model and never a path: only this
command, run by the user, puts files where names can find them. A file is checked before it is installed: it must be
a candidate scorer or a block filter trained on this version's features.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

FORMER = Path(__file__).resolve().parents[1] / "assets" / "former-models.json"
# A source checkout keeps the former models beside the package (host/centrum -> the repository's models/).
CHECKOUT_MODELS = Path(__file__).resolve().parents[3] / "models"
FETCH_TIMEOUT_S = 60


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="models_command", metavar="ACTION")
    sub.add_parser("list", help="list shipped and installed models")
    p = sub.add_parser("install", help="install a weights file from `centrum train`, or a former model by name")
    p.add_argument("file", type=Path, help="a `centrum train` model file (e.g. ensemble.lgb.txt or its "
                   "-blocks.lgb.txt; stumps: *.json), or the name of a former model (centrum models list)")
    p.add_argument("--from", dest="source", default=None, metavar="SOURCE",
                   help="where former models are: a folder or an http(s) address (default: $CENTRUM_MODELS_URL, "
                   "else the source checkout's models/ folder)")
    p.add_argument("--name", default=None, help="model name (default: the file name without its suffix)")
    p.add_argument("--force", action="store_true", help="replace an installed model of the same name")
    p = sub.add_parser("remove", help="delete an installed model")
    p.add_argument("name")
    sub.add_parser("compile", help="compile the default models that score many rows a page to machine code "
                   "(lleaves, the `fast` extra): the same scores, several times faster")


def _err(message: str) -> int:
    print(f"centrum models: {message}", file=sys.stderr)
    return 2


def kind_of(path: Path) -> str:
    """"scorer" or "blocks" for a model file of this version's ensemble features, "source" or "source-context" for
    one of the source-only model's two stages; ValueError (with the reason) otherwise."""
    from ..algorithms import source_features
    from ..algorithms.ensemble import reads_features
    from ..algorithms.ensemble.model import LGB_SUFFIX, Boosted, Stumps

    if path.name.endswith(LGB_SUFFIX):
        try:
            names = Boosted.load(path).feature_names
        except Exception as e:  # noqa: BLE001 - LightGBM raises its own error type for a bad file
            raise ValueError(f"{path} is not a LightGBM model file: {e}") from None
        if list(names) == list(source_features.feature_names()):
            return "source"
        if list(names) == list(source_features.context_feature_names()):
            return "source-context"
        for kind, blocks in (("scorer", False), ("blocks", True)):
            if reads_features(names, blocks):
                return kind
        raise ValueError(f"{path} was trained on other features than this version's candidate scorer, block filter "
                         "or source-only model")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path} is not an ensemble weights file")
    for kind, blocks in (("scorer", False), ("blocks", True)):
        names = obj.get("feature_names")
        if isinstance(names, list) and reads_features(names, blocks):
            Stumps.from_json(obj)  # every stump names a known feature
            return kind
    Stumps.from_json(obj)  # the format error, if it is one
    raise ValueError(f"{path} was trained on other features than this version's candidate scorer or block filter")


def former_models() -> dict[str, dict[str, Any]]:
    """{name: {"file", "bytes", "sha256"}} of the models a former version shipped."""
    data: dict[str, dict[str, Any]] = json.loads(FORMER.read_text(encoding="utf-8"))
    return data


def _source(given: str | None) -> str:
    source = given or os.environ.get("CENTRUM_MODELS_URL") or (str(CHECKOUT_MODELS) if CHECKOUT_MODELS.is_dir() else "")
    if not source:
        raise ValueError("former models are not in this package: give --from a folder or an address that holds "
                         "them (a release's model files), or set CENTRUM_MODELS_URL")
    return source


def _read(source: str, file: str, limit: int) -> bytes:
    """Up to ``limit`` + 1 bytes of ``file`` in a folder or under an http(s)/file address."""
    scheme = urllib.parse.urlsplit(source).scheme
    if scheme in ("http", "https", "file"):
        url = urllib.parse.urljoin(source if source.endswith("/") else source + "/", urllib.parse.quote(file))
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as r:  # noqa: S310 - scheme checked above
            return bytes(r.read(limit + 1))
    if scheme and len(scheme) > 1:
        raise ValueError(f"{source}: a folder or an http(s) address")
    with (Path(source) / file).open("rb") as f:
        return f.read(limit + 1)


def fetch_former(name: str, source: str | None, folder: Path) -> Path:
    """A former model's file fetched into ``folder`` and checked (size and SHA-256 as the package lists them)."""
    entry = former_models()[name]
    where = _source(source)
    try:
        data = _read(where, entry["file"], entry["bytes"])
    except OSError as e:
        raise ValueError(f"cannot fetch {entry['file']} from {where}: {e}") from None
    if len(data) != entry["bytes"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise ValueError(f"{entry['file']} from {where} is not the {name} this version lists (size or SHA-256 "
                         "differ): refused")
    path = folder / entry["file"]
    path.write_bytes(data)
    return path


def _list() -> int:
    from ..algorithms import ensemble as ens

    for name in ens.shipped_models():
        print(f"{name}\tshipped")
    for name in ens.installed_models():
        print(f"{name}\tinstalled\t{ens.installed_model_path(name)}")
    for name in sorted(set(former_models()) - set(ens.installed_models())):
        print(f"{name}\tformer\tcentrum models install {name}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.models_command == "list":
        return _list()
    if args.models_command == "compile":
        from ..algorithms import compile_defaults

        return compile_defaults.compile_defaults()
    if args.models_command == "install" and not args.file.exists() and str(args.file) in former_models():
        with tempfile.TemporaryDirectory() as tmp:
            try:
                args.file = fetch_former(str(args.file), args.source, Path(tmp))
            except ValueError as e:
                return _err(str(e))
            return _install(args)
    if args.models_command == "install":
        return _install(args)
    return _rest(args)


def _install(args: argparse.Namespace) -> int:
    from ..algorithms import ensemble as ens

    suffix = next((x for x in ens.MODEL_SUFFIXES if args.file.name.endswith(x)), None)
    if suffix is None:
        return _err(f"{args.file.name}: a model file ends in {' or '.join(ens.MODEL_SUFFIXES)}")
    name = args.name or args.file.name[: -len(suffix)]
    if not ens.is_model_name(name):
        return _err(f"{name!r} is not a model name (letters, digits, '_', '-', inner '.'; at most "
                    f"{ens.MODEL_NAME_CHARS} characters): give one with --name")
    if name in ens.shipped_models():
        return _err(f"{name!r} is the name of a shipped model: choose another with --name")
    try:
        kind = kind_of(args.file)
    except (ValueError, KeyError, TypeError, IndexError) as e:
        return _err(str(e))
    target = ens.models_dir() / f"{name}{suffix}"
    existing = ens.installed_model_path(name)
    if existing is not None and not args.force:
        return _err(f"a model named {name!r} is installed ({existing}); --force replaces it")
    from ..core.paths import data_dir

    data_dir()  # $CENTRUM_HOME created private (0700) if this is its first use
    target.parent.mkdir(exist_ok=True)
    tmp = target.with_name(f".{name}{suffix}.tmp")
    shutil.copyfile(args.file, tmp)
    tmp.replace(target)  # atomic: a host reading the model never sees half a file
    if existing is not None and existing != target:
        existing.unlink()  # the other kind of file of the same name would shadow or be shadowed
    what = {"scorer": "candidate scorer", "blocks": "block filter", "source": "source-only model",
            "source-context": "source-only model's context stage"}[kind]
    param = {"blocks": "block_weights", "source-context": "context_weights"}.get(kind, "weights")
    print(f"installed {target} ({what}); use it with --param {param}={name}"
          + (" --algorithm source" if kind.startswith("source") else ""))
    return 0


def _rest(args: argparse.Namespace) -> int:
    from ..algorithms import ensemble as ens

    if args.models_command == "remove":
        if not ens.is_model_name(args.name) or args.name not in ens.installed_models():
            return _err(f"no installed model named {args.name!r}")
        path = ens.installed_model_path(args.name)
        assert path is not None
        path.unlink()
        print(f"removed {args.name}")
        return 0
    return _err("choose an action: list, install, remove (centrum models --help)")
