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
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

from . import __version__
from .framing import MAX_REQUEST_BYTES, FrameError, FrameTooLarge, chunk_response, encode_message, read_frame
from .paths import data_dir, private_file

PROTOCOL = 1
# PROTOCOL.md: when debug would push a response past this, it is dropped and replaced by {"trimmed": true}.
RESPONSE_CAP_BYTES = 16 * 1024 * 1024

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
    to collect the page source for an algorithm without a second request."""
    import importlib.util

    from . import algorithms

    names = [name for name, spec in algorithms.REGISTRY.items() if importlib.util.find_spec(spec.module) is not None]
    return {"host": __version__, "protocol": PROTOCOL, "algorithms": names, "default": algorithms.DEFAULT_ALGORITHM,
            "needs_source": {name: algorithms.REGISTRY[name].needs_source for name in names}}


def handle_algorithms(request: dict[str, Any]) -> list[dict[str, Any]]:
    from . import algorithms
    from .commands.algorithms import describe

    out = describe()
    for entry in out:
        # The extension collects the page source only for algorithms that read it (it can be large).
        entry["needs_source"] = algorithms.REGISTRY[str(entry["name"])].needs_source
    return out


def _run_one(name: str, snapshot: Any, params: Any, parse_ms: float, debug: bool) -> dict[str, Any]:
    from . import algorithms
    from .config import ConfigError

    if params is not None and not isinstance(params, dict):
        raise HostError("E_REQUEST", "params must be an object", "params")
    try:
        result = algorithms.run(name, snapshot, params)
    except algorithms.UnknownAlgorithm as e:
        raise HostError("E_UNKNOWN_ALGORITHM", str(e.args[0] if e.args else e), "algorithm") from e
    except algorithms.AlgorithmUnavailable as e:
        raise HostError("E_UNAVAILABLE", str(e), "algorithm") from e
    except ConfigError as e:
        raise HostError("E_PARAMS", str(e), "params") from e
    except Exception as e:
        log.error("algorithm %s failed:\n%s", name, traceback.format_exc())
        raise HostError("E_ALGORITHM", f"{name}: {type(e).__name__}: {e}") from e
    result.timing_ms["parse"] = parse_ms
    return result.to_json(with_debug=debug)


def handle_extract(request: dict[str, Any]) -> Any:
    from . import algorithms
    from .snapshot import SnapshotError, parse_snapshot

    raw = request.get("snapshot")
    if not isinstance(raw, dict):
        raise HostError("E_REQUEST", "extract needs a snapshot object", "snapshot")
    name = request.get("algorithm", algorithms.DEFAULT_ALGORITHM)
    if not isinstance(name, str):
        raise HostError("E_REQUEST", "algorithm must be a string", "algorithm")
    debug = request.get("debug", False)
    if not isinstance(debug, bool):
        raise HostError("E_REQUEST", "debug must be true or false", "debug")
    t0 = time.perf_counter()
    try:
        snapshot = parse_snapshot(raw)
    except SnapshotError as e:
        raise HostError("E_SNAPSHOT", str(e), e.field) from e
    parse_ms = (time.perf_counter() - t0) * 1000
    params = request.get("params")
    if name != "all":
        results: Any = _run_one(name, snapshot, params, parse_ms, debug)
        _trim_debug([results])
        return results
    # "all": params is {algorithm name: params}; one failing algorithm is reported in its slot, not fatal.
    if params is not None and not isinstance(params, dict):
        raise HostError("E_REQUEST", "params must be an object", "params")
    all_results: dict[str, Any] = {}
    for algo in algorithms.available():
        try:
            all_results[algo] = _run_one(algo, snapshot, (params or {}).get(algo), parse_ms, debug)
        except HostError as e:
            all_results[algo] = {"algorithm": algo, "nodes": [], "candidates": [], "debug": {},
                                 "message": e.message, "text": None, "timing_ms": {"parse": parse_ms},
                                 "error": e.to_json()}
    _trim_debug(list(all_results.values()))
    return all_results


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
    """Annotator mode: store a label in $CENTRUM_HOME/labels.sqlite3 (centrum.labels)."""
    from .labels import LabelError
    from .labels import handle_label_save as save

    try:
        return save(request)
    except LabelError as e:
        raise HostError(e.code, e.message, e.field) from e


HANDLERS: dict[str, Handler] = {
    "ping": handle_ping,
    "algorithms": handle_algorithms,
    "extract": handle_extract,
    "label.save": handle_label_save,
}


# ---------------------------------------------------------------------------------------------- encoding


def _json_default(o: Any) -> Any:
    # numpy scalars and arrays from algorithm features / debug traces.
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    return str(o)


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
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default)
    except ValueError:
        round_trip = json.loads(json.dumps(obj, default=_json_default))  # numpy -> python first
        return json.dumps(_finite(round_trip), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# ---------------------------------------------------------------------------------------------- loop


class Host:
    def __init__(self, stdin: IO[bytes], stdout: IO[bytes], handlers: dict[str, Handler] | None = None) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.handlers = dict(HANDLERS if handlers is None else handlers)

    def send(self, msg_id: Any, rtype: Any, result: Any = None, error: HostError | None = None) -> None:
        body: dict[str, Any] = {"v": 1, "id": msg_id, "type": rtype}
        if error is None:
            body["status"] = "ok"
            body["result"] = result
        else:
            body["status"] = "error"
            body["error"] = error.to_json()
        text = dumps(body)
        for chunk in chunk_response(msg_id, text):
            self.stdout.write(encode_message(chunk))
        self.stdout.flush()

    def serve(self) -> int:
        """Serve until EOF on stdin. Returns the exit status."""
        while True:
            try:
                body = read_frame(self.stdin, MAX_REQUEST_BYTES)
            except FrameTooLarge as e:
                if e.skipped:
                    self.send(None, None, error=HostError("E_TOO_LARGE", str(e)))
                else:
                    self.send(None, None, error=HostError("E_FRAME", f"impossible length header: {e}"))
                continue
            except FrameError as e:
                # Truncation is only seen at EOF: answer, then stop (nothing more can arrive).
                log.warning("frame error: %s", e)
                self.send(None, None, error=HostError("E_FRAME", str(e)))
                return 1
            if body is None:
                log.info("stdin closed: exiting")
                return 0
            self.handle_frame(body)

    def handle_frame(self, body: bytes) -> None:
        t0 = time.perf_counter()
        try:
            request = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            self.send(None, None, error=HostError("E_JSON", f"request is not UTF-8 JSON: {e}"))
            return
        if not isinstance(request, dict):
            self.send(None, None, error=HostError("E_REQUEST", "request must be a JSON object"))
            return
        msg_id = request.get("id")
        if isinstance(msg_id, bool) or not isinstance(msg_id, str | int):
            self.send(None, request.get("type") if isinstance(request.get("type"), str) else None,
                      error=HostError("E_REQUEST", "request needs an id (string or integer)", "id"))
            return
        rtype = request.get("type")
        if not isinstance(rtype, str):
            self.send(msg_id, None, error=HostError("E_REQUEST", "request needs a type (string)", "type"))
            return
        if request.get("v", 1) != PROTOCOL:
            self.send(msg_id, rtype, error=HostError("E_REQUEST", f"protocol v{request.get('v')} not supported "
                                                                   f"(host speaks v{PROTOCOL})", "v"))
            return
        handler = self.handlers.get(rtype)
        if handler is None:
            self.send(msg_id, rtype, error=HostError(
                "E_UNKNOWN_TYPE", f"unknown request type {rtype!r} (known: {', '.join(self.handlers)})", "type"))
            return
        try:
            result = handler(request)
        except HostError as e:
            log.info("%s %s -> %s: %.500s", msg_id, rtype, e.code, e.message)
            self.send(msg_id, rtype, error=e)
            return
        except Exception as e:  # the host keeps serving whatever happens
            log.error("internal error on %s %s:\n%s", msg_id, rtype, traceback.format_exc())
            self.send(msg_id, rtype, error=HostError("E_INTERNAL", f"{type(e).__name__}: {e}"))
            return
        try:
            self.send(msg_id, rtype, result)
        except (ValueError, TypeError, RecursionError) as e:  # a result JSON cannot express (e.g. a cycle)
            log.error("cannot encode the answer to %s %s:\n%s", msg_id, rtype, traceback.format_exc())
            self.send(msg_id, rtype, error=HostError("E_INTERNAL", f"answer not encodable: {type(e).__name__}: {e}"))
            return
        log.info("%s %s ok in %.1f ms (%d bytes in)", msg_id, rtype, (time.perf_counter() - t0) * 1000, len(body))


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
        return Host(stdin, stdout).serve()
    except BrokenPipeError:
        log.info("browser closed the pipe: exiting")
        return 0
    finally:
        sys.stdout = saved


if __name__ == "__main__":
    sys.exit(main())
