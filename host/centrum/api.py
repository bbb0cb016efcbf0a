"""The Python API: ``centrum.extract(page)``, ``centrum.extract_many(pages)`` and ``centrum.Extractor``.

::

    import centrum

    text = centrum.extract("https://example.org/story")                       # main content as text
    md = centrum.extract(Path("saved.html"), output_format="markdown")          # GitHub-flavoured Markdown
    data = centrum.extract(html, output_format="json", url="https://example.org/story")
    fast = centrum.extract(Path("saved.html"), render=False)                    # source-only model, no browser

    for r in centrum.extract_many(Path("pages").glob("*.html"), workers=2, progress=True):
        print(r.page, r.metadata.title if r.metadata else None, len(r.text), r.error)

``page`` is HTML (``str`` or ``bytes``), a URL (a ``str`` starting with ``http://`` or ``https://``), a
``pathlib.Path`` to a local HTML file, or a snapshot (the collector's ``dict``, or a parsed ``Snapshot``). A ``str``
that names a file is refused (ValueError pointing at ``Path(...)``): rendered as HTML it would give the file name
back as the page's content. HTML and files are rendered in headless Chromium with the extension's collector,
exactly like ``centrum extract`` (offline: a local page loads no network resource); a snapshot is used as it is.

One browser per process: ``extract`` and ``extract_many`` share one headless Chromium, started on first need and
kept until the process ends (or :func:`close`), so every call after the first costs about one page's render. An
``Extractor`` has a browser of its own, closed by ``close()`` or its ``with`` block. ``render=False`` runs the
source-only model (or another raw-HTML algorithm) on the HTML itself: no browser, text only.

Everything a call can know is wrong is refused before any page is loaded: output format, algorithm, parameters
(types, ranges and size limits: ``centrum.core.config.ConfigError``), ``timeout``, ``window``, ``workers``, the page's
type
and size, a ``str`` naming a file. Errors are exceptions, never a hang: ``TypeError`` for a page of another type,
``FileNotFoundError`` for a missing ``Path``, ``ValueError`` for bad options (ConfigError and
``centrum.core.snapshot.SnapshotError`` are ValueErrors), ``centrum.RenderError`` when the page cannot be rendered; page
loads are bounded by ``timeout`` seconds. ``extract_many`` never stops for one page: its error is in
``Result.error``. docs/api.md is the user's page.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sized
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .core import limits

if TYPE_CHECKING:
    from .core.metadata import Metadata
    from .core.render import Renderer
    from .core.result import Candidate
    from .core.result import Result as AlgorithmResult
    from .core.snapshot import Snapshot
    from .output.outputs import Outputs

OutputFormat = Literal["text", "markdown", "html", "json"]
Output = OutputFormat  # the name before trafilatura's output_format was adopted
Page: TypeAlias = "str | bytes | Path | dict[str, Any] | Snapshot"
DEFAULT_TIMEOUT = 15.0
DEFAULT_WINDOW = (1920, 1080)
# Rendering is serial in the one browser; a second worker runs the algorithm and the outputs of one page while the
# browser renders the next.
DEFAULT_WORKERS = 2
# trafilatura's name for the text format, accepted so that its callers' arguments work unchanged.
_ALIASES = {"txt": "text"}
# A str without markup naming a file (or looking like an HTML file's name) is a file meant as a page, not HTML.
_FILE_SUFFIXES = (".html", ".htm", ".xhtml", ".xht", ".shtml")
_PATH_CHARS = 4096


def _is_url(page: str) -> bool:
    head = page.lstrip()[:8].lower()
    return head.startswith(("http://", "https://")) and not any(c.isspace() for c in page.strip())


def check_output_format(output_format: str) -> str:
    """The output format's canonical name (``txt`` is ``text``); ValueError for an unknown one."""
    from .output.outputs import FORMATS

    name = _ALIASES.get(output_format, output_format) if isinstance(output_format, str) else output_format
    if name not in FORMATS:
        raise ValueError(f"unknown output format {output_format!r} (known: {', '.join(FORMATS)})")
    return str(name)


def check_algorithm(name: str, params: dict[str, Any] | None, render: bool) -> None:
    """Refuse, before any work, an unknown algorithm, one that cannot run without a browser when ``render`` is
    False, and parameters it would refuse (types, ranges, size limits: ConfigError naming the key)."""
    from . import algorithms
    from .core.config import config_from_dict

    if name not in algorithms.REGISTRY:
        raise ValueError(f"unknown algorithm {name!r} (known: {', '.join(algorithms.REGISTRY)})")
    if not render:
        algorithms.raw_html_config(name, params)  # ValueError naming the raw-HTML algorithms, or ConfigError
        return
    _, module = algorithms.load(name)  # AlgorithmUnavailable (a missing extra) now, not after the render
    if params and hasattr(module, "Config"):
        config_from_dict(module.Config, params)


def check_page_size(size: int, what: str) -> None:
    """The page size limit of ``centrum batch``'s files (limits.PAGE_FILE_BYTES), checked before a page renders."""
    if size > limits.PAGE_FILE_BYTES:
        raise ValueError(f"{what} is {size / limits.MIB:.1f} MiB, over the page_file_bytes limit of "
                         f"{limits.PAGE_FILE_BYTES // limits.MIB} MiB")


def _check_str_page(page: str) -> None:
    if "<" in page or "\n" in page or len(page) > _PATH_CHARS:
        return
    try:
        is_file = Path(page).is_file()
    except (OSError, ValueError):  # not a possible path at all (NUL, too long for the system)
        return
    if is_file:
        raise ValueError(f"page {page!r} is a str naming a file; a str is HTML or an http(s) URL: pass "
                         f"Path({page!r}) to extract the file")
    if page.strip().lower().endswith(_FILE_SUFFIXES):
        raise ValueError(f"page {page!r} looks like a file name, and no such file exists; a str is HTML or an "
                         f"http(s) URL: pass files as Path(...)")


def check_page(page: object, render: bool) -> None:
    """Refuse, before any work, a page of another type, a missing or oversized file, a ``str`` naming a file,
    oversized HTML, and what ``render=False`` cannot read (URLs, snapshots)."""
    from .core.snapshot import Snapshot

    if isinstance(page, (dict, Snapshot)):
        if not render:
            raise ValueError("render=False reads HTML (str, bytes or Path); a snapshot is already rendered: "
                             "leave render=True (a snapshot starts no browser)")
        return
    if isinstance(page, Path):
        if not page.is_file():
            raise FileNotFoundError(f"no such file: {page}")
        check_page_size(page.stat().st_size, f"file {page}")
        return
    if isinstance(page, str):
        if _is_url(page):
            if not render:
                raise ValueError("render=False reads HTML you give it (str, bytes or Path), it fetches no URL")
            return
        _check_str_page(page)
        check_page_size(len(page.encode("utf-8", "surrogatepass")) if len(page) * 3 > limits.PAGE_FILE_BYTES
                        else len(page), "the HTML")
        return
    if isinstance(page, (bytes, bytearray)):
        check_page_size(len(page), "the HTML")
        return
    raise TypeError(f"page must be HTML (str or bytes), an http(s) URL, a pathlib.Path or a snapshot dict, "
                    f"not {type(page).__name__}")


@dataclass
class Result:
    """One page's extraction (:func:`extract_many`, :meth:`Extractor.result`). ``markdown`` and ``html`` are None
    without node ids (``render=False``), ``metadata`` None with ``with_metadata=False``, ``candidates`` None unless
    ``with_candidates=True``. A page that failed has ``error`` set and empty content."""

    page: Any  # the page as given (a Path, a URL, the HTML itself, a snapshot)
    index: int  # its position in the pages given to extract_many (0 for one page)
    algorithm: str
    text: str = ""
    markdown: str | None = None
    html: str | None = None
    metadata: Metadata | None = None
    nodes: list[int] = field(default_factory=list)
    message: str = ""  # why there is no content (the algorithm's note), "" when there is
    candidates: list[Candidate] | None = None
    timing_ms: dict[str, float] = field(default_factory=dict)  # render (with parse), algorithm, outputs, total
    error: Exception | None = None

    @property
    def ok(self) -> bool:
        """The page was extracted (its content may still be empty: see ``message``)."""
        return self.error is None


@dataclass(frozen=True)
class _Options:
    algorithm: str
    output_format: str
    params: dict[str, Any]
    with_metadata: bool
    with_candidates: bool
    render: bool
    debug: bool


@dataclass
class _Done:
    """What one page gave before it is formatted: the algorithm's result and, rendered, its outputs."""

    result: AlgorithmResult
    outputs: Outputs | None  # None with render=False
    text: str
    metadata: Metadata | None
    timing_ms: dict[str, float]


class Extractor:
    """Extracts many pages with one headless Chromium of its own (started on first need, closed by ``close()`` or
    ``with``).

    Keyword arguments set the defaults of :meth:`extract`, :meth:`result` and :meth:`extract_many`: ``algorithm``
    (None: ``ensemble``, or the source-only ``source`` with ``render=False``), ``output_format`` (``text`` |
    ``markdown`` | ``html`` | ``json``; ``output`` is its former name), ``params`` (algorithm parameters),
    ``with_metadata`` (Markdown's front matter and json's ``metadata``), ``with_candidates`` (the candidates each
    algorithm scored, in json and Result), ``render`` (False: raw HTML, no browser), ``timeout`` (seconds for a page
    load), ``window`` (browser window, width x height). Everything is checked here, before any page.
    """

    def __init__(self, *, algorithm: str | None = None, output_format: OutputFormat | None = None,
                 output: OutputFormat | None = None, params: dict[str, Any] | None = None,
                 with_metadata: bool = True, with_candidates: bool = False, render: bool = True,
                 timeout: float = DEFAULT_TIMEOUT, window: tuple[int, int] = DEFAULT_WINDOW) -> None:
        timeout, window = _check_browser(timeout, window)
        self.algorithm = algorithm
        self.output_format = check_output_format(_format_argument(output_format, output) or "text")
        self.params = dict(params or {})
        self.with_metadata = bool(with_metadata)
        self.with_candidates = bool(with_candidates)
        self.render = bool(render)
        self.timeout = timeout
        self.window = window
        self._options()  # the defaults themselves must pass, whatever a call overrides later
        self._renderer: Renderer | None = None
        self._renderer_lock = threading.Lock()
        self._pid = os.getpid()

    @property
    def output(self) -> str:
        """The default output format (``output_format``'s former name)."""
        return self.output_format

    def __enter__(self) -> Extractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the browser (the next page that needs one starts a new one)."""
        with self._renderer_lock:
            renderer, self._renderer = self._renderer, None
        if renderer is not None and self._pid == os.getpid():
            renderer.close()

    # ---- options --------------------------------------------------------------------------------------------------
    def _options(self, *, algorithm: str | None = None, output_format: str | None = None,
                 params: dict[str, Any] | None = None, with_metadata: bool | None = None,
                 with_candidates: bool | None = None, render: bool | None = None, debug: bool = False) -> _Options:
        """The options of one call, this Extractor's defaults under its overrides, every one checked."""
        from . import algorithms

        render = self.render if render is None else bool(render)
        name = algorithm or self.algorithm or (algorithms.DEFAULT_ALGORITHM if render else algorithms.SOURCE_DEFAULT)
        fmt = check_output_format(output_format or self.output_format)
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"params must be a dict, not {type(params).__name__}")
        merged = {**self.params, **(params or {})}
        check_algorithm(name, merged, render)
        if not render and fmt in ("markdown", "html"):
            raise ValueError(f"output format {fmt!r} needs a rendered page (node ids): render=False gives text and "
                             "json")
        return _Options(name, fmt, merged, self.with_metadata if with_metadata is None else bool(with_metadata),
                        self.with_candidates if with_candidates is None else bool(with_candidates), render,
                        bool(debug))

    # ---- rendering ------------------------------------------------------------------------------------------------
    def _renderer_for_page(self) -> Renderer:
        from .core.render import Renderer

        with self._renderer_lock:
            if self._pid != os.getpid():
                # A forked child: the parent's browser and its worker thread are not ours (using them would hang).
                self._renderer, self._pid = None, os.getpid()
            if self._renderer is None:
                renderer = Renderer(window=self.window, timeout_s=self.timeout)
                renderer.start()
                self._renderer = renderer
            return self._renderer

    def _render(self, target: str | os.PathLike[str]) -> dict[str, Any]:
        return self._renderer_for_page().render(target, source=True).raw

    def snapshot(self, page: Page) -> Snapshot:
        """The parsed snapshot of ``page``, rendered first unless it is one already."""
        check_page(page, render=True)
        return self._snapshot(page)

    def _snapshot(self, page: Page) -> Snapshot:
        from .core.snapshot import Snapshot, parse_snapshot

        if isinstance(page, Snapshot):
            return page
        if isinstance(page, dict):
            return parse_snapshot(page)
        if isinstance(page, Path):
            return parse_snapshot(self._render(page))
        if isinstance(page, str) and _is_url(page):
            return parse_snapshot(self._render(page.strip()))
        data = page.encode("utf-8") if isinstance(page, str) else bytes(page)
        # The renderer loads files and URLs; HTML in memory goes through a private temporary file (served offline
        # like any local page, charset sniffed from the bytes).
        with tempfile.TemporaryDirectory(prefix="centrum-") as tmp:
            path = Path(tmp) / "page.html"
            path.write_bytes(data)
            return parse_snapshot(self._render(path))

    # ---- one page -------------------------------------------------------------------------------------------------
    def _run(self, page: Page, opts: _Options, url: str | None) -> _Done:
        from . import algorithms
        from .output.outputs import Outputs

        t0 = time.perf_counter()
        if not opts.render:
            return self._run_source(page, opts, url, t0)
        snapshot = self._snapshot(page)
        if url is None and isinstance(page, (str, bytes, bytearray)) and not (isinstance(page, str) and _is_url(page)):
            url = "about:blank"  # HTML from memory has no address (not the temporary file it was rendered from)
        t1 = time.perf_counter()
        try:
            result = algorithms.run(opts.algorithm, snapshot, opts.params)
        except algorithms.UnknownAlgorithm as e:  # a KeyError: a ValueError names the problem better
            raise ValueError(str(e)) from None
        out = Outputs(snapshot, result, url=url, timing_ms={"render": (t1 - t0) * 1000})
        metadata = out.metadata() if opts.with_metadata else None
        return _Done(result, out, out.text, metadata, out.timing_ms)

    def _run_source(self, page: Page, opts: _Options, url: str | None, t0: float) -> _Done:
        from . import algorithms
        from .core import charset

        if isinstance(page, Path):
            data: str | bytes = limits.read_page_file(page)
        else:
            data = page if isinstance(page, str) else bytes(page)  # type: ignore[arg-type]
        html = charset.decode(data) if isinstance(data, bytes) else data
        t1 = time.perf_counter()
        result = algorithms.run_raw_html(opts.algorithm, html, algorithms.raw_html_config(opts.algorithm,
                                                                                          opts.params))
        text = result.text or ""
        metadata = None
        timing = {"read": (t1 - t0) * 1000}
        if opts.with_metadata:
            from .core.metadata import extract_metadata
            from .output.outputs import from_html

            t2 = time.perf_counter()
            metadata = extract_metadata(from_html(html, url or "about:blank"), None, text)
            if url is None:
                metadata.url = None if metadata.url == "about:blank" else metadata.url
            timing["metadata"] = (time.perf_counter() - t2) * 1000
        return _Done(result, None, text, metadata, timing)

    def _format(self, done: _Done, opts: _Options) -> str | dict[str, Any]:
        fmt = opts.output_format
        empty = not done.result.nodes and not done.text
        if fmt == "json":
            if done.outputs is not None:
                payload = done.outputs.json(with_debug=opts.debug)
            else:
                payload = done.result.to_json(with_debug=opts.debug)
                payload["text"] = done.text
                payload["timing_ms"] = {**payload.get("timing_ms", {}), **done.timing_ms}
            if opts.with_metadata and done.metadata is not None:
                payload["metadata"] = done.metadata.to_json()
            else:
                payload.pop("metadata", None)
            if not opts.with_candidates:
                payload.pop("candidates", None)  # every candidate carries its feature list: kilobytes per page
            return payload
        if empty:
            return ""
        if fmt == "text":
            return done.text
        assert done.outputs is not None  # _options refuses markdown and html without a rendering
        if fmt == "html":
            return done.outputs.html()
        return self._markdown(done.outputs, opts.with_metadata)

    @staticmethod
    def _markdown(out: Outputs, with_metadata: bool) -> str:
        from .output.markdown import front_matter

        md = out.markdown()
        if not with_metadata:
            # The document without its front matter: the same title heading and body.
            head = front_matter(out.metadata())
            if head and md.startswith(head):
                md = md[len(head):].removeprefix("\n")
        return md

    def extract(self, page: Page, *, algorithm: str | None = None, output_format: OutputFormat | None = None,
                output: OutputFormat | None = None, params: dict[str, Any] | None = None, url: str | None = None,
                with_metadata: bool | None = None, with_candidates: bool | None = None, render: bool | None = None,
                debug: bool = False) -> str | dict[str, Any]:
        """The main content of ``page`` in ``output_format`` (``json``: a dict); ``""`` when the algorithm found
        none. ``url`` is the page's address for HTML handed over as str/bytes (links and images are resolved
        against it); ``debug`` keeps the algorithm's trace in the json output. Other keywords override this
        Extractor's defaults for this call."""
        # The page first: refusing a str that names a file needs no algorithm imported.
        check_page(page, self.render if render is None else bool(render))
        opts = self._options(algorithm=algorithm, output_format=_format_argument(output_format, output),
                             params=params, with_metadata=with_metadata, with_candidates=with_candidates,
                             render=render, debug=debug)
        _check_url(url)
        return self._format(self._run(page, opts, url), opts)

    def result(self, page: Page, *, algorithm: str | None = None, params: dict[str, Any] | None = None,
               url: str | None = None, with_metadata: bool | None = None, with_candidates: bool | None = None,
               render: bool | None = None) -> Result:
        """Every output of ``page`` as a :class:`Result` (errors raise, as in :meth:`extract`)."""
        check_page(page, self.render if render is None else bool(render))
        opts = self._options(algorithm=algorithm, params=params, with_metadata=with_metadata,
                             with_candidates=with_candidates, render=render)
        _check_url(url)
        return self._result(page, 0, opts, url, time.perf_counter())

    def _result(self, page: Page, index: int, opts: _Options, url: str | None, t0: float) -> Result:
        from .output.outputs import OutputError, content_text

        done = self._run(page, opts, url)
        r = Result(page=page, index=index, algorithm=opts.algorithm, text=done.text, metadata=done.metadata,
                   nodes=list(done.result.nodes), message=done.result.message)
        if opts.with_candidates:
            r.candidates = list(done.result.candidates)
        if done.outputs is not None and done.result.nodes:
            t1 = time.perf_counter()
            try:
                r.html = done.outputs.html()
                r.markdown = self._markdown(done.outputs, opts.with_metadata)
            except OutputError:  # a snapshot without its source: text only
                r.text = content_text(done.outputs.snapshot, done.result)
            done.timing_ms["outputs"] = (time.perf_counter() - t1) * 1000
        elif done.outputs is not None:
            r.markdown = r.html = ""  # rendered, no main content: empty documents, as extract() gives
        r.timing_ms = {**done.result.timing_ms, **done.timing_ms, "total": (time.perf_counter() - t0) * 1000}
        return r

    # ---- many pages -----------------------------------------------------------------------------------------------
    def extract_many(self, pages: Iterable[Page | tuple[Page, str]], *, workers: int = DEFAULT_WORKERS,
                     progress: bool = False, algorithm: str | None = None, params: dict[str, Any] | None = None,
                     with_metadata: bool | None = None, with_candidates: bool | None = None,
                     render: bool | None = None) -> Iterator[Result]:
        """A :class:`Result` per page, yielded as each finishes (``Result.index`` is its position in ``pages``).
        An item may be ``(page, url)`` to give HTML its address. ``workers`` threads share this Extractor's one
        browser (rendering is serial in it; the others run algorithms and outputs meanwhile); ``progress`` shows a
        tqdm bar. Options are checked now, before any page; a page's own error is in its Result's ``error``."""
        opts = self._options(algorithm=algorithm, params=params, with_metadata=with_metadata,
                             with_candidates=with_candidates, render=render)
        if not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        if isinstance(pages, (str, bytes, Path, dict)):
            raise TypeError("extract_many takes an iterable of pages (a list, a generator); for one page use extract")
        total = len(pages) if isinstance(pages, Sized) else None
        return self._many(iter(pages), opts, workers, progress, total)

    def _one(self, item: Page | tuple[Page, str], index: int, opts: _Options) -> Result:
        t0 = time.perf_counter()
        page, url = item if isinstance(item, tuple) else (item, None)
        try:
            _check_url(url)
            check_page(page, opts.render)
            return self._result(page, index, opts, url, t0)
        except Exception as e:  # noqa: BLE001 - one page's failure is its Result's, the others go on
            return Result(page=page, index=index, algorithm=opts.algorithm, error=e,
                          timing_ms={"total": (time.perf_counter() - t0) * 1000})

    def _many(self, pages: Iterator[Page | tuple[Page, str]], opts: _Options, workers: int, progress: bool,
              total: int | None) -> Iterator[Result]:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="page", desc="centrum", disable=not progress)
        pending: set[Future[Result]] = set()
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="centrum-extract")
        try:
            for index, item in enumerate(pages):
                # A few pages in flight per worker: a generator of a million pages is read as the work goes.
                while len(pending) >= 2 * workers:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        bar.update()
                        yield f.result()
                pending.add(pool.submit(self._one, item, index, opts))
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    bar.update()
                    yield f.result()
        finally:
            for f in pending:  # the caller stopped early: pages not started are not rendered
                f.cancel()
            pool.shutdown(wait=True)
            bar.close()


def _format_argument(output_format: str | None, output: str | None) -> str | None:
    if output_format is not None and output is not None and output_format != output:
        raise TypeError("give output_format or its former name output, not both")
    return output_format if output_format is not None else output


def _check_browser(timeout: object, window: object) -> tuple[float, tuple[int, int]]:
    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not (isinstance(window, (tuple, list)) and len(window) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in window)):
        raise ValueError(f"window must be two positive integers (width, height), got {window!r}")
    return float(timeout), (window[0], window[1])


def _check_url(url: object) -> None:
    if url is not None and not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")


# ---- the process's browser ------------------------------------------------------------------------------------------
# extract() and extract_many() share one Extractor (and so one browser) per timeout and window, kept until the process
# ends: a caller's loop over extract() pays for the browser's start once.
_shared: dict[tuple[float, tuple[int, int]], Extractor] = {}
_shared_lock = threading.Lock()


def _shared_extractor(timeout: object, window: object) -> Extractor:
    key = _check_browser(timeout, window)
    with _shared_lock:
        ex = _shared.get(key)
        if ex is None:
            ex = _shared[key] = Extractor(timeout=key[0], window=key[1])
        return ex


def close() -> None:
    """Close the browser that :func:`extract` and :func:`extract_many` keep (the next page starts a new one)."""
    with _shared_lock:
        extractors = list(_shared.values())
        _shared.clear()
    for ex in extractors:
        ex.close()


def _forget_in_child() -> None:
    # The parent's browsers belong to the parent; the child starts its own on first need.
    global _shared_lock
    _shared_lock = threading.Lock()
    _shared.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def extract(page: Page, *, output_format: OutputFormat | None = None, url: str | None = None,
            with_metadata: bool = True, algorithm: str | None = None, params: dict[str, Any] | None = None,
            render: bool = True, with_candidates: bool = False, timeout: float = DEFAULT_TIMEOUT,
            window: tuple[int, int] = DEFAULT_WINDOW, output: OutputFormat | None = None,
            debug: bool = False) -> str | dict[str, Any]:
    """The main content of one page in ``output_format`` (default ``text``; see the module docstring). Pages that
    need rendering share the process's browser, started on the first such call."""
    fmt = _format_argument(output_format, output) or "text"
    check_page(page, bool(render))  # before the shared Extractor imports its algorithm
    # A render=False call goes through the same Extractor and starts no browser: only a page to render starts one.
    return _shared_extractor(timeout, window).extract(
        page, algorithm=algorithm, output_format=fmt, params=params, url=url,  # type: ignore[arg-type]
        with_metadata=with_metadata, with_candidates=with_candidates, render=render, debug=debug)


def extract_many(pages: Iterable[Page | tuple[Page, str]], *, workers: int = DEFAULT_WORKERS, progress: bool = False,
                 with_metadata: bool = True, algorithm: str | None = None, params: dict[str, Any] | None = None,
                 render: bool = True, with_candidates: bool = False, timeout: float = DEFAULT_TIMEOUT,
                 window: tuple[int, int] = DEFAULT_WINDOW) -> Iterator[Result]:
    """:meth:`Extractor.extract_many` with the process's browser: a :class:`Result` per page as each finishes."""
    return _shared_extractor(timeout, window).extract_many(
        pages, workers=workers, progress=progress, algorithm=algorithm, params=params, with_metadata=with_metadata,
        with_candidates=with_candidates, render=render)

