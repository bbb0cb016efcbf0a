"""Render a page (local file or http(s) URL) in headless Chromium and collect its snapshot with ``collect.js``.

The collector is the extension's own content script (``extension/src/collect.js``, one source of truth), evaluated
in an *isolated world* (CDP ``Page.createIsolatedWorld``, like an extension content script) so that page scripts
replacing DOM methods cannot change what it measures. Usage::

    with Renderer(window=(1920, 1080), timeout_s=15) as r:
        out = r.render("page.html", source=True)
        snap = parse_snapshot(out.raw)

One browser serves many pages (``centrum eval`` renders ~1400); each page gets a fresh browser context. Playwright's
sync API runs on a private worker thread, so a Renderer also works inside a process that already drives Playwright
on its main thread (pytest-playwright) or runs an asyncio loop.
"""

from __future__ import annotations

import base64
import concurrent.futures
import itertools
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from . import charset
from .html import NOSCRIPT_MIN_CHARS, shown_only_without_scripts
from .limits import PAGE_FILE_BYTES, TooLarge, read_page_file
from .paths import chromium_override, collector_override

T = TypeVar("T")

# Flags known to work on this kind of machine (no GPU, no sandbox user namespaces, no network besides ours).
# Bump when a change here can change a snapshot of the same page bytes (how a page is loaded, decoded, redirected,
# or which scripts run): `centrum eval`'s cache key includes it from version 2 on, so stale renders are never
# served (version 1's keys are those of the caches made before the version existed). What each version changed, and
# how many shared pages it rendered again: docs/history.md (renderer versions) and CHANGELOG.md.
RENDERER_VERSION = 9
LOAD_TIMEOUT = "load did not finish within"  # the start of the warning of a page whose load event never came
# The starts of the warnings of a page rendered again with its scripts off, by the rule that did it (the carry-over
# rules read them back from cached entries).
NAVIGATED = "the page tried to navigate"
NOSCRIPT_SHOWN = "the page showed almost no text and holds it in <noscript>"
SCRIPTS_HID = "the page's scripts hid most of its text"

# Every page is a stranger (SECURITY.md): no flag here may give a page more than a browser gives a web page.
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
    # WebRTC's sockets bypass request interception and host resolver rules alike: without a proxy this policy
    # leaves it no UDP at all, so a page cannot send STUN datagrams (with data in them) to any address.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
]
# Without a sandbox, a renderer exploit runs as the user. Chromium refuses its sandbox to root and needs user
# namespaces (or its setuid helper) otherwise; sandbox_state() says which applies here.
NO_SANDBOX = "--no-sandbox"
# What a page's own scripts find of WebRTC: nothing (defence in depth beside the policy above). Runs in every frame
# before the page's scripts, so a fresh iframe's window offers no constructor either.
_NO_WEBRTC = """(() => {
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceTransport",
                      "RTCSctpTransport", "RTCDtlsTransport", "RTCRtpSender", "RTCRtpReceiver"]) {
    try { delete globalThis[name]; } catch (e) { /* not configurable: the policy flag still holds */ }
  }
})()"""
# Archived pages (``centrum batch`` over WARC files): every request is answered from the archive by interception;
# no host name resolves either, so a request that escapes interception (a preconnect, DNS prefetch) reaches nobody.
ARCHIVE_ARGS = ["--host-resolver-rules=MAP * ~NOTFOUND"]


@dataclass(frozen=True)
class Archived:
    """One archived HTTP response served to the page instead of the network (``Renderer(archive=True)``)."""

    status: int
    headers: dict[str, str]
    body: bytes


# url -> the archived response, or None when the archive does not hold it (the request is then refused).
ArchiveLookup = Callable[[str], "Archived | None"]


# Resolves once the DOM has not changed for `quiet` ms, or after `max` ms: what a person sees once a page
# whose scripts draw its content (a shop's description, a thread's posts) has settled. It runs in our isolated world,
# whose MutationObserver and setTimeout a page script cannot replace.
_SETTLE = """(quiet, max) => new Promise(done => {
  const t0 = performance.now(); let mutations = 0, timer = 0;
  const finish = () => { observer.disconnect(); clearTimeout(timer); clearTimeout(cap);
                         done({mutations, ms: Math.round(performance.now() - t0)}); };
  const observer = new MutationObserver(records => { mutations += records.length; clearTimeout(timer);
                                                     timer = setTimeout(finish, quiet); });
  observer.observe(document, {subtree: true, childList: true, characterData: true});
  timer = setTimeout(finish, quiet);
  const cap = setTimeout(finish, max);
})"""
SETTLE_QUIET_MS = 200  # a pause in DOM changes this long ends the wait (script-drawn content arrives in bursts)
SETTLE_MAX_MS = 2000  # bound: a page that never stops changing (tickers, carousels) is collected after this long

# A frame that a script opened with document.open() and did not close stays "loading", and the page's load event waits
# for it: offline, the (advertising) script that would write the rest and close it never arrives, and the page waited
# out the whole load timeout (docs/history.md counts the shared pages). From a second after the page's own document
# has been parsed, an offline render closes such frames. document.close() does nothing to a document its parser
# reads from the network, so only script-opened ones are affected.
_CLOSE_STALLED_FRAMES = """(() => {
  if (window !== window.top) return;
  const close = (doc, depth) => {
    for (const f of doc.querySelectorAll("iframe, frame")) {
      let d = null;
      try { d = f.contentDocument; } catch (e) { d = null; }
      if (!d) continue;
      if (d.readyState === "loading") d.close();
      if (depth < 8) close(d, depth + 1);
    }
  };
  document.addEventListener("DOMContentLoaded", () => setTimeout(function tick() {
    if (document.readyState === "complete") return;
    close(document, 0);
    setTimeout(tick, 500);
  }, 1000), { once: true });
})()"""

# Resolves after the next animation frame (bounded: a page in the background may never get one).
_NEXT_FRAME = "() => new Promise(r => { requestAnimationFrame(() => setTimeout(r, 0)); setTimeout(r, 500); })"


class RenderError(RuntimeError):
    """The page could not be rendered (missing file, navigation failure, Chromium missing, collector error)."""


@dataclass
class Rendered:
    raw: dict[str, Any]  # the protocol-v1 snapshot object
    url: str  # the URL that was loaded
    stylesheets: dict[str, int] = field(default_factory=lambda: {"loaded": 0, "failed": 0})  # from the network
    timing: dict[str, float] = field(default_factory=dict)  # ms: load, collect (round trip), collect_in_page, total
    extra: dict[str, Any] = field(default_factory=dict)  # results of the ``extra`` functions (None on error)
    errors: dict[str, str] = field(default_factory=dict)  # ``extra`` name -> error message
    warnings: list[str] = field(default_factory=list)  # renderer-side notes (load timeout, blocked requests)
    blocked: int = 0  # requests aborted because they left a local page's origin
    redirects: int = 0  # navigations of a local page away from itself (cancelled)
    failed: list[str] = field(default_factory=list)  # URLs of failed requests of any kind (missing, refused, blocked)


def find_chromium() -> str | None:
    """``CENTRUM_CHROMIUM``, then Debian's Chromium; None means "let Playwright use its own build"."""
    env = chromium_override()
    if env:
        if not Path(env).exists():
            raise RenderError(f"CENTRUM_CHROMIUM={env} does not exist")
        return env
    for candidate in ("/usr/lib/chromium/chromium", "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def sandbox_state() -> tuple[bool, str]:
    """(whether to start Chromium with its sandbox, why not). Root cannot have it (Chromium refuses); any other user
    tries it, and the launch falls back, saying so, where the kernel refuses the user namespaces it needs."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return False, "running as root, to whom Chromium refuses its sandbox; run centrum as a normal user to have it"
    return True, ""


def collector_path() -> Path:
    # The package's assets/collect.js is a link to extension/src/collect.js in the repository (one source of truth)
    # that the wheel build turns into a copy.
    return collector_override() or Path(__file__).resolve().parents[1] / "assets" / "collect.js"


def collector_source() -> str:
    path = collector_path()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise RenderError(f"collector script not found at {path} (set CENTRUM_COLLECTOR): {e}") from e


def target_url(target: str | os.PathLike[str]) -> tuple[str, bool]:
    """(URL to load, is_local). Raises RenderError for a missing file."""
    s = os.fspath(target)
    scheme = urlparse(s).scheme.lower()
    if scheme in ("http", "https"):
        return s, False
    if scheme == "file":
        path = Path(urlparse(s).path)
    else:
        path = Path(s)
    if not path.is_file():
        raise RenderError(f"no such file: {s}")
    if path.stat().st_size > PAGE_FILE_BYTES:  # checked again while the page is read (_read_local)
        raise RenderError(str(TooLarge(f"file {s}", "page_file_bytes", "the file")))
    return path.resolve().as_uri(), True


# With the page's scripts off (CSP), the parser still reads <noscript> as text: put its markup in place, as a browser
# without scripts parses it (scripts in it stay off; its <style> applies, e.g. to hide a "loading" splash).
_SHOW_NOSCRIPT = """(() => { for (const n of [...document.querySelectorAll('noscript')]) {
  const d = document.createElement('div'); d.innerHTML = n.textContent; n.replaceWith(d); } })()"""
_NOSCRIPT_OPEN = re.compile(rb"<noscript\b", re.I)
_NOSCRIPT_CLOSE = re.compile(rb"</noscript\s*>", re.I)


def _noscript_text_chars(page: bytes) -> int:
    """Non-blank characters of the text inside the page's closed <noscript> elements, each up to its first closing
    tag, counted as :func:`_text_chars` counts (a <style> inside is not text). Searches that only move forward: a page
    of unclosed tags costs one pass, where a lazy regex up to the closing tag rescans to the end from every opening
    tag."""
    from .html import source_bytes

    data = source_bytes(page)
    total, at = 0, 0
    while (opening := _NOSCRIPT_OPEN.search(data, at)) is not None:
        open_end = data.find(b">", opening.end())
        closing = _NOSCRIPT_CLOSE.search(data, open_end) if open_end >= 0 else None
        if closing is None:
            break
        total += _text_chars(data[open_end + 1: closing.start()])
        at = closing.end()
    return total


def _shown_only_without_scripts(raw: dict[str, Any], page: bytes | None) -> bool:
    """Whether the rendered page shows almost no text while its <noscript> elements hold a page's worth."""
    if not page:
        return False
    held = _noscript_text_chars(page)
    if held < NOSCRIPT_MIN_CHARS:  # (the snapshot is not read)
        return False
    shown = _shown_text_chars(raw)
    return shown is not None and shown_only_without_scripts(shown, held)


# A saved or archived page's own scripts may take its text away offline: a consent or paywall script whose server
# never answers, a "loading" shell that replaces the body. Rendered text (non-blank characters shown) below LOST_SHARE
# of the text the saved body holds outside scripts, styles, comments and <noscript>, with at least LOST_MIN_CHARS
# there: render it again with its scripts off, and keep that render when it shows at least LOST_GAIN times as much
# (the page as saved). The same goes for the <noscript> rule above.
LOST_MIN_CHARS = 500
LOST_SHARE = 0.3
LOST_GAIN = 2.0
_BLANK = re.compile(r"\s+")


def _saved_text_chars(page: bytes) -> int:
    """Non-blank characters of the text in a saved page's body (:func:`_text_chars`)."""
    from .html import source_bytes

    data = source_bytes(page)
    start = data.lower().find(b"<body")
    return _text_chars(data[start:] if start >= 0 else data)


def _text_chars(data: bytes) -> int:
    """Non-blank characters of the text of an HTML fragment (UTF-8 bytes), without scripts, styles, comments and
    <noscript>: what the re-render rules count in a saved page (DANA's linear-time code removal and tag stripping)."""
    from .html import html_text, remove_code

    return _non_blank(html_text(remove_code(data)))


def _non_blank(text: str) -> int:
    return len(_BLANK.sub("", text))


def _shown_text_chars(raw: dict[str, Any]) -> int | None:
    """Non-blank characters of the text nodes a snapshot shows (None: not a valid snapshot)."""
    from .snapshot import SnapshotError, parse_snapshot

    try:
        snap = parse_snapshot(raw)
    except SnapshotError:
        return None
    # One join and one substitution over the shown texts, not one per text node.
    return _non_blank("".join(itertools.compress(snap.texts, (snap.text_area > 0).tolist())))


def _lost_to_scripts(raw: dict[str, Any], page: bytes | None) -> bool:
    """Whether a rendered saved page shows far less text than its body holds (LOST_SHARE)."""
    return bool(page) and _shows_under(raw, _saved_text_chars(page), LOST_MIN_CHARS, LOST_SHARE)


def _shows_under(raw: dict[str, Any], held: int, min_chars: int, share: float) -> bool:
    """The text-lost rule's test: the saved body holds at least ``min_chars`` characters of text and the render
    shows under ``share`` of them (both counted by the same measure)."""
    if held < min_chars:
        return False
    shown = _shown_text_chars(raw)
    return shown is not None and shown < share * held


# The warnings that say which rules shaped a render: a load that timed out, a render done again without scripts.
RULE_WARNINGS = (LOAD_TIMEOUT, NAVIGATED, NOSCRIPT_SHOWN, SCRIPTS_HID)


def rules_taken(entry: dict[str, Any]) -> frozenset[str]:
    """The RULE_WARNINGS that a cache entry's warnings start with."""
    warnings = [str(w) for w in entry.get("warnings") or []]
    return frozenset(rule for rule in RULE_WARNINGS if any(w.startswith(rule) for w in warnings))


def _loaded_in_time(entry: dict[str, Any], page: bytes) -> bool:
    return LOAD_TIMEOUT not in rules_taken(entry)


def _kept_its_text(entry: dict[str, Any], page: bytes) -> bool:
    return not _lost_to_scripts(entry.get("raw") or {}, page)


def _loaded_and_kept(entry: dict[str, Any], page: bytes) -> bool:
    return _loaded_in_time(entry, page) and _kept_its_text(entry, page)


def _same_noscript_rule(entry: dict[str, Any], page: bytes) -> bool:
    """Whether version 7's <noscript> rule takes the decision version 6's took for this render. A render redone for a
    navigation never reached the rule. One redone by the rule is of another render than the one the rule reads: never
    kept. One redone by the text-lost rule after it (the rule did not fire) is kept when the page's <noscript> holds too
    little text for the rule to fire now."""
    rules = rules_taken(entry)
    if NAVIGATED in rules:
        return True
    if NOSCRIPT_SHOWN in rules:
        return False
    if SCRIPTS_HID in rules:
        return _noscript_text_chars(page) < NOSCRIPT_MIN_CHARS
    return not _shown_only_without_scripts(entry.get("raw") or {}, page)


def uses_no_webrtc(entry: dict[str, Any], page: bytes) -> bool:
    """Whether version 8 leaves the render as version 7 made it: it takes WebRTC away from the page's scripts, and
    confines file requests to the page's folder, which changes nothing for a page saved as one file (what lies beside
    it in a data set's pages/ is other pages, which no page of the shared sets frames)."""
    return b"RTCPeerConnection" not in page


def decoded_as_before(entry: dict[str, Any], page: bytes) -> bool:
    """Whether version 9 reads the page's bytes as version 8 did: its charset detection reads only bytes that are
    neither marked, declared nor UTF-8, and only those that windows-1252 reads far less cleanly."""
    return not charset.uses_detection(page)


def _carried(*same: Callable[[dict[str, Any], bytes], bool]) -> Callable[[dict[str, Any], bytes], bool]:
    return lambda entry, page: all(rule(entry, page) for rule in same)


# Renders of earlier versions that this one makes the same, known by their cache entry and the page's bytes, so that
# a version bump that changes few pages does not make every cached render stale. Versions 4 and 5 changed only pages
# whose load event never came (an image reloading itself after failing, a frame left loading); version 6 only pages
# whose scripts took most of their text away; version 7 only pages that the <noscript> rule decides otherwise; version
# 8 only pages whose scripts use WebRTC; version 9 only undeclared pages in a legacy encoding other than windows-1252.
SINCE_7 = _carried(uses_no_webrtc, decoded_as_before)
CARRIED_OVER: dict[int, Callable[[dict[str, Any], bytes], bool]] = {
    8: decoded_as_before,
    7: SINCE_7,
    6: _carried(_same_noscript_rule, SINCE_7),
    5: _carried(_kept_its_text, _same_noscript_rule, SINCE_7),
    4: _carried(_loaded_and_kept, _same_noscript_rule, SINCE_7),
    3: _carried(_loaded_and_kept, _same_noscript_rule, SINCE_7)}

# Versions whose render of a page this one makes the same whenever the same rules shape both (CARRIED_OVER decides
# from the entry alone; these need a fresh render to compare with): version 7 changed only how the <noscript> rule
# counts, so a version-6 render that the rule rendered again is the same as a fresh one that it renders again
# (versions 8 and 9 leave such a render as it was unless the page uses WebRTC or a detected charset). Two
# renders of one page differ by a few pixels of layout now and then, and a model trained on the snapshots moves with
# them: the earlier render is kept.
SAME_WHEN_RULES_AGREE = frozenset({6})


# A page's own scripts stay off through CSP; the collector's isolated-world evaluation is not subject to the page's
# CSP (a context with JavaScript disabled hangs evaluation).
_SCRIPTS_OFF = {"content-security-policy": "script-src 'none'"}


def _archived_page(archive: ArchiveLookup | None, url: str) -> bytes | None:
    """The archived bytes of the page itself (None: not an archived render, or not in the archive)."""
    hit = archive(url.split("#", 1)[0]) if archive is not None else None
    return hit.body if hit is not None else None


def _has_frame(req: Any) -> bool:
    """Whether Playwright knows the frame of a request (it raises for a navigation issued before its frame exists)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        return req.frame is not None
    except PlaywrightError:
        return False


# An image the page asks for again after it failed this many times is answered with a transparent pixel: a page whose
# `onerror` sets the image's source again (to itself or to a fallback that fails too) otherwise reloads it without
# end, offline, and its load event never comes (the renderer waited its whole timeout). Below the count a refused
# image fails as it would offline.
IMAGE_RETRIES = 3
_PIXEL = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")


def _refuse(r: Any, state: _PageState) -> None:
    """Abort a request a local page may not make; an image that keeps being asked for gets a pixel (IMAGE_RETRIES)."""
    url = r.request.url
    if r.request.resource_type == "image":
        n = state.image_failures[url] = state.image_failures.get(url, 0) + 1
        if n > IMAGE_RETRIES:
            r.fulfill(status=200, body=_PIXEL, headers={"content-type": "image/gif"})
            return
    r.abort("blockedbyclient")


def _local_path(file_url: str) -> Path:
    return Path(unquote(urlparse(file_url).path))


def _inside(file_url: str, folder: Path) -> bool:
    """Whether a file:// URL names a path under ``folder`` once symlinks and ``..`` are resolved (a symlink in the
    page's folder that points elsewhere leads outside it)."""
    try:
        return _local_path(file_url).resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


def _missing_file(file_url: str) -> bool:
    return not _local_path(file_url).is_file()


def _read_local(file_url: str) -> bytes | None:
    try:
        return read_page_file(_local_path(file_url))
    except (OSError, TooLarge):
        return None


@dataclass
class _PageState:
    """What one render's request handlers count while the page loads."""

    sheets: dict[str, int] = field(default_factory=lambda: {"loaded": 0, "failed": 0})
    warnings: list[str] = field(default_factory=list)
    blocked: int = 0  # requests that left a local page's origin or were not in the archive
    navigations: int = 0  # main-frame navigations of a local page (the first is the page itself)
    styles_blocked: int = 0  # stylesheet requests aborted by Renderer(block_stylesheets=True)
    failed: list[str] = field(default_factory=list)  # URLs of requests that failed, whatever their kind
    file_sheets: list[str] = field(default_factory=list)  # URLs of a saved page's own stylesheets that loaded
    image_failures: dict[str, int] = field(default_factory=dict)  # image URL -> times it was refused


def _watch_requests(page: Any, state: _PageState) -> None:
    """Count the page's external stylesheets that loaded and that failed (the render class comes from these), and
    note every request that failed."""

    def finished(req: Any) -> None:
        if req.resource_type == "stylesheet":
            resp = req.response()
            ok = resp is None or resp.status < 400 or resp.status == 0
            state.sheets["loaded" if ok else "failed"] += 1
            if ok and req.url.startswith("file:"):
                state.file_sheets.append(req.url)

    def failed(req: Any) -> None:
        state.failed.append(req.url[:200])
        if req.resource_type == "stylesheet":
            state.sheets["failed"] += 1

    page.on("requestfinished", finished)
    page.on("requestfailed", failed)


# How many of the page's stylesheet links whose file: URL loaded (JSON list) the collector counted as failed: those
# whose cssRules throws, with the collector's own skips (disabled, alternate, no href). Without file access from files
# a file: page's origin is its own, so in the page a sheet beside it that loaded can throw exactly as a missing one.
_FILE_SHEETS_MISCOUNTED = """((loaded) => [...document.querySelectorAll('link[rel~="stylesheet" i]')].filter(link => {
  if (link.disabled || /\\balternate\\b/i.test(link.rel) || !link.getAttribute("href") || !loaded.includes(link.href))
    return false;
  if (!link.sheet) return false;
  try { void link.sheet.cssRules; return false; } catch (e) { return true; }
}).length)"""


def _count_file_sheets(context: Any, page: Any, raw: dict[str, Any], loaded: list[str]) -> None:
    """Count a saved page's own stylesheets that loaded (``loaded``: their URLs, from the requests) as loaded in the
    collector's figures, which cannot tell them from missing ones in the page (_FILE_SHEETS_MISCOUNTED)."""
    stats = raw.get("page", {}).get("stylesheets") if isinstance(raw.get("page"), dict) else None
    if not loaded or not isinstance(stats, dict) or not isinstance(stats.get("failed"), int):
        return
    try:
        out = _evaluate_isolated(context, page, [f"({_FILE_SHEETS_MISCOUNTED})({json.dumps(loaded)})"])
    except RenderError:
        return
    moved = min(int(out.get("result", {}).get("value") or 0), stats["failed"])
    stats["loaded"] = int(stats.get("loaded") or 0) + moved
    stats["failed"] -= moved


def _run_extras(page: Any, extra: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Evaluate each ``extra`` function in the page: (values, errors); a failing one gives None and its message."""
    from playwright.sync_api import Error as PlaywrightError

    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name, fn_source in extra.items():
        try:
            values[name] = page.evaluate(fn_source)
        except PlaywrightError as e:
            values[name] = None
            errors[name] = str(e).splitlines()[0]
    return values, errors


class Renderer:
    def __init__(
        self,
        window: tuple[int, int] = (1920, 1080),
        timeout_s: float = 15.0,
        chromium: str | None = None,
        isolated: bool = True,
        settle_ms: int = 0,
        archive: bool = False,
        block_stylesheets: bool = False,
    ) -> None:
        self.window = window
        self.timeout_s = timeout_s
        self.chromium = chromium
        self.isolated = isolated  # collect in a CDP isolated world (False: in the page's own world)
        self.settle_ms = settle_ms  # extra wait after "load" for late layout (web fonts, lazy scripts)
        self.archive = archive  # launched for archived pages only: no host name resolves (ARCHIVE_ARGS)
        # Stylesheet requests aborted: the same page laid out as if its CSS were missing (eval --styles both).
        self.block_stylesheets = block_stylesheets
        self._collector = collector_source()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pw: Any = None
        self._browser: Any = None
        self._lock = threading.Lock()
        self.sandbox_note = ""  # why the browser runs without Chromium's sandbox ("" while it has it)

    # ---- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> Renderer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        assert self._pool is not None, "Renderer not started"
        return self._pool.submit(fn, *args, **kwargs).result()

    def start(self) -> None:
        if self._pool is not None:
            return
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="centrum-render")
        try:
            self._call(self._start)
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        from .extras import need

        sync_api = need("playwright.sync_api", "render", "rendering pages")
        PlaywrightError, sync_playwright = sync_api.Error, sync_api.sync_playwright  # noqa: N806 - as imported

        exe = self.chromium or find_chromium()
        if self._pw is None:
            self._pw = sync_playwright().start()
        args = CHROMIUM_ARGS + (ARCHIVE_ARGS if self.archive else [])
        sandboxed, self.sandbox_note = sandbox_state()
        try:
            if sandboxed:
                try:
                    self._browser = self._launch(exe, args)
                except PlaywrightError as e:
                    # The kernel refused the namespaces the sandbox needs: render anyway, and say so (doctor too).
                    sandboxed = False
                    self.sandbox_note = f"Chromium could not start sandboxed: {str(e).splitlines()[0]}"
            if not sandboxed:
                self._browser = self._launch(exe, [*args, NO_SANDBOX])
        except PlaywrightError as e:
            where = exe or "Playwright's bundled Chromium"
            raise RenderError(
                f"could not start Chromium ({where}): {str(e).splitlines()[0]}. Install Debian's chromium "
                "(apt-get install chromium) or set CENTRUM_CHROMIUM to a Chromium binary."
            ) from None

    def _launch(self, exe: str | None, args: list[str]) -> Any:
        return self._pw.chromium.launch(executable_path=exe, headless=True, args=args, timeout=60_000,
                                        chromium_sandbox=NO_SANDBOX not in args)

    @property
    def sandboxed(self) -> bool:
        """Whether the running browser has Chromium's sandbox (``sandbox_note`` says why not)."""
        return self._browser is not None and not self.sandbox_note

    def close(self) -> None:
        if self._pool is None:
            return
        try:
            self._call(self._close)
        finally:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _close(self) -> None:
        if self._pw is None:  # never started (the render extra is missing, or the launch failed first)
            return
        from playwright.sync_api import Error as PlaywrightError

        try:
            if self._browser is not None:
                self._browser.close()
        except PlaywrightError:
            pass  # already gone
        finally:
            self._browser = None
            if self._pw is not None:
                self._pw.stop()
                self._pw = None

    # ---- rendering -----------------------------------------------------------------------------
    def render(
        self, target: str | os.PathLike[str], source: bool = True, extra: dict[str, str] | None = None,
        archive: ArchiveLookup | None = None,
    ) -> Rendered:
        """Load ``target``, wait for "load" (bounded), collect the snapshot, then evaluate ``extra`` functions.

        With ``archive`` (a Renderer made with ``archive=True``), ``target`` is the page's original URL and every
        request the page makes, the page itself included, is answered by ``archive(url)``; a URL it does not hold
        is refused, never fetched."""
        if archive is not None:
            if not self.archive:
                raise RenderError("archived pages need a Renderer(archive=True) (host names must not resolve)")
            url, local = os.fspath(target), False
        else:
            url, local = target_url(target)
        if self._pool is None:
            self.start()
        with self._lock:
            return self._call(self._render, url, local, source, extra or {}, archive)

    def _render(self, url: str, local: bool, source: bool, extra: dict[str, str],
                archive: ArchiveLookup | None = None) -> Rendered:
        out = self._render_once(url, local, source, extra, javascript=True, archive=archive)
        if local and out.redirects:
            # The saved page tried to leave or reload itself. Starting a navigation stops the parser, so what was
            # collected may be a fraction of the page: render it again without its scripts, as it was saved.
            again = self._render_once(url, local, source, extra, javascript=False)
            again.warnings.insert(0, f"{NAVIGATED} {out.redirects} time(s); rendered again with JavaScript "
                                     "disabled")
            return again
        page = _read_local(url) if local else _archived_page(archive, url)
        if _shown_only_without_scripts(out.raw, page):
            # The page's own scripts would draw its content (a forum's posts, a shop's description) but cannot run
            # offline; what a reader without them gets sits in <noscript>: render what that reader sees.
            again = self._render_once(url, local, source, extra, javascript=False, archive=archive, noscript=True)
            again.warnings.insert(0, f"{NOSCRIPT_SHOWN}; rendered again with JavaScript disabled")
            return again
        if _lost_to_scripts(out.raw, page):
            # Offline, a script that waits for its server (consent, paywall, a loading shell) can remove or hide the
            # text the page was saved with: a reader of the saved page wants that text, as it is without scripts.
            again = self._render_once(url, local, source, extra, javascript=False, archive=archive)
            before, after = _shown_text_chars(out.raw) or 0, _shown_text_chars(again.raw) or 0
            if after > 0 and after >= LOST_GAIN * before:
                again.warnings.insert(0, f"{SCRIPTS_HID} ({before} of {after} characters "
                                         "shown); rendered again with JavaScript disabled")
                return again
        return out

    def _render_once(self, url: str, local: bool, source: bool, extra: dict[str, str],
                     javascript: bool, archive: ArchiveLookup | None = None, noscript: bool = False) -> Rendered:
        from playwright.sync_api import Error as PlaywrightError

        t0 = time.perf_counter()
        context = self._new_context()
        state = _PageState()
        try:
            context.add_init_script(script=_NO_WEBRTC)
            if local:
                folder = _local_path(url).parent
                context.route("**/*", lambda r: self._route_local(r, state, javascript, folder))
            elif archive is not None:
                context.route("**/*", lambda r: self._route_archive(r, state, archive, javascript))
            elif self.block_stylesheets:
                context.route("**/*", lambda r: self._route_styles_only(r, state))
            if (local or archive is not None) and javascript:
                context.add_init_script(script=_CLOSE_STALLED_FRAMES)
            page = context.new_page()
            _watch_requests(page, state)
            t_nav = time.perf_counter()
            self._load(context, page, url, state.warnings)
            if javascript:
                self._settle(context, page, state.warnings)
            t_loaded = time.perf_counter()
            raw = self._collect_once_more_on_navigation(context, page, url, source, local, state.warnings,
                                                        _SHOW_NOSCRIPT if noscript else "")
            if local:
                _count_file_sheets(context, page, raw, state.file_sheets)
            t_collected = time.perf_counter()
            values, errors = _run_extras(page, extra)
            t_end = time.perf_counter()
        finally:
            try:
                context.close()
            except PlaywrightError:
                pass
        timing = {
            "load": (t_loaded - t_nav) * 1000,
            "collect": (t_collected - t_loaded) * 1000,
            "collect_in_page": float(raw.get("page", {}).get("timing", {}).get("collect_ms", 0.0)),
            "extra": (t_end - t_collected) * 1000,
            "total": (t_end - t0) * 1000,
        }
        if state.blocked:
            state.warnings.append(f"blocked {state.blocked} request(s) leaving the local page" if local else
                                  f"refused {state.blocked} request(s) not in the archive")
        if state.styles_blocked:
            state.warnings.append(f"blocked {state.styles_blocked} stylesheet request(s) (stylesheets off)")
        return Rendered(raw=raw, url=url, stylesheets=state.sheets, timing=timing, extra=values, errors=errors,
                        redirects=max(state.navigations - 1, 0), warnings=state.warnings, blocked=state.blocked,
                        failed=state.failed)

    def _new_context(self) -> Any:
        from playwright.sync_api import Error as PlaywrightError

        w, h = self.window
        options = {"viewport": {"width": w, "height": h}, "device_scale_factor": 1, "service_workers": "block"}
        try:
            return self._browser.new_context(**options)
        except PlaywrightError:
            # Chromium died (out of memory, killed): a long run (eval renders ~1400 pages) goes on with a new one.
            self._browser = None
            self._start()
            return self._browser.new_context(**options)

    def _block_style(self, r: Any, state: _PageState) -> bool:
        """Abort a stylesheet request when rendering with stylesheets off (the page then lays out as a saved page
        without its CSS would); True when it was aborted."""
        if self.block_stylesheets and r.request.resource_type == "stylesheet":
            state.styles_blocked += 1
            r.abort("blockedbyclient")
            return True
        return False

    def _route_styles_only(self, r: Any, state: _PageState) -> None:
        if not self._block_style(r, state):
            r.continue_()

    def _route_local(self, r: Any, state: _PageState, javascript: bool, folder: Path) -> None:
        """A saved page renders offline: only file:// requests inside its own folder (and inline data:) may go out."""
        req = r.request
        req_url = req.url
        if req_url.startswith("file:") and not _inside(req_url, folder):
            # What "Save page as" writes sits beside the page (its _files/ folder); anything else on disk is the
            # user's, never the page's to load, frame or read.
            state.blocked += 1
            _refuse(r, state)
            return
        if req.is_navigation_request() and not _has_frame(req):
            # A window the page opens (window.open on load): Playwright has no frame for its first navigation yet,
            # and what loads there is never part of the page's snapshot.
            state.blocked += 1
            r.fulfill(status=204, body="")
            return
        if req.is_navigation_request() and req.frame == req.frame.page.main_frame:
            state.navigations += 1
            if state.navigations > 1:
                # A saved page that sends itself elsewhere or reloads itself (script redirect, meta refresh,
                # `location = document.URL.replace("http:", "https:")`) would land on Chromium's offline error page
                # or loop; 204 No Content cancels the navigation and keeps the page.
                state.blocked += 1
                r.fulfill(status=204, body="")
                return
        if self._block_style(r, state):
            return
        if req_url.startswith("file:") and req.resource_type == "document":
            # Serve the file ourselves with a charset header: without one Chromium reads an undeclared UTF-8 file as
            # windows-1252 ("Kosovoâ€™s"), which no reader of the live page would see.
            body = _read_local(req_url)
            if body is None:
                r.continue_()
                return
            headers = {"content-type": f"text/html; charset={charset.sniff(body)}"}
            if not javascript:
                headers.update(_SCRIPTS_OFF)
            r.fulfill(status=200, body=body, headers=headers)
        elif req_url.startswith(("data:", "blob:")) or (
                req_url.startswith("file:") and not (req.resource_type == "image" and _missing_file(req_url))):
            r.continue_()
        else:
            if not req_url.startswith("file:"):
                state.blocked += 1
            _refuse(r, state)

    def _route_archive(self, r: Any, state: _PageState, archive: ArchiveLookup, javascript: bool = True) -> None:
        req_url = r.request.url
        if req_url.startswith(("data:", "blob:")):
            r.continue_()
            return
        if self._block_style(r, state):
            return
        hit = archive(req_url.split("#", 1)[0])
        if hit is None:
            state.blocked += 1
            r.abort("blockedbyclient")
        elif not javascript and r.request.resource_type == "document":
            r.fulfill(status=hit.status, headers={**hit.headers, **_SCRIPTS_OFF}, body=hit.body)
        else:
            r.fulfill(status=hit.status, headers=hit.headers, body=hit.body)

    def _load(self, context: Any, page: Any, url: str, warnings: list[str]) -> None:
        """Navigate and wait for "load" (bounded), then for one frame of layout and paint."""
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            response = page.goto(url, wait_until="load", timeout=self.timeout_s * 1000)
        except PlaywrightTimeout:
            warnings.append(f"{LOAD_TIMEOUT} {self.timeout_s:g} s; collected what had rendered")
            response = None
            # A navigation still pending (a server that accepts and never answers) makes every later evaluate wait
            # for its document forever: stop it over CDP (which does not wait), as the user's Esc would.
            stop = context.new_cdp_session(page)
            try:
                stop.send("Page.stopLoading")
            finally:
                stop.detach()
        except PlaywrightError as e:
            raise RenderError(f"could not load {url}: {str(e).splitlines()[0]}") from None
        if response is not None and response.status >= 400:
            warnings.append(f"HTTP status {response.status}")
        if self.settle_ms:
            page.wait_for_timeout(self.settle_ms)
        # Let the page lay out and paint once, as it has long done when a user presses the extension's button:
        # otherwise collect_ms would include the page's own first layout (seen: 480 ms on a 2k-element page).
        try:
            page.evaluate(_NEXT_FRAME)
        except PlaywrightError:
            pass

    def _settle(self, context: Any, page: Any, warnings: list[str]) -> None:
        """Wait (bounded) until the page's scripts stop changing its DOM; a page that navigated away meanwhile is left
        to the collector's own retry."""
        from playwright.sync_api import Error as PlaywrightError

        expression = f"({_SETTLE})({SETTLE_QUIET_MS}, {SETTLE_MAX_MS})"
        try:
            out = _evaluate_isolated(context, page, [expression], await_promise=True)
        except (RenderError, PlaywrightError):
            return
        value = out.get("result", {}).get("value") or {}
        if isinstance(value, dict) and value.get("ms", 0) >= SETTLE_MAX_MS:
            warnings.append(f"the page was still changing after {SETTLE_MAX_MS} ms; collected it as it was then")

    def _collect_once_more_on_navigation(self, context: Any, page: Any, url: str, source: bool, local: bool,
                                         warnings: list[str], prelude: str = "") -> dict[str, Any]:
        from playwright.sync_api import Error as PlaywrightError

        try:
            text = self._collect(context, page, source, offline=local, prelude=prelude)
        except PlaywrightError:
            # The page navigated itself (meta refresh, script redirect) and took our world with it: collect the page
            # it went to, once, after its load (bounded like the first).
            warnings.append(f"the page navigated during collection (now {page.url}); collected again")
            try:
                page.wait_for_load_state("load", timeout=self.timeout_s * 1000)
                text = self._collect(context, page, source, offline=local)
            except PlaywrightError as e:
                raise RenderError(f"could not collect {url}: {str(e).splitlines()[0]}") from None
        try:
            raw = json.loads(text)
        except (TypeError, json.JSONDecodeError) as e:
            raise RenderError(f"collector returned no snapshot for {url}: {e}") from None
        return raw if isinstance(raw, dict) else {}

    def _collect(self, context: Any, page: Any, source: bool, offline: bool, prelude: str = "") -> str:
        """Evaluate collect.js and return the snapshot as JSON text (one string crosses CDP, not a deep object);
        ``prelude`` runs first, in the same world."""
        options = json.dumps({"source": source, "offline": offline})
        call = f"JSON.stringify(globalThis.centrumCollect({options}))"
        if not self.isolated:
            if prelude:
                page.evaluate(prelude)
            page.evaluate(self._collector)
            return str(page.evaluate(call))
        out = _evaluate_isolated(context, page, [*([prelude] if prelude else []), self._collector, call])
        return str(out["result"].get("value"))


def _evaluate_isolated(context: Any, page: Any, expressions: list[str], await_promise: bool = False) -> dict[str, Any]:
    """Evaluate ``expressions`` in order in a fresh isolated world of the page's main frame (page scripts cannot see
    or replace its globals); returns the last CDP answer. An exception in the page's world is a RenderError."""
    cdp = context.new_cdp_session(page)
    try:
        tree = cdp.send("Page.getFrameTree")
        world = cdp.send("Page.createIsolatedWorld", {
            "frameId": tree["frameTree"]["frame"]["id"], "worldName": "centrum", "grantUniveralAccess": True})
        ctx = world["executionContextId"]
        out: dict[str, Any] = {}
        for expression in expressions:
            out = cdp.send("Runtime.evaluate", {"expression": expression, "contextId": ctx,
                                                 "returnByValue": True, "awaitPromise": await_promise})
            if "exceptionDetails" in out:
                details = out["exceptionDetails"]
                message = details.get("exception", {}).get("description") or details.get("text", "")
                raise RenderError(f"collector failed: {message}")
        return out
    finally:
        try:
            cdp.detach()
        except Exception:  # noqa: BLE001 - the page may already be gone; nothing to clean up then
            pass


def render(target: str | os.PathLike[str], source: bool = True, window: tuple[int, int] = (1920, 1080),
           timeout_s: float = 15.0) -> Rendered:
    """One-shot convenience: start a browser, render one page, close."""
    with Renderer(window=window, timeout_s=timeout_s) as r:
        return r.render(target, source=source)
