"""What an ensemble model's feature names say about the base algorithms it runs, read without numpy or the model's
trees: the host's ``ping`` answers from it (:func:`needs_source`) before anything heavy is imported, and the ensemble
chooses its proposers by the same rule (:func:`centrum.algorithms.ensemble.proposers_of`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from importlib import resources

from . import BASE_ALGORITHMS, REGISTRY

# The shipped default models (centrum/weights/): the candidate scorer and the block filter.
WEIGHTS_NAME = "ensemble-v15"
BLOCK_WEIGHTS_NAME = "ensemble-v15-blocks"

# The columns of a base algorithm a model was trained without (`centrum train --without`) carry this prefix, so that
# the model file says which algorithms to run for it (and a column is never read under another algorithm's meaning).
NOT_RUN = "unrun_"

_FEATURE_NAMES = re.compile(r"^feature_names=(.*)$", re.M)


@functools.cache  # a pure function of a feature name, read for every column of both models on every press
def algorithm_of(name: str) -> str | None:
    """The base algorithm whose column ``name`` is: the candidate scorer's ``<a>_*``, the block filter's ``in_<a>``
    (algorithm names are distinct before the ``_``: "dana_" is no prefix of "danag_...")."""
    name = name.removeprefix(NOT_RUN)
    return next((a for a in BASE_ALGORITHMS if name.startswith(f"{a}_") or name == f"in_{a}"), None)


@functools.cache
def _algorithm_columns(names: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """(the base algorithms with a column among ``names``, those with a column of a model trained with them)."""
    of = [(algorithm_of(n), n) for n in names]
    return (frozenset(a for a, _ in of if a is not None),
            frozenset(a for a, n in of if a is not None and not n.startswith(NOT_RUN)))


def proposers_of_names(*feature_names: Sequence[str]) -> tuple[str, ...]:
    """The base algorithms to run for models with these feature names: those some model was trained with (every
    one for a model from before `--without`)."""
    columns = [_algorithm_columns(tuple(names)) for names in feature_names]
    named = set().union(*(c[0] for c in columns))
    trained = set().union(*(c[1] for c in columns))
    return tuple(a for a in BASE_ALGORITHMS if a in trained or a not in named)


def _shipped_feature_names(name: str) -> list[str]:
    text = (resources.files("centrum") / "weights" / f"{name}.lgb.txt").read_text(encoding="utf-8")
    m = _FEATURE_NAMES.search(text, 0, text.find("\nTree=") if "\nTree=" in text else len(text))
    return m.group(1).split() if m else []


@functools.cache
def default_reads_source() -> bool:
    """Whether the default models run a base algorithm that reads the page source (the DANA family): the
    ensemble's ``needs_source``. Read from the two files' headers, not their trees."""
    try:
        names = (_shipped_feature_names(WEIGHTS_NAME), _shipped_feature_names(BLOCK_WEIGHTS_NAME))
    except (OSError, UnicodeDecodeError):
        return True  # an install without its weights: collect the source, the extract then says what is missing
    return any(REGISTRY[a].needs_source for a in proposers_of_names(*names))


def needs_source(name: str) -> bool:
    """Whether algorithm ``name``, as a press runs it, reads the page source (the extension then collects it): the
    registry's answer, and for the ensemble its default models' (a model trained without the DANA family reads
    none)."""
    return default_reads_source() if name == "ensemble" else REGISTRY[name].needs_source
