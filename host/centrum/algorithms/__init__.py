"""Algorithm registry: name -> (module, function, fixed keyword arguments).

Each algorithm module exposes ``Config`` (a dataclass with the paper's defaults, each field citing its section)
and ``run(snapshot, config=None, **variant) -> Result``. Modules are imported lazily so that a missing optional
dependency of one algorithm never breaks the others.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..core.config import config_from_dict
from ..core.result import Result
from ..core.snapshot import Snapshot
from ..core.trace import wanting


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    module: str
    function: str = "run"
    variant: dict[str, Any] = field(default_factory=dict)
    needs_source: bool = False
    summary: str = ""
    raw_html: bool = False  # also runs on the HTML source alone, without a browser (``--no-render``)
    proposer: bool = False  # one of the ensemble's base algorithms (its model's inputs, in this order)


REGISTRY: dict[str, AlgorithmSpec] = {
    s.name: s
    for s in [
        AlgorithmSpec("semantic", "centrum.algorithms.semantic", proposer=True,
                      summary="first <main>/<article> by breadth-first search (Rae et al. section 4 baseline)"),
        AlgorithmSpec("gce", "centrum.algorithms.gce", proposer=True, summary="grid-centering-expanding (Jung et al.)"),
        AlgorithmSpec("zoning", "centrum.algorithms.zoning", proposer=True,
                      summary="HTML zoning (Rae et al., DocEng '18)"),
        AlgorithmSpec("r4", "centrum.algorithms.r4", proposer=True, summary="R4 ranking (Alarte & Silva)"),
        # First of the raw-HTML algorithms: the default of --no-render.
        AlgorithmSpec("source", "centrum.algorithms.source", needs_source=True, raw_html=True,
                      summary="learned block classifier on the HTML alone (the --no-render default)"),
        AlgorithmSpec("dana", "centrum.algorithms.dana", variant={"variant": "dana"}, needs_source=True,
                      raw_html=True, proposer=True,
                      summary="DANA: non-ASCII vs ASCII line density (Mohammadzadeh et al.)"),
        AlgorithmSpec("danag", "centrum.algorithms.dana", variant={"variant": "danag"}, needs_source=True,
                      raw_html=True, proposer=True,
                      summary="DANAg: content vs code line density"),
        AlgorithmSpec("addanag", "centrum.algorithms.dana", variant={"variant": "addanag"}, needs_source=True,
                      raw_html=True, proposer=True,
                      summary="AdDANAg: DANAg with hyperlink normalization"),
        # The ensemble's DANA-family proposers read the source: without it they answer nothing and the scorer sees
        # inputs it was never trained on. It may read it; whether its default models do: model_columns.needs_source.
        AlgorithmSpec("ensemble", "centrum.algorithms.ensemble", needs_source=True,
                      summary="Centrum's ensemble over all candidates"),
    ]
}

# Algorithms that run on raw HTML (`centrum extract --no-render`, `centrum batch --no-render`).
SOURCE_ALGORITHMS: tuple[str, ...] = tuple(n for n, s in REGISTRY.items() if s.raw_html)
SOURCE_DEFAULT = SOURCE_ALGORITHMS[0]  # the learned source-only extractor (docs/algorithms/source.md)
# The ensemble's base algorithms: its feature columns follow this order, so a trained model fixes it.
BASE_ALGORITHMS: tuple[str, ...] = tuple(n for n, s in REGISTRY.items() if s.proposer)

# The default of `centrum extract`, of the host's `ping` answer and so of the extension: the learned ensemble over
# every base algorithm's candidates (docs/evaluation.md and docs/ensemble.md give its measured figures); the base
# algorithms stay selectable by name.
DEFAULT_ALGORITHM = "ensemble"


class UnknownAlgorithm(KeyError):
    pass


class AlgorithmUnavailable(RuntimeError):
    pass


def available() -> list[str]:
    """Names whose module imports (an algorithm still being built is simply not listed)."""
    out = []
    for name, spec in REGISTRY.items():
        try:
            importlib.import_module(spec.module)
        except ImportError:
            continue
        out.append(name)
    return out


def load(name: str) -> tuple[AlgorithmSpec, Any]:
    spec = REGISTRY.get(name)
    if spec is None:
        raise UnknownAlgorithm(f"unknown algorithm {name!r} (known: {', '.join(REGISTRY)})")
    try:
        module = importlib.import_module(spec.module)
    except ImportError as e:
        raise AlgorithmUnavailable(f"algorithm {name!r} is not available: {e}") from e
    return spec, module


def run(name: str, snapshot: Snapshot, params: dict[str, Any] | None = None) -> Result:
    """Run algorithm ``name`` with ``params`` applied over its config defaults; times the call."""
    spec, module = load(name)
    config = config_from_dict(module.Config, params) if hasattr(module, "Config") else None
    depth = _DEPTH.get()
    token = _DEPTH.set(depth + 1)
    t0 = time.perf_counter()
    try:
        if depth:  # run by another algorithm (the ensemble's proposers): it reads nodes and candidates only
            with wanting(debug=False, text=False):
                result: Result = getattr(module, spec.function)(snapshot, config, **spec.variant)
        else:
            result = getattr(module, spec.function)(snapshot, config, **spec.variant)
    finally:
        _DEPTH.reset(token)
    result.timing_ms.setdefault("algorithm", (time.perf_counter() - t0) * 1000)
    if not depth and result.nodes:
        result.disclosed = snapshot.disclosed_in(result.nodes)
    return result


# How many registry runs enclose the current one (0 at the top: the caller is the host, the CLI, an evaluation).
_DEPTH: ContextVar[int] = ContextVar("centrum_algorithm_depth", default=0)


def describe() -> list[dict[str, object]]:
    """Every registered algorithm: name, summary, whether it imports here (else why not), parameters and defaults."""
    out = []
    for name, spec in REGISTRY.items():
        entry: dict[str, object] = {"name": name, "summary": spec.summary, "available": False, "params": {}}
        try:
            _, module = load(name)
        except AlgorithmUnavailable as e:
            entry["error"] = str(e)
        else:
            entry["available"] = True
            if hasattr(module, "Config"):
                entry["params"] = {f.name: getattr(module.Config(), f.name) for f in dataclasses.fields(module.Config)}
        out.append(entry)
    return out


def raw_html_config(name: str, params: dict[str, Any] | None = None) -> Any:
    """The typed config of raw-HTML algorithm ``name`` (ConfigError for a bad parameter)."""
    spec, module = load(name)
    if not spec.raw_html:
        raise ValueError(f"--no-render works only with {', '.join(SOURCE_ALGORITHMS)} (they read the HTML source); "
                         f"{name!r} needs a rendered page")
    return config_from_dict(module.Config, params)


def run_raw_html(name: str, html: str | bytes, config: Any = None) -> Result:
    """Raw-HTML algorithm ``name`` on a page's HTML (its module's ``run_source``): ``text`` set, no node ids. The
    learned ``source`` raises ``SourceError`` (a ValueError) for a page it cannot read."""
    spec, module = load(name)
    t0 = time.perf_counter()
    result: Result = module.run_source(html, config, **spec.variant)
    result.timing_ms.setdefault("algorithm", (time.perf_counter() - t0) * 1000)
    return result
