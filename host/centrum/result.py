"""What every algorithm returns: chosen node ids, scored candidates and a debug trace."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Candidate:
    """One node set an algorithm considered, with its score (higher is better unless ``debug`` says)."""

    nodes: list[int]
    score: float
    label: str = ""  # e.g. "M3 best", "c-SET #1", "column 4"
    features: dict[str, float] = field(default_factory=dict)


@dataclass
class Result:
    algorithm: str
    nodes: list[int]  # main-content node ids; empty means "no result" (see ``message``)
    candidates: list[Candidate] = field(default_factory=list)
    debug: dict[str, Any] = field(default_factory=dict)
    message: str = ""  # why there is no result, or a note for the user
    text: str | None = None  # set by algorithms that work on text (DANA without a browser)
    timing_ms: dict[str, float] = field(default_factory=dict)

    def to_json(self, with_debug: bool = True) -> dict[str, Any]:
        out = asdict(self)
        if not with_debug:
            out.pop("debug")
        return out


def json_default(o: Any) -> Any:
    """``json.dumps`` fallback for everything Centrum writes: numpy scalars and arrays that reach a debug trace or a
    report become lists and numbers, sets and tuples lists, anything else its ``str``."""
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    return str(o)
