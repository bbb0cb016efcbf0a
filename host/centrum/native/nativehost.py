"""The native-messaging host: reads framed requests on stdin, answers each with one (chunked) response on stdout.

The browser starts this process (through the launcher ``centrum install-host`` writes) and keeps it while the
extension's port is open. One request -> one response, in order; a bad request gets an error response
(PROTOCOL.md "Error codes") and the loop goes on. Only frames are written to stdout: ``sys.stdout`` is pointed at
stderr while serving so a stray ``print`` in an algorithm cannot corrupt the stream. Heavy modules (numpy,
algorithms) are imported on first use so that the browser's spawn -> first answer stays short.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

from ..core import limits
from ..core.paths import data_dir, private_file
from ..core.result import json_default
from ..core.version import __version__
from .campaigns import handlers as campaign_handlers
from .framing import MAX_REQUEST_BYTES, FrameError, FrameTooLarge, chunk_response, encode_message, read_frame

PROTOCOL = 1
# PROTOCOL.md: when debug would push a response past this, it is dropped and replaced by {"trimmed": true}.
RESPONSE_CAP_BYTES = limits.RESPONSE_BYTES
LIMITS = limits.LIMITS

# Every code the host answers with; PROTOCOL.md "Error codes" (rows where = host) says what each means, and
# tests/unit/test_protocol_doc.py checks that the two lists agree.
ERROR_CODES: tuple[str, ...] = (
    "E_FRAME", "E_JSON", "E_REQUEST", "E_TOO_LARGE", "E_UNKNOWN_TYPE", "E_SNAPSHOT", "E_UNKNOWN_ALGORITHM",
    "E_UNAVAILABLE", "E_PARAMS", "E_ALGORITHM", "E_STORAGE", "E_INTERNAL",
)

log = logging.getLogger("centrum.host")


class HostError(Exception):
    """An error answered to the extension with ``code`` from the PROTOCOL.md table."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        return out


Handler = Callable[[dict[str, Any]], Any]


def setup_logging() -> None:
    root = logging.getLogger("centrum")
    if root.handlers:
        return
    root.setLevel(logging.INFO)
    fmt = logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s")
    err = logging.StreamHandler(sys.__stderr__)
    err.setFormatter(fmt)
    root.addHandler(err)
    try:
        # The log names pages and errors the user met: private like the labels (0700 folder, 0600 file).
        fh = logging.FileHandler(private_file(data_dir() / "host.log"), encoding="utf-8")
        fh.setFormatter(fmt)
        root.addHandler(fh)
    except OSError as e:  # a read-only home must not stop the host
        root.warning("cannot write host.log: %s", e)


# ---------------------------------------------------------------------------------------------- handlers


def handle_ping(request: dict[str, Any]) -> dict[str, Any]:
    """Cheap on purpose (it is the first thing a freshly spawned host answers): algorithm modules are located, not
    imported; one that fails to import later answers E_UNAVAILABLE. ``needs_source`` tells the extension whether
    to collect the page source for an algorithm without a second request. Once the answer is written, the host
    warms the default algorithm in the background (:func:`warm_up`), so the first extract does not pay for it."""
    import importlib.util

    from .. import algorithms
    from ..algorithms.model_columns import needs_source

    names = [name for name, spec in algorithms.REGISTRY.items() if importlib.util.find_spec(spec.module) is not None]
    return {"host": __version__, "protocol": PROTOCOL, "algorithms": names, "default": algorithms.DEFAULT_ALGORITHM,
            "needs_source": {name: needs_source(name) for name in names}}


_WARM: list[threading.Thread] = []
WARM_UP_WAIT_S = 60.0  # bound on an extract's wait for the warm-up (it loads what the extract would load itself)


def warm_up() -> threading.Thread:
    """Start, once per process, a daemon thread that runs the default algorithm on a small built page, so that its
    imports, models and per-process tables are loaded while the extension collects the page, not during the first
    extract. The thread never writes to stdout (only the serving thread writes frames) and a failure is only
    logged: the extract then loads what it needs itself, as without the warm-up."""
    if not _WARM:
        thread = threading.Thread(target=_warm, name="centrum-warm-up", daemon=True)
        _WARM.append(thread)
        thread.start()
    return _WARM[0]


def _after_warm_up() -> None:
    """Wait for a running warm-up: the extract then runs alone, with everything loaded, instead of loading the same
    modules and models in parallel with it (and no two threads ever run an algorithm at once)."""
    if _WARM:
        _WARM[0].join(WARM_UP_WAIT_S)


def _warm() -> None:
    t0 = time.perf_counter()
    try:
        from .. import algorithms  # noqa: F401
        from ..algorithms.ensemble.model import native_predictor
        from ..core.builders import E, T, build
        from ..core.trace import wanting
        from ..output import outputs  # noqa: F401 - outputs: the reader's imports, warmed too

        native_predictor()  # LightGBM's predictor, when installed: its import is paid here, not by a press

        words = "The harbour opened again on Saturday after two years of works, to a large and happy crowd. "
        links = [E("a", (90 * k, 0, 80, 20), [T(f"Section {k}")], attrs={"href": f"/s{k}"}) for k in range(12)]
        page = E("html", (0, 0, 1000, 6000), [E("body", (0, 0, 1000, 6000), [
            E("nav", (0, 0, 1000, 40), links),
            E("article", (100, 100, 800, 3000), [E("h1", (100, 100, 800, 40), [T("Harbour reopens")])] + [
                E("p", (100, 150 + 90 * k, 800, 80), [T(words * 2), E("a", (100, 150 + 90 * k, 80, 20), [T("more")],
                                                                         attrs={"href": f"/m{k}"})])
                for k in range(30)]),
            E("section", (100, 3200, 800, 1500), [E("p", (100, 3200 + 100 * k, 800, 90), [T(words)])
                                                  for k in range(10)], attrs={"class": "comments"}),
            E("footer", (0, 5900, 1000, 100), [T("Contact us"), *links[:6]]),
        ])])
        with wanting(debug=False):  # the press's path
            algorithms.run(algorithms.DEFAULT_ALGORITHM, build(page).snapshot)
        log.info("warmed %s in %.0f ms", algorithms.DEFAULT_ALGORITHM, (time.perf_counter() - t0) * 1000)
        _compile_in_background()
    except Exception:  # noqa: BLE001 - a warm-up is an optimisation; the extract reports real failures
        log.warning("warm-up failed:\n%s", traceback.format_exc())


def _compile_in_background() -> None:
    """With the ``fast`` extra, compile the default models not compiled yet in a low-priority process of their own
    (seconds of CPU a model: never in a press), and have the models look for them again when it ends."""
    from ..algorithms import _compiled, compile_defaults

    ended = compile_defaults.start()
    if ended is None:
        return

    def wait() -> None:
        code = ended()
        _compiled.reload()
        if code is None:
            log.info("another process's compilation ended")
        else:
            log.info("background compilation ended (exit %s)", code)

    threading.Thread(target=wait, name="centrum-compile", daemon=True).start()


def handle_algorithms(request: dict[str, Any]) -> list[dict[str, Any]]:
    from .. import algorithms
    from ..algorithms.model_columns import needs_source

    out = algorithms.describe()
    for entry in out:
        # The extension collects the page source only for algorithms that read it (it can be large).
        entry["needs_source"] = needs_source(str(entry["name"]))
    return out


def _check_params(name: str, params: Any) -> None:
    """Algorithm name and parameters, checked before the snapshot is parsed or anything runs (PROTOCOL.md "Limits",
    "Parameter ranges"): E_REQUEST, E_UNKNOWN_ALGORITHM, E_UNAVAILABLE or E_PARAMS naming the parameter."""
    from .. import algorithms
    from ..core.config import ConfigError, config_from_dict

    if params is not None and not isinstance(params, dict):
        raise HostError("E_REQUEST", "params must be an object", "params")
    try:
        _, module = algorithms.load(name)
        if hasattr(module, "Config"):
            config_from_dict(module.Config, params)
    except algorithms.UnknownAlgorithm as e:
        raise HostError("E_UNKNOWN_ALGORITHM", str(e.args[0] if e.args else e), "algorithm") from e
    except algorithms.AlgorithmUnavailable as e:
        raise HostError("E_UNAVAILABLE", str(e), "algorithm") from e
    except ConfigError as e:
        raise HostError("E_PARAMS", str(e), "params") from e


def _run(name: str, snapshot: Any, params: Any, parse_ms: float, debug: bool) -> Any:
    from .. import algorithms
    from ..core.config import ConfigError
    from ..core.trace import wanting

    try:
        with wanting(debug=debug):  # a press reads no trace: the algorithms that can skip building it do
            result = algorithms.run(name, snapshot, params)
    except ConfigError as e:  # a parameter only the algorithm can judge (an installed model that does not load)
        raise HostError("E_PARAMS", str(e), "params") from e
    except Exception as e:
        log.error("algorithm %s failed:\n%s", name, traceback.format_exc())
        raise HostError("E_ALGORITHM", f"{name}: {type(e).__name__}: {_clip(str(e), 500)}") from e
    result.timing_ms["parse"] = parse_ms
    return result


def _run_one(name: str, snapshot: Any, params: Any, parse_ms: float, debug: bool) -> dict[str, Any]:
    answer: dict[str, Any] = _run(name, snapshot, params, parse_ms, debug).to_json(with_debug=debug)
    return answer


# What an extract request may ask for besides the Result (PROTOCOL.md "Request"): the reader's header, its "Copy as
# Markdown" and its "Save" buttons take them from the host, the one place that builds them. The press asks for none
# (they cost more than the algorithm on a large page); the reader asks with an `outputs` request when it opens.
EXTRA_OUTPUTS = ("metadata", "markdown", "html", "text")


def _requested_outputs(request: dict[str, Any]) -> tuple[str, ...]:
    outputs = request.get("outputs", [])
    if not isinstance(outputs, list) or not all(isinstance(o, str) and o in EXTRA_OUTPUTS for o in outputs) or len(
            set(outputs)) != len(outputs):
        raise HostError("E_REQUEST", f"outputs must be a list of distinct names among {', '.join(EXTRA_OUTPUTS)}",
                        "outputs")
    return tuple(outputs)


def _page_outputs(snapshot: Any, result: Any, outputs: tuple[str, ...]) -> dict[str, Any]:
    """The asked-for outputs of one answer. They are extras: when building them fails on a hostile page the answer
    still carries the Result, with what the snapshot alone says as metadata."""
    from ..core.metadata import snapshot_metadata
    from ..output.outputs import OutputError, Outputs

    out = Outputs(snapshot, result)
    extra: dict[str, Any] = {}
    if "metadata" in outputs:
        try:
            extra["metadata"] = out.metadata().to_json()
        except Exception:
            log.error("metadata failed:\n%s", traceback.format_exc())
            extra["metadata"] = snapshot_metadata(snapshot, result.text).to_json()
    if "text" in outputs:
        extra["text"] = result.text
    for name in outputs:
        if name in ("metadata", "text"):
            continue
        try:
            extra[name] = out.markdown() if name == "markdown" else out.html()
        except OutputError:  # a text-only answer, or a snapshot without source: nothing to format
            extra[name] = None
        except Exception:
            log.error("%s output failed:\n%s", name, traceback.format_exc())
            extra[name] = None
    extra["timing_ms"] = {k: v for k, v in out.timing_ms.items()}
    return extra


# A request larger than this that names a snapshot (an extract, a label.save: the key's bytes are looked for, which a
# string value cannot spell, its quotes being escaped) carries one: the kept page is dropped before the request is
# decoded, so that the host never holds two pages at once (an extract drops it anyway; the reader asking for a
# dropped page's outputs sends its snapshot again, as after a restart). The reader's outputs request carries at most
# the kept page's own HTML.
DROP_PAGE_ABOVE_BYTES = 1 << 20


class _LastPage:
    """The last single-algorithm extract's snapshot and Result, under a random handle the answer carries (`page`),
    so that the reader's outputs are built from exactly what was highlighted without sending the snapshot again.
    One page only, dropped when the next extract starts, or before a request that may carry another snapshot is
    decoded (``DROP_PAGE_ABOVE_BYTES``): the host never holds two snapshots because of it."""

    handle: str | None = None
    snapshot: Any = None
    result: Any = None

    @classmethod
    def keep(cls, snapshot: Any, result: Any) -> str:
        import secrets

        cls.handle, cls.snapshot, cls.result = secrets.token_hex(12), snapshot, result
        return cls.handle

    @classmethod
    def drop(cls) -> None:
        cls.handle = cls.snapshot = cls.result = None


def handle_outputs(request: dict[str, Any]) -> dict[str, Any]:
    """The outputs (metadata, Markdown, HTML) of the page an earlier extract answered with handle ``page``."""
    page = request.get("page")
    if not isinstance(page, str) or len(page) > limits.ID_CHARS:
        raise HostError("E_REQUEST", "page must be the handle of an extract answer", "page")
    outputs = _requested_outputs(request)
    _after_warm_up()
    if not outputs:
        raise HostError("E_REQUEST", f"outputs must name at least one of {', '.join(EXTRA_OUTPUTS)}", "outputs")
    if _LastPage.handle is None or page != _LastPage.handle:
        raise HostError("E_REQUEST", "page is not the host's last extracted page (another page was extracted since, "
                                     "a request carrying a snapshot came in between, or the host restarted): extract "
                                     "it again", "page")
    snapshot, result = _LastPage.snapshot, _LastPage.result
    _complete(snapshot, result, request.get("unseen"), request.get("source"))
    return {**_page_outputs(snapshot, result, outputs), "disclosed": list(result.disclosed)}


def _complete(snapshot: Any, result: Any, unseen: Any, source: Any) -> None:
    """A page highlighted from the press profile (no ``unseen``, no ``source`` unless the algorithm reads it) gets
    what the full collection the reader made as it opened adds (PROTOCOL.md "Reader outputs"): the outputs and the
    disclosed panels then read what they read from a full snapshot. What the page has of its own it keeps."""
    from ..core.snapshot import SnapshotError, later_unseen

    if source is not None and not isinstance(source, str):
        raise HostError("E_REQUEST", "source must be a string", "source")
    if source is not None and snapshot.source is None:
        snapshot.source = source
    if unseen is None or snapshot.unseen_subtree is not None:
        return
    try:
        parts = later_unseen(unseen, snapshot.n)
    except SnapshotError as e:
        raise HostError("E_SNAPSHOT", str(e), e.field) from e
    snapshot.unseen_subtree, snapshot.unseen_text = parts["unseen_subtree"], parts["unseen_text"]
    result.disclosed = snapshot.disclosed_in(result.nodes)


def _error_slot(algo: str, error: HostError, parse_ms: float) -> dict[str, Any]:
    return {"algorithm": algo, "nodes": [], "candidates": [], "debug": {}, "message": error.message, "text": None,
            "timing_ms": {"parse": parse_ms}, "error": error.to_json()}


def handle_extract(request: dict[str, Any]) -> Any:
    from .. import algorithms
    from ..core.snapshot import SnapshotError, parse_snapshot

    raw = request.get("snapshot")
    if not isinstance(raw, dict):
        raise HostError("E_REQUEST", "extract needs a snapshot object", "snapshot")
    name = request.get("algorithm", algorithms.DEFAULT_ALGORITHM)
    if not isinstance(name, str):
        raise HostError("E_REQUEST", "algorithm must be a string", "algorithm")
    debug = request.get("debug", False)
    if not isinstance(debug, bool):
        raise HostError("E_REQUEST", "debug must be true or false", "debug")
    params = request.get("params")
    outputs = _requested_outputs(request)
    with_text = request.get("text", True)
    if not isinstance(with_text, bool):
        raise HostError("E_REQUEST", "text must be true or false", "text")
    # Every field is read. When the host handed the request over (Host._answer), this was its last reference: the
    # decoded snapshot (on a large page more memory than the parsed arrays) then dies with the parse below instead
    # of living beside every algorithm.
    del request
    _after_warm_up()
    # Parameters before the snapshot: a bad one is answered before any work. For "all" (params keyed by algorithm
    # name) an algorithm whose parameters fail gets the error in its own slot, as when it fails on the page.
    refused: dict[str, HostError] = {}
    if name != "all":
        _check_params(name, params)
    else:
        if params is not None and not isinstance(params, dict):
            raise HostError("E_REQUEST", "params must be an object", "params")
        for algo in algorithms.available():
            try:
                _check_params(algo, (params or {}).get(algo))
            except HostError as e:
                refused[algo] = e
    _LastPage.drop()
    if "gzip" in raw:
        raw = unpack_snapshot(raw)
    elif "json" in raw:
        raw = snapshot_text(raw)
    t0 = time.perf_counter()
    try:
        snapshot = parse_snapshot(raw)
    except SnapshotError as e:
        raise HostError("E_SNAPSHOT", str(e), e.field) from e
    del raw
    parse_ms = (time.perf_counter() - t0) * 1000
    if name != "all":
        result = _run(name, snapshot, params, parse_ms, debug)
        answer: dict[str, Any] = result.to_json(with_debug=debug)
        if not with_text:
            _text_on_demand(answer)
        if outputs:
            extra = _page_outputs(snapshot, result, outputs)
            answer["timing_ms"] = {**answer.get("timing_ms", {}), **extra.pop("timing_ms")}
            answer.update(extra)
        answer["page"] = _LastPage.keep(snapshot, result)
        _trim_debug([answer])
        return answer
    all_results: dict[str, Any] = {}
    for algo in algorithms.available():
        try:
            if algo in refused:
                raise refused[algo]
            all_results[algo] = _run_one(algo, snapshot, (params or {}).get(algo), parse_ms, debug)
        except HostError as e:
            all_results[algo] = _error_slot(algo, e, parse_ms)
    _trim_debug(list(all_results.values()))
    return all_results


def _text_on_demand(answer: dict[str, Any]) -> None:
    """The answer without its text, which says how long the text is (PROTOCOL.md "Request": ``"text": false``): the
    press reads the text only when the page can show none of the answer's elements, and on a large page it is most of
    the answer, which the browser reads from the host's pipe before anything else can happen."""
    text = answer.get("text")
    answer["text"] = None
    answer["text_chars"] = len(text) if isinstance(text, str) else 0


def _trim_debug(results: list[dict[str, Any]]) -> None:
    """Drop debug payloads when they would push the response past RESPONSE_CAP_BYTES (PROTOCOL.md)."""
    sizes = [len(dumps(r.get("debug", {}))) for r in results]
    total = sum(len(dumps(r)) for r in results)
    if total <= RESPONSE_CAP_BYTES:
        return
    for r, size in zip(results, sizes, strict=True):
        if "debug" in r:
            r["debug"] = {"trimmed": True, "bytes": size}


def handle_label_save(request: dict[str, Any]) -> dict[str, Any]:
    """Annotator mode: store a label in $CENTRUM_HOME/labels.sqlite3 (centrum.annotation.labels)."""
    from ..annotation.labels import LabelError
    from ..annotation.labels import handle_label_save as save

    try:
        return save(request)
    except LabelError as e:
        raise HostError(e.code, e.message, e.field) from e


HANDLERS: dict[str, Handler] = {
    "ping": handle_ping,
    "algorithms": handle_algorithms,
    "extract": handle_extract,
    "outputs": handle_outputs,
    "label.save": handle_label_save,
}
HANDLERS.update(campaign_handlers(HostError))


# ---------------------------------------------------------------------------------------------- encoding


def _finite(o: Any) -> Any:
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_finite(v) for v in o]
    return o


def dumps(obj: Any) -> str:
    """JSON that the browser's JSON.parse accepts: NaN/Infinity (invalid JSON) become null."""
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=json_default)
    except ValueError:
        round_trip = json.loads(json.dumps(obj, default=json_default))  # numpy -> python first
        return json.dumps(_finite(round_trip), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# ---------------------------------------------------------------------------------------------- loop


def json_depth_over(body: bytes, limit: int, slice_bytes: int = 0) -> bool:
    """True when the JSON text ``body`` may nest objects/arrays deeper than ``limit``; checked before decoding,
    whose recursion a deep request would otherwise exhaust.

    Linear, vectorized, in bounded memory (1 MiB slices), and reading only the positions of quotes, backslashes and
    brackets, never building a copy of the body: a quote preceded by an odd run of backslashes is escaped, the
    parity of the unescaped quotes before a bracket says whether it sits in a string, and the running sum of +1 per
    ``[``/``{`` and -1 per ``]``/``}`` outside strings is the nesting depth. For valid JSON its maximum is the depth;
    for invalid JSON it can only overstate what the decoder reaches before its first error (an earlier stray closer
    would stop the decoder there), so a deep request is never decoded, and a shallow invalid one still gets the
    decoder's own message. ``slice_bytes``: the slice size (default ``_DEPTH_SLICE``; the tests use tiny ones).
    """
    if len(body) <= 2 * limit or body.count(b"[") + body.count(b"{") <= limit:
        return False  # too few open brackets in all: nothing to scan
    import numpy as np

    data = np.frombuffer(body, np.uint8)
    parity, depth, slashes = 0, 0, 0  # quotes so far (mod 2), nesting so far, backslash run ending the last slice
    step = slice_bytes or _DEPTH_SLICE
    for start in range(0, len(data), step):
        piece = data[start:start + step]
        quotes = _unescaped_quotes(piece, slashes)
        slashes = _trailing_run(piece, slashes)
        is_bracket = piece == ord("[")
        for c in b"]{}":
            is_bracket |= piece == c
        brackets = np.flatnonzero(is_bracket)
        outside = (np.searchsorted(quotes, brackets) + parity) % 2 == 0
        parity = (parity + quotes.size) % 2
        kind = piece[brackets[outside]]
        if kind.size:
            running = np.cumsum(np.where((kind == ord("[")) | (kind == ord("{")), 1, -1)) + depth
            if int(running.max()) > limit:
                return True
            depth = int(running[-1])
    return False


# Bytes per slice of the depth scan: its temporaries (a boolean mask, position lists) stay a few MiB at most.
_DEPTH_SLICE = 1 << 20


def _backslash_runs(piece: Any, carried: int) -> tuple[Any, Any]:
    """Positions of the backslashes of ``piece`` and, for each, the length of its run up to and including it (a run
    that starts the slice continues the ``carried`` run of the slice before)."""
    import numpy as np

    slashes = np.flatnonzero(piece == ord("\\"))
    starts = np.ones(slashes.size, dtype=bool)
    starts[1:] = slashes[1:] != slashes[:-1] + 1
    first = np.maximum.accumulate(np.where(starts, np.arange(slashes.size), 0))
    length = np.arange(slashes.size) - first + 1
    if slashes.size:
        length[slashes[first] == 0] += carried
    return slashes, length


def _unescaped_quotes(piece: Any, carried: int) -> Any:
    """Positions in ``piece`` of the quotes that are not escaped (preceded by an odd run of backslashes)."""
    import numpy as np

    quotes = np.flatnonzero(piece == ord('"'))
    if not quotes.size:
        return quotes
    slashes, length = _backslash_runs(piece, carried)
    run = np.zeros(quotes.size, dtype=np.int64)  # backslashes right before each quote
    after = quotes > 0
    before = np.searchsorted(slashes, quotes[after] - 1)
    found = before < slashes.size
    found[found] = slashes[before[found]] == quotes[after][found] - 1
    run_after = np.zeros(before.size, dtype=np.int64)
    run_after[found] = length[before[found]]
    run[after] = run_after
    run[~after] = carried
    return quotes[run % 2 == 0]


def _trailing_run(piece: Any, carried: int) -> int:
    """Length of the backslash run that ends ``piece`` (0 when it ends otherwise)."""
    if not piece.size or piece[-1] != ord("\\"):
        return 0
    _, length = _backslash_runs(piece, carried)
    return int(length[-1])


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are Python extensions, not JSON (JSON.stringify never writes them).
    raise ValueError(f"{name} is not a JSON value")


def unpack_snapshot(packed: dict[str, Any]) -> Any:
    """The snapshot object of a compressed snapshot ``{"gzip": base64}`` (PROTOCOL.md "Compressed snapshot").

    Bounded like a request: the inflated JSON may not pass ``request_bytes`` (inflated at most one byte beyond it,
    so a small bomb costs no more than a large request) and is depth-scanned before it is decoded. Anything else
    than one complete gzip stream of a JSON object is E_REQUEST naming ``snapshot.gzip``."""
    import base64
    import binascii
    import zlib

    field = "snapshot.gzip"
    data = packed.get("gzip")
    if set(packed) != {"gzip"} or not isinstance(data, str):
        raise HostError("E_REQUEST", "a compressed snapshot is {\"gzip\": <base64 string>} and nothing else", field)
    try:
        gz = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as e:
        raise HostError("E_REQUEST", f"snapshot.gzip is not base64: {e}", field) from None
    inflater = zlib.decompressobj(wbits=31)  # a gzip stream, nothing else
    try:
        body = inflater.decompress(gz, limits.REQUEST_BYTES + 1)
    except zlib.error as e:
        raise HostError("E_REQUEST", f"snapshot.gzip is not gzip data: {e}", field) from None
    if len(body) > limits.REQUEST_BYTES:
        raise HostError("E_TOO_LARGE", f"snapshot.gzip inflates beyond the limit request_bytes = "
                                       f"{limits.REQUEST_BYTES}", field)
    if not inflater.eof:
        raise HostError("E_REQUEST", "snapshot.gzip ends before its gzip stream does", field)
    if inflater.unused_data:
        raise HostError("E_REQUEST", "snapshot.gzip has data after its gzip stream", field)
    del gz
    # The snapshot sits one level below the request's top object.
    return decode_request(body, what=field, depth=limits.JSON_DEPTH - 1)


def snapshot_text(packed: dict[str, Any]) -> Any:
    """The snapshot object of a snapshot sent as its JSON text ``{"json": text}`` (PROTOCOL.md "Compressed
    snapshot"): what the press sends when gzip costs the page more than it saves the pipe (docs/speed.md). Bounded
    and checked as the request itself; anything but the JSON text of an object is E_REQUEST naming
    ``snapshot.json``."""
    field = "snapshot.json"
    text = packed.get("json")
    if set(packed) != {"json"} or not isinstance(text, str):
        raise HostError("E_REQUEST", "a snapshot as text is {\"json\": <string>} and nothing else", field)
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate: JSON.stringify never writes one unescaped
        raise HostError("E_JSON", f"snapshot.json is not UTF-8 JSON: {e}", field) from None
    del text
    return decode_request(body, what=field, depth=limits.JSON_DEPTH - 1)


def decode_request(body: bytes, what: str = "request", depth: int | None = None) -> dict[str, Any]:
    """The request object of one frame, or HostError E_JSON / E_REQUEST (PROTOCOL.md "Limits" and error table).
    Also the object inside a compressed snapshot (``what="snapshot.gzip"``, named as the error's field, one level
    less ``depth``)."""
    field = None if what == "request" else what
    if json_depth_over(body, limits.JSON_DEPTH if depth is None else depth):
        raise HostError("E_JSON", f"{what} nests deeper than the limit json_depth = {limits.JSON_DEPTH}", field)
    try:
        text = body.decode("utf-8")
        # The bytes are not read again: when the caller handed them over (Host.serve), they go before the decoded
        # objects are built beside the text.
        del body
        request = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise HostError("E_JSON", f"{what} is not UTF-8 JSON: {e}", field) from None
    if not isinstance(request, dict):
        raise HostError("E_REQUEST", f"{what} must be a JSON object", field)
    return request


class Host:
    def __init__(self, stdin: IO[bytes], stdout: IO[bytes], handlers: dict[str, Handler] | None = None,
                 warm: bool = False) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.handlers = dict(HANDLERS if handlers is None else handlers)
        # A ping starts the warm-up of the default algorithm (main() serves with it; tests of the loop go without).
        self.warm = warm

    def send(self, msg_id: Any, rtype: Any, result: Any = None, error: HostError | None = None) -> None:
        body: dict[str, Any] = {"v": 1, "id": msg_id, "type": rtype}
        if error is None:
            body["status"] = "ok"
            body["result"] = result
        else:
            body["status"] = "error"
            body["error"] = error.to_json()
        # Every frame is built before the first is written: an answer that fails to encode leaves no partial output.
        frames = [encode_message(chunk) for chunk in chunk_response(msg_id, dumps(body))]
        for frame in frames:
            self.stdout.write(frame)
        self.stdout.flush()

    def send_error(self, msg_id: Any, rtype: Any, error: HostError) -> None:
        """Answer ``error``; never raises except when stdout itself fails (the browser is gone: nothing to answer).

        The answer holds only strings, numbers and None, and encode_message escapes lone surrogates, so the fallback
        below is for what cannot be foreseen; it drops the request's own id and type, the only untrusted parts.
        """
        try:
            self.send(msg_id, rtype, error=error)
        except OSError:
            raise
        except Exception:  # noqa: BLE001 - the error answer must go out whatever it holds
            log.error("cannot write the error answer:\n%s", traceback.format_exc())
            self.send(None, None, error=HostError("E_INTERNAL", f"{error.code}: the error answer could not be written"))

    def serve(self) -> int:
        """Serve until EOF on stdin. Returns the exit status."""
        while True:
            try:
                body = read_frame(self.stdin, MAX_REQUEST_BYTES)
            except FrameTooLarge as e:
                if e.skipped:
                    self.send_error(None, None, HostError(
                        "E_TOO_LARGE", f"{e} (limit request_bytes = {limits.REQUEST_BYTES})"))
                else:
                    self.send_error(None, None, HostError("E_FRAME", f"impossible length header: {e}"))
                continue
            except FrameError as e:
                # Truncation is only seen at EOF: answer, then stop (nothing more can arrive).
                log.warning("frame error: %s", e)
                self.send_error(None, None, HostError("E_FRAME", str(e)))
                return 1
            if body is None:
                log.info("stdin closed: exiting")
                return 0
            # Handed over, not shared: the request's bytes are freed once decoded, before the handler runs.
            owned = [body]
            del body
            self._answer(owned)

    def handle_frame(self, body: bytes) -> None:
        """Answer one request. Whatever it holds and whatever a handler raises, exactly one answer is written."""
        self._answer([body])

    def _answer(self, owned: list[bytes]) -> None:
        """:meth:`handle_frame` of the one body in ``owned``, which it takes out of the list to decode it: when the
        caller keeps no other reference, the bytes are freed before the handler runs."""
        t0 = time.perf_counter()
        msg_id: Any = None
        rtype: Any = None
        size = len(owned[0])
        # A large request that names no snapshot (the reader's outputs with the page's HTML) is about the kept page.
        if size > DROP_PAGE_ABOVE_BYTES and b'"snapshot"' in owned[0]:
            _LastPage.drop()
        try:
            request = decode_request(owned.pop())
            raw_type = request.get("type")
            raw_id = request.get("id")
            type_ok = isinstance(raw_type, str) and len(raw_type) <= limits.ID_CHARS
            if type_ok:
                rtype = raw_type  # echoed even when the id is bad, so the extension can tell what failed
            if not _valid_id(raw_id):
                raise HostError("E_REQUEST", f"request needs an id: a string of at most id_chars = {limits.ID_CHARS} "
                                             "characters or an integer of magnitude below 2^53", "id")
            msg_id = raw_id
            if not type_ok:
                raise HostError("E_REQUEST", f"request needs a type: a string of at most id_chars = {limits.ID_CHARS} "
                                             "characters", "type")
            v = request.get("v")
            if type(v) is not int or v != PROTOCOL:  # not True, not 1.0: the field is the integer 1
                raise HostError("E_REQUEST", f"protocol v{_clip(repr(v))} not supported (host speaks v{PROTOCOL}; "
                                             "every request carries \"v\": 1)", "v")
            handler = self.handlers.get(rtype)
            if handler is None:
                raise HostError("E_UNKNOWN_TYPE", f"unknown request type {_clip(repr(rtype))} "
                                                  f"(known: {', '.join(self.handlers)})", "type")
            # Handed over like the body: a handler that drops its reference frees the request (handle_extract).
            handed = [request]
            del request
            result = handler(handed.pop())
        except HostError as e:
            log.info("%.80r %.80r -> %s: %.500r", msg_id, rtype, e.code, e.message)
            self.send_error(msg_id, rtype, e)
            return
        except Exception as e:  # noqa: BLE001 - the host keeps serving whatever happens (MemoryError included)
            log.error("internal error on %.80r %.80r:\n%s", msg_id, rtype, traceback.format_exc())
            self.send_error(msg_id, rtype, HostError("E_INTERNAL", f"{type(e).__name__}: {_clip(str(e), 500)}"))
            return
        try:
            self.send(msg_id, rtype, result)
        except OSError:
            raise
        except Exception as e:  # noqa: BLE001 - a result JSON cannot express (e.g. a cycle)
            log.error("cannot encode the answer to %.80r %.80r:\n%s", msg_id, rtype, traceback.format_exc())
            self.send_error(msg_id, rtype, HostError("E_INTERNAL", f"answer not encodable: {type(e).__name__}: "
                                                                     f"{_clip(str(e), 500)}"))
            return
        log.info("%.80r %.80r ok in %.1f ms (%d bytes in)", msg_id, rtype, (time.perf_counter() - t0) * 1000, size)
        if rtype == "ping" and self.warm:
            warm_up()  # after the answer is written: the ping is never slowed by it


def _valid_id(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) <= limits.ID_CHARS
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53


def _clip(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters: an error message never echoes a whole hostile value."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``centrum-host`` and of the launcher the browsers start.

    Chrome passes the caller's origin (and ``--parent-window=`` on Windows); Firefox passes the manifest path and
    the extension id. They are logged, not needed.
    """
    args = sys.argv[1:] if argv is None else argv
    setup_logging()
    log.info("host %s started (pid %d, python %s, args %s)", __version__, os.getpid(), sys.executable, args)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    saved = sys.stdout
    sys.stdout = sys.stderr  # stray prints must never reach the frame stream
    try:
        return Host(stdin, stdout, warm=True).serve()
    except BrokenPipeError:
        log.info("browser closed the pipe: exiting")
        return 0
    finally:
        sys.stdout = saved


if __name__ == "__main__":
    sys.exit(main())
