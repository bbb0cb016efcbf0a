"""The Python API: ``centrum.extract(page)`` and a reusable ``centrum.Extractor`` for many pages.

::

    import centrum

    text = centrum.extract("https://example.org/story")                 # main content as text
    md = centrum.extract(Path("saved.html"), output="markdown")           # GitHub-flavoured Markdown
    data = centrum.extract("<html>…</html>", output="json", url="https://example.org/story")

    with centrum.Extractor(output="markdown") as ex:                      # one browser for many pages
        for path in Path("pages").glob("*.html"):
            print(ex.extract(path))

``page`` is HTML (``str`` or ``bytes``), a URL (a ``str`` starting with ``http://`` or ``https://``), a
``pathlib.Path`` to a local HTML file, or a snapshot (the collector's ``dict``, or a parsed ``Snapshot``). Any other
``str`` is HTML, even one that looks like a file name: pass files as ``Path``. HTML and files are rendered in
headless Chromium with the extension's collector, exactly like ``centrum extract`` (offline: a local page loads no
network resource); a snapshot is used as it is (html/markdown need its ``source``).

Errors are exceptions, never a hang: ``TypeError`` for a page of another type, ``FileNotFoundError`` for a missing
``Path``, ``ValueError`` for an unknown output or algorithm, bad parameters (``centrum.config.ConfigError``) or an
invalid snapshot (``centrum.snapshot.SnapshotError``), ``centrum.RenderError`` when the page cannot be rendered
(Chromium missing, navigation failure); page loads are bounded by ``timeout`` seconds. A page without main content
gives ``""`` (text, markdown, html) or a dict with empty ``nodes`` and the algorithm's ``message`` (json).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from .render import Renderer
    from .snapshot import Snapshot

Output = Literal["text", "markdown", "html", "json"]
Page: TypeAlias = "str | bytes | Path | dict[str, Any] | Snapshot"
DEFAULT_TIMEOUT = 15.0
DEFAULT_WINDOW = (1920, 1080)


def _is_url(page: str) -> bool:
    head = page.lstrip()[:8].lower()
    return head.startswith(("http://", "https://")) and not any(c.isspace() for c in page.strip())


def _check_output(output: str) -> None:
    from .outputs import FORMATS

    if output not in FORMATS:
        raise ValueError(f"unknown output {output!r} (known: {', '.join(FORMATS)})")


def _check_algorithm(name: str) -> None:
    from . import algorithms

    if name not in algorithms.REGISTRY:
        raise ValueError(f"unknown algorithm {name!r} (known: {', '.join(algorithms.REGISTRY)})")


class Extractor:
    """Extracts many pages with one headless Chromium (started on first use, closed by ``close()`` or ``with``).

    Keyword arguments set the defaults of :meth:`extract`: ``algorithm`` (None: the default, ``ensemble``),
    ``output`` (``text`` | ``markdown`` | ``html`` | ``json``), ``params`` (algorithm parameters), ``timeout``
    (seconds for a page load), ``window`` (browser window, width × height).
    """

    def __init__(self, *, algorithm: str | None = None, output: Output = "text", params: dict[str, Any] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, window: tuple[int, int] = DEFAULT_WINDOW) -> None:
        from . import algorithms

        _check_output(output)
        self.algorithm = algorithm or algorithms.DEFAULT_ALGORITHM
        _check_algorithm(self.algorithm)
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if not (len(window) == 2 and all(isinstance(v, int) and v > 0 for v in window)):
            raise ValueError(f"window must be two positive integers (width, height), got {window!r}")
        self.output: Output = output
        self.params = dict(params or {})
        self.timeout = float(timeout)
        self.window = window
        self._renderer: Renderer | None = None

    def __enter__(self) -> Extractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the browser (the next ``extract`` starts a new one)."""
        if self._renderer is not None:
            renderer, self._renderer = self._renderer, None
            renderer.close()

    def _render(self, target: str | os.PathLike[str]) -> dict[str, Any]:
        from .render import Renderer

        if self._renderer is None:
            renderer = Renderer(window=self.window, timeout_s=self.timeout)
            renderer.start()
            self._renderer = renderer
        return self._renderer.render(target, source=True).raw

    def snapshot(self, page: Page) -> Snapshot:
        """The parsed snapshot of ``page``, rendered first unless it is one already."""
        from .snapshot import Snapshot, parse_snapshot

        if isinstance(page, Snapshot):
            return page
        if isinstance(page, dict):
            return parse_snapshot(page)
        if isinstance(page, Path):
            if not page.is_file():
                raise FileNotFoundError(f"no such file: {page}")
            return parse_snapshot(self._render(page))
        if isinstance(page, str) and _is_url(page):
            return parse_snapshot(self._render(page.strip()))
        if isinstance(page, (str, bytes)):
            data = page.encode("utf-8") if isinstance(page, str) else page
            # The renderer loads files and URLs; HTML in memory goes through a private temporary file (served
            # offline like any local page, charset sniffed from the bytes).
            with tempfile.TemporaryDirectory(prefix="centrum-") as tmp:
                path = Path(tmp) / "page.html"
                path.write_bytes(data)
                return parse_snapshot(self._render(path))
        raise TypeError(f"page must be HTML (str or bytes), an http(s) URL, a pathlib.Path or a snapshot dict, "
                        f"not {type(page).__name__}")

    def extract(self, page: Page, *, algorithm: str | None = None, output: Output | None = None,
                params: dict[str, Any] | None = None, url: str | None = None,
                debug: bool = False) -> str | dict[str, Any]:
        """The main content of ``page`` in ``output`` format (``json``: a dict). ``url`` is the page's address for
        HTML handed over as str/bytes (links and images are resolved against it); ``debug`` keeps the algorithm's
        trace in the json output."""
        from . import algorithms
        from .outputs import Outputs

        output = output or self.output
        _check_output(output)
        name = algorithm or self.algorithm
        _check_algorithm(name)
        if url is not None and not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__}")
        t0 = time.perf_counter()
        snapshot = self.snapshot(page)
        if url is None and isinstance(page, (str, bytes)) and not (isinstance(page, str) and _is_url(page)):
            url = "about:blank"  # HTML from memory has no address (not the temporary file it was rendered from)
        t1 = time.perf_counter()
        try:
            result = algorithms.run(name, snapshot, {**self.params, **(params or {})})
        except algorithms.UnknownAlgorithm as e:  # a KeyError: a ValueError names the problem better
            raise ValueError(str(e)) from None
        out = Outputs(snapshot, result, url=url, timing_ms={"render_and_parse": (t1 - t0) * 1000})
        if output != "json" and not result.nodes and not result.text:
            return ""
        return out.get(output, with_debug=debug)


def extract(page: Page, *, algorithm: str | None = None, output: Output = "text", params: dict[str, Any] | None = None,
            timeout: float = DEFAULT_TIMEOUT, url: str | None = None,
            window: tuple[int, int] = DEFAULT_WINDOW) -> str | dict[str, Any]:
    """The main content of one page (see the module docstring); starts and closes a browser when the page needs
    rendering. For many pages use :class:`Extractor`, which keeps one browser."""
    with Extractor(algorithm=algorithm, output=output, params=params, timeout=timeout, window=window) as ex:
        return ex.extract(page, url=url)
