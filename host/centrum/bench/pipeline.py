"""Button press to highlight, as the user waits for it: Chromium with the unpacked extension and the real native host.

Each press is timed on one wall clock (epoch milliseconds: Python's ``time.time``, the page's and the service
worker's ``performance.timeOrigin + performance.now()``, the host log's timestamps) and split into stages that add up
to the whole:

- ``start``: press -> the collector starts (content scripts injected, settings read, busy toast);
- ``collect``: the collector in the page (walk and packing; ``pack`` is the packing part);
- ``transfer``: collector done -> the host has the request (result back to the background, JSON, native messaging);
- ``parse``: the host's snapshot parsing (its ``timing_ms.parse``);
- ``algorithm``: the algorithm itself (the host's ``timing_ms.algorithm``);
- ``host_other``: the rest of the host's time: request decoding, answer encoding (the reader's outputs are not on
  the press path: they are asked for when the reader opens);
- ``response``: the host's answer written -> the background has it reassembled and parsed;
- ``paint``: answer -> the highlight is on screen (the frame after the page's stage attribute changed).

The first press after the browser started (``pipeline_first_ms``: a host started by the extension's background, as
at browser start, whose warm-up has ended, ``host_warm_up_ms``) is reported apart from the warm presses
(``pipeline_ms``, median), and so is a press that has to spawn the host itself (``pipeline_spawn_ms``: the host had
died). Readability.js runs in the same tab, on the same page, in the same run. The host's peak resident memory
(``VmHWM``) is read after each page size, from a host started for that size.

The real-page row (:func:`run_real_pages`): pages of the shared data sets, each pressed once on a warm host and
read by Readability.js in the same tab; the ratio per page, its median and 90th percentile.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ..annotation.serve import QuietFileHandler, loopback
from .extension_browser import EXTENSION_DIR, ExtensionBrowserError, Session, extension_world_eval, install_host, launch

STAGES = ("start", "collect", "transfer", "parse", "algorithm", "host_other", "response", "paint")

# Main world of the page: when the view sets the stage attribute to "highlight", note the time, then the time after
# the next frame (a timeout queued from requestAnimationFrame runs once that frame is painted).
_WATCH = """() => {
  const now = () => performance.timeOrigin + performance.now();
  const out = window.__centrumBench = {};
  new MutationObserver(() => {
    if (out.shown || document.documentElement.getAttribute('data-centrum-stage') !== 'highlight') return;
    out.shown = now();
    requestAnimationFrame(() => setTimeout(() => { out.painted = now(); }, 0));
  }).observe(document.documentElement, {attributes: true, attributeFilter: ['data-centrum-stage']});
}"""

# Service worker: wrap the native port's request() to note when the extract request leaves and its answer is back.
_INSTRUMENT = """() => {
  if (host.__benchWrapped) return;
  const request = host.request.bind(host);
  globalThis.__centrumBench = [];
  host.request = async (type, ...rest) => {
    const t0 = performance.timeOrigin + performance.now();
    const result = await request(type, ...rest);
    globalThis.__centrumBench.push({type, sent: t0, answered: performance.timeOrigin + performance.now(),
      timing: result && result.timing_ms ? result.timing_ms : null});
    return result;
  };
  host.__benchWrapped = true;
}"""

_LOG_OK = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) \d+ INFO .*'?extract'? ok in ([\d.]+) ms "
                     r"\((\d+) bytes in\)")


def _epoch_ms(stamp: str, millis: str) -> float:
    # logging's asctime is local time, as time.mktime reads it.
    return time.mktime(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").timetuple()) * 1000 + int(millis)


def last_extract_log(home: Path) -> tuple[float, float, int]:
    """(end epoch ms, host handling ms, request bytes) of the last served extract in host.log."""
    lines = (home / "host.log").read_text(encoding="utf-8", errors="replace").splitlines()
    for line in reversed(lines):
        m = _LOG_OK.match(line)
        if m:
            return _epoch_ms(m.group(1), m.group(2)), float(m.group(3)), int(m.group(4))
    raise ExtensionBrowserError("no served extract in host.log")


def _wait(fn: Any, timeout_s: float, what: str, session: Session) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.02)
    raise ExtensionBrowserError(f"timed out waiting for {what}; extension log: {session.logs[-5:]}")


# The page's marks once the highlight is painted (set by _WATCH), else a falsy value.
_PAINTED = "() => window.__centrumBench.painted && window.__centrumBench"


def press_once(session: Session, url: str, timeout_s: float) -> dict[str, Any]:
    """One press on a freshly loaded ``url``: the total and its split, in milliseconds."""
    page, worker, log_before, t0 = _pressed(session, url)
    marks = _wait(lambda: page.evaluate(_PAINTED), timeout_s, f"the highlight on {url}", session)
    return _split(session, page, worker, log_before, t0, marks)


def _pressed(session: Session, url: str) -> tuple[Any, Any, int, float]:
    """Load ``url``, instrument the page and the background, press: (page, worker, host log size before, t0)."""
    page = session.open(url)
    page.evaluate(_WATCH)
    worker = session.worker()
    worker.evaluate(_INSTRUMENT)
    worker.evaluate("() => { globalThis.__centrumBench.length = 0; }")
    log_before = (session.home / "host.log").stat().st_size if (session.home / "host.log").exists() else 0
    t0 = time.time() * 1000
    session.press(page)
    return page, worker, log_before, t0


def _split(session: Session, page: Any, worker: Any, log_before: int, t0: float, marks: dict[str, Any]
           ) -> dict[str, Any]:
    """A painted press's total and its split by stage, from the page's, the background's and the host's clocks."""
    collect = extension_world_eval(page, "() => globalThis.centrumCollectTiming")
    sent = [e for e in worker.evaluate("() => globalThis.__centrumBench") if e["type"] == "extract"]
    _wait(lambda: (session.home / "host.log").stat().st_size > log_before, 10, "the host's log line", session)
    host_end, host_ms, request_bytes = last_extract_log(session.home)
    if not collect or not sent:
        raise ExtensionBrowserError("the press left no collector or request timing")
    answered, timing = sent[-1]["answered"], sent[-1]["timing"] or {}
    algorithm, parse = float(timing.get("algorithm", 0.0)), float(timing.get("parse", 0.0))
    split = {
        "start": collect["start"] - t0,
        "collect": collect["end"] - collect["start"],
        "pack": collect["end"] - collect["walked"],
        "transfer": (host_end - host_ms) - collect["end"],
        "parse": parse,
        "algorithm": algorithm,
        "host_other": host_ms - algorithm - parse,
        "response": answered - host_end,
        "paint": marks["painted"] - answered,
    }
    return {"total": marks["painted"] - t0, "split": split, "request_bytes": request_bytes}


_WARMED = re.compile(r" INFO warmed \S+ in ([\d.]+) ms")


def start_with_background(session: Session, timeout_s: float) -> float:
    """Stop the host, then start one as the extension's background does when the browser starts (its ping), and wait
    for its warm-up to end: the milliseconds of the warm-up (host.log)."""
    _stop_host(session)
    log = session.home / "host.log"
    before = log.stat().st_size if log.exists() else 0
    session.worker().evaluate("() => centrumWarmHost()")

    def warmed() -> float | None:
        with open(log, "rb") as f:
            f.seek(before)
            m = _WARMED.search(f.read().decode("utf-8", "replace"))
        return float(m.group(1)) if m else None

    return float(_wait(warmed, timeout_s, "the host's warm-up", session))


def readability_in_page(session: Session, url: str, fn_source: str) -> float:
    page = session.open(url)
    value = page.evaluate(fn_source)
    return float(value["ms"]) if isinstance(value, dict) and value.get("ms") is not None else float("nan")


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory of a running process (VmHWM), in MB; NaN when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _stop_host(session: Session) -> None:
    """Kill the host this browser started last, so that the next press starts a fresh one."""
    pids = session.host_pids()
    if not pids:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pids[-1], signal.SIGKILL)
    time.sleep(0.3)  # the port notices; the next request reconnects


def serve(folder: Path) -> contextlib.AbstractContextManager[str]:
    """``folder``'s files on 127.0.0.1 (the base URL, no trailing slash)."""
    return loopback(functools.partial(QuietFileHandler, directory=str(folder)))


def _median_split(presses: list[dict[str, Any]]) -> dict[str, float]:
    keys = presses[0]["split"].keys()
    return {k: statistics.median(p["split"][k] for p in presses) for k in keys}


def measure_page(session: Session, url: str, repeat: int, readability: str | None,
                 timeout_s: float) -> dict[str, Any]:
    """A press that spawns the host, the first press on a host started with the background, then ``repeat`` warm
    presses; Readability.js on the same page in between."""
    _stop_host(session)
    spawn = press_once(session, url, timeout_s)
    warm_up = start_with_background(session, timeout_s)
    first = press_once(session, url, timeout_s)
    warm, rjs = [], []
    for _ in range(max(repeat, 1)):
        if readability:
            rjs.append(readability_in_page(session, url, readability))
        warm.append(press_once(session, url, timeout_s))
    pids = session.host_pids()
    totals = [p["total"] for p in warm]
    return {"pipeline_first_ms": first["total"], "pipeline_first_split": first["split"],
            "pipeline_spawn_ms": spawn["total"], "pipeline_spawn_split": spawn["split"], "host_warm_up_ms": warm_up,
            "pipeline_ms": statistics.median(totals), "pipeline_split": _median_split(warm),
            "pipeline_runs_ms": totals, "request_bytes": warm[-1]["request_bytes"],
            "readability_page_ms": statistics.median(rjs) if rjs else float("nan"),
            "peak_rss_mb": peak_rss_mb(pids[-1]) if pids else float("nan")}


def run_pipeline(pages: dict[str, Path], repeat: int, readability: str | None, timeout_s: float = 180.0,
                 extension: Path = EXTENSION_DIR, transfer: str | None = None) -> dict[str, dict[str, Any]]:
    """Figures per page name; a page that fails gets ``{"error": ...}``. ``extension``: the unpacked extension;
    ``transfer``: the snapshot's form on the way to the host, "json" or "gzip" (default: pack.js's choice by size)."""
    from playwright.sync_api import sync_playwright

    out: dict[str, dict[str, Any]] = {}
    folder = {p.parent for p in pages.values()}
    if len(folder) != 1:
        raise ValueError("the pipeline pages must share one folder")
    with tempfile.TemporaryDirectory(prefix="centrum-bench-ext-") as tmp, serve(folder.pop()) as base, \
            sync_playwright() as p:
        user_data_dir, home = Path(tmp) / "profile", Path(tmp) / "home"
        user_data_dir.mkdir()
        install_host(user_data_dir, home)
        for session in launch(p, user_data_dir, home, extension):
            if transfer:
                session.worker().evaluate("(form) => { globalThis.centrumBenchTransfer = form; }", transfer)
            for name, path in pages.items():
                try:
                    out[name] = measure_page(session, f"{base}/{path.name}", repeat, readability, timeout_s)
                except Exception as e:  # noqa: BLE001 - a benchmark reports failures, it does not stop on them
                    out[name] = {"error": f"{type(e).__name__}: {e}"}
    return out


# The stage the press ended in when it shows no highlight (an error or "nothing found" toast: the view sets no stage
# attribute then).
_STAGE = "() => { const v = globalThis[Symbol.for('centrum.view')]; return v ? v.stage : null; }"


def press_real(session: Session, url: str, timeout_s: float) -> dict[str, Any] | None:
    """One warm press on ``url``: its total and split (:func:`press_once`), or None when the press ends without a
    highlight (an error or "nothing found" toast)."""
    page, worker, log_before, t0 = _pressed(session, url)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for _ in range(25):
            marks = page.evaluate(_PAINTED)
            if marks:
                return _split(session, page, worker, log_before, t0, marks)
            time.sleep(0.02)
        if extension_world_eval(page, _STAGE) in ("message", "idle"):
            return None
    raise ExtensionBrowserError(f"timed out waiting for the press on {url}")


def run_real_pages(root: Path, pages: list[Path], readability: str, timeout_s: float = 60.0,
                   extension: Path = EXTENSION_DIR) -> dict[str, Any]:
    """The real-page row: each of ``pages`` (under ``root``, served from it) pressed once on a warm host and read by
    Readability.js in the same tab. Per page {press_ms, readability_ms, ratio}; the median and 90th percentile of
    the ratio over the pages that showed a highlight."""
    import numpy as np
    from playwright.sync_api import sync_playwright

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="centrum-bench-real-") as tmp, serve(root) as base, \
            sync_playwright() as p:
        user_data_dir, home = Path(tmp) / "profile", Path(tmp) / "home"
        user_data_dir.mkdir()
        install_host(user_data_dir, home)
        for session in launch(p, user_data_dir, home, extension):
            # Saved pages name resources on their sites: answered at once, as the renderer does (no network here).
            session.browser.contexts[0].route("**/*", lambda route: route.continue_() if route.request.url.startswith(
                base) else route.abort())
            start_with_background(session, timeout_s)
            for path in pages:
                url = f"{base}/{path.relative_to(root).as_posix()}"
                row: dict[str, Any] = {"page": path.relative_to(root).as_posix()}
                try:
                    row["readability_ms"] = readability_in_page(session, url, readability)
                    press = press_real(session, url, timeout_s)
                    row["press_ms"] = press["total"] if press else float("nan")
                    if press:
                        row["split"] = press["split"]
                except Exception as e:  # noqa: BLE001 - a benchmark reports failures, it does not stop on them
                    row["error"] = f"{type(e).__name__}: {str(e)[:200]}"
                    session.fresh_tab()  # so that what this page left pending does not fail the next ones
                rows.append(row)
    ratios = np.array([r["press_ms"] / r["readability_ms"] for r in rows if r.get("readability_ms", 0) > 0
                       and np.isfinite(r.get("press_ms", float("nan")))])
    return {"pages": rows, "measured": int(ratios.size),
            "ratio_median": float(np.median(ratios)) if ratios.size else float("nan"),
            "ratio_p90": float(np.percentile(ratios, 90)) if ratios.size else float("nan"),
            "press_ms_median": float(np.median([r["press_ms"] for r in rows if np.isfinite(r.get("press_ms", np.nan))]
                                               or [np.nan])),
            "readability_ms_median": float(np.median([r["readability_ms"] for r in rows if "readability_ms" in r]
                                                     or [np.nan])),
            "split_median": _median_split([r for r in rows if "split" in r]) if any("split" in r for r in rows)
            else {}}
