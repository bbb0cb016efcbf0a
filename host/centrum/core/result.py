"""What every algorithm returns: chosen node ids, scored candidates and a debug trace."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .snapshot import Snapshot


@dataclass
class Candidate:
    """One node set an algorithm considered, with its score (higher is better unless ``debug`` says)."""

    nodes: list[int]
    score: float
    label: str = ""  # e.g. "M3 best", "c-SET #1", "column 4"
    features: dict[str, float] = field(default_factory=dict)


@dataclass
class Overlay:
    """One thing the debugger draws over the page (PROTOCOL.md "Overlays"): element ids (``nodes``) or a page
    rectangle (``box``: x, y, width, height in CSS px), what it is (``kind``), a label and an optional score."""

    kind: str  # OVERLAY_KINDS
    label: str
    score: float | None = None
    nodes: list[int] | None = None
    box: list[float] | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


# What an overlay can be; the debugger styles each kind the same way for every algorithm.
OVERLAY_KINDS: tuple[str, ...] = (
    "answer",  # the nodes the algorithm returns
    "candidate",  # a node set it scored (its score in ``score``)
    "removed",  # nodes it took out of its answer or never considered (fixed, link groups, hidden)
    "region",  # an intermediate area (a zone, a column, a link-dense block, a grid cell kept)
    "point",  # a point of interest (a centroid), as a small box
)


@dataclass
class Result:
    algorithm: str
    nodes: list[int]  # main-content node ids; empty means "no result" (see ``message``)
    candidates: list[Candidate] = field(default_factory=list)
    debug: dict[str, Any] = field(default_factory=dict)
    message: str = ""  # why there is no result, or a note for the user
    text: str | None = None  # set by algorithms that work on text (DANA without a browser)
    timing_ms: dict[str, float] = field(default_factory=dict)  # "algorithm", "parse", "stage.<name>", ...
    overlays: list[Overlay] = field(default_factory=list)  # what the debugger draws, in drawing order
    # Collapsed disclosure panels under ``nodes`` whose text the answer includes (``Snapshot.disclosed_in``): the
    # reader view shows them open. Set by ``algorithms.run`` for the caller's answer.
    disclosed: list[int] = field(default_factory=list)
    # Comment sections the answer set aside (PROTOCOL.md "Comments"): ``{"nodes": [ids], "count": N}`` (N: how many
    # comments they hold, 0 when unknown), shown by the reader as a collapsed "Comments (N)"; None when there are none.
    comments: dict[str, Any] | None = None

    def text_for(self, snapshot: Snapshot) -> str:
        """The answer's text: the algorithm's own when it states one (zoning's zones, DANA without a browser, R4's
        kept text), else the snapshot's text joiner over the answer's nodes."""
        return self.text if self.text is not None else snapshot.text_of(self.nodes)

    def to_json(self, with_debug: bool = True) -> dict[str, Any]:
        if with_debug:
            out = asdict(self)
            out["overlays"] = [o.to_json() for o in self.overlays]
            return out
        # What asdict gives, field by field: asdict deep-copies every node id of every candidate one at a time, most
        # of the answer's encoding on a large page; without the debug trace nothing here nests a dataclass.
        return {"algorithm": self.algorithm, "nodes": list(self.nodes),
                "candidates": [{"nodes": list(c.nodes), "score": c.score, "label": c.label,
                                "features": dict(c.features)} for c in self.candidates],
                "message": self.message, "text": self.text, "timing_ms": dict(self.timing_ms),
                "disclosed": list(self.disclosed), "comments": self.comments}


def basic_overlays(nodes: list[int], candidates: list[Candidate], first: list[Overlay] | None = None) -> list[Overlay]:
    """``first``, then every candidate, then the answer: the overlays of an algorithm with nothing else to draw."""
    out = list(first or [])
    out += [Overlay("candidate", c.label, c.score, nodes=c.nodes) for c in candidates]
    if nodes:
        out.append(Overlay("answer", "answer", nodes=nodes))
    return out


def block_overlays(blocks: list[dict[str, Any]]) -> list[Overlay]:
    """Blocks of a chosen subtree that a filter kept ("region") or dropped ("removed"), each with its score and the
    start of its text (``{node, kept, score, text}`` each; ``comment``: dropped as a comment section)."""
    def label(b: dict[str, Any]) -> str:
        if b["kept"]:
            return "block kept"
        return "block dropped (comment section)" if b.get("comment") else "block dropped"

    return [Overlay("region" if b["kept"] else "removed", f"{label(b)}: {b['text']}", b["score"], nodes=[b["node"]])
            for b in blocks]


def json_default(o: Any) -> Any:
    """``json.dumps`` fallback for everything Centrum writes: numpy scalars and arrays that reach a debug trace or a
    report become lists and numbers, sets and tuples lists, anything else its ``str``."""
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    return str(o)
