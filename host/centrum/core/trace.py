"""The debug trace of one algorithm run: named stages, each timed, each followed by what the debugger shows of it.

An algorithm's ``run`` reads as its paper's steps::

    tr = Trace("gce")
    alive = tr.stage("remove_fixed", st.alive_mask, snapshot, cfg.remove_fixed, show=_show_alive)
    ...
    return tr.result([node], candidates)

The recorder owns what every trace needs the same way: list caps (a page can have 10^5 elements; the debugger
needs the shape, not every number), rounding (so traces stay small and diff cleanly), and per-stage timings, which
end up in ``Result.timing_ms`` as ``stage.<name>`` beside the registry's ``algorithm`` total.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from .result import Candidate, Overlay, Result

T = TypeVar("T")

CAP = 200  # list entries kept per trace list; the trace says when a list was cut
DIGITS = 4

# What the caller of the running algorithm reads besides its nodes and candidates: its debug trace (and overlays),
# and its answer text. Both by default; the host asks for no debug on a press, and an algorithm run by another
# (the ensemble's base algorithms) reads neither, so the work that only builds them can be left out.
_WANTS: ContextVar[tuple[bool, bool]] = ContextVar("centrum_trace_wants", default=(True, True))


@contextmanager
def wanting(debug: bool = True, text: bool = True) -> Iterator[None]:
    """Algorithms run inside this block build their debug trace only if ``debug``, their answer text only if ``text``
    (nodes and candidates are the same either way)."""
    token = _WANTS.set((debug, text))
    try:
        yield
    finally:
        _WANTS.reset(token)


def debug_wanted() -> bool:
    return _WANTS.get()[0]


def text_wanted() -> bool:
    return _WANTS.get()[1]


class Trace:
    def __init__(self, algorithm: str, cap: int = CAP, digits: int = DIGITS) -> None:
        self.algorithm = algorithm
        self.cap = cap
        self.digits = digits
        self.debug: dict[str, Any] = {}
        self.timing_ms: dict[str, float] = {}
        self.overlays: list[Overlay] = []
        self._kinds: dict[str, int] = {}

    def stage(self, name: str, fn: Callable[..., T], *args: Any, show: Callable[[T], Any] | None = None,
              **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, timed as stage ``name``; ``show(out)``, when given, is the stage's trace entry."""
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        self.timing_ms[f"stage.{name}"] = round((time.perf_counter() - t0) * 1000, 3)
        if show is not None:
            self.debug[name] = show(out)
        return out

    def note(self, key: str, value: Any) -> None:
        self.debug[key] = value

    def r(self, x: float) -> float:
        """A number as the trace writes it."""
        return round(float(x), self.digits)

    def rs(self, xs: Iterable[float]) -> list[float]:
        return [round(float(x), self.digits) for x in xs]

    def ids(self, xs: Iterable[int]) -> list[int]:
        """At most ``cap`` ids, as plain ints."""
        out: list[int] = []
        for x in xs:
            if len(out) >= self.cap:
                break
            out.append(int(x))
        return out

    def capped(self, items: list[Any]) -> tuple[list[Any], bool]:
        """(the first ``cap`` items, whether any were cut)."""
        return items[: self.cap], len(items) > self.cap

    def overlay(self, kind: str, label: str, score: float | None = None, nodes: Iterable[int] | None = None,
                box: Iterable[float] | None = None) -> None:
        """One thing for the debugger to draw (PROTOCOL.md "Overlays"): some nodes or a page box, labelled. At most
        ``cap`` of each kind, so that many removed blocks never crowd out the answer. None when the caller reads no
        trace (:func:`wanting`): overlays are part of it (``Result.to_json`` without debug leaves them out)."""
        if not debug_wanted() or self._kinds.get(kind, 0) >= self.cap:
            return
        self._kinds[kind] = self._kinds.get(kind, 0) + 1
        self.overlays.append(Overlay(kind, label, None if score is None else self.r(score),
                                     None if nodes is None else self.ids(nodes),
                                     None if box is None else [round(float(v), 1) for v in box]))

    def result(self, nodes: list[int], candidates: list[Candidate] | None = None, message: str = "",
               text: str | None = None) -> Result:
        return Result(self.algorithm, nodes, candidates or [], self.debug, message=message, text=text,
                      timing_ms=dict(self.timing_ms), overlays=list(self.overlays))
