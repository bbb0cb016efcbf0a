"""The Python API (centrum.extract, centrum.Extractor): every kind of page, every output, bad input.

Pages are rendered in the real headless Chromium (one Extractor for the module); snapshots made with
centrum.testing need no browser.
"""

from __future__ import annotations

import functools
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import centrum
from centrum.config import ConfigError
from centrum.serve import QuietFileHandler, loopback
from centrum.snapshot import SnapshotError
from centrum.testing import E, T, build

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "fixtures" / "sample" / "article.html"
ARTICLE = "<html><head><title>Ferry news - Courier</title></head><body><nav><a href='/n'>News</a></nav><article>" \
          "<h1>Ferry terminal reopens</h1><p>" + "The terminal reopened as a library on Friday. " * 8 + \
          "<a href='more.html'>more</a></p><p><img data-src='pics/hall.jpg' alt='The hall'></p></article></body></html>"


@pytest.fixture(scope="module")
def ex() -> Iterator[centrum.Extractor]:
    with centrum.Extractor(algorithm="semantic", timeout=10) as extractor:
        yield extractor


def test_import_is_cheap() -> None:
    code = ("import sys, centrum; heavy = [m for m in ('numpy', 'lxml', 'playwright') if m in sys.modules]; "
            "print(heavy, centrum.__version__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"[] {centrum.__version__}"


@pytest.mark.parametrize("page", [123, None, ["<p>x</p>"], 1.5])
def test_wrong_page_type_is_a_type_error(page: object) -> None:
    with pytest.raises(TypeError, match="page must be HTML"):
        centrum.extract(page)  # type: ignore[arg-type]


def test_missing_path_is_file_not_found() -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        centrum.extract(Path("/nonexistent/page.html"))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"output": "pdf"}, "unknown output 'pdf'"),
    ({"algorithm": "nope"}, "unknown algorithm 'nope'"),
    ({"timeout": 0}, "timeout must be a positive"),
    ({"window": (0, 10)}, "window must be two positive"),
])
def test_bad_arguments_are_value_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        centrum.extract("<p>x</p>", **kwargs)  # type: ignore[arg-type]


def _snapshot_dict() -> dict[str, object]:
    source = ('<html data-cx="0"><body data-cx="1"><main data-cx="2"><h1 data-cx="3">Hand built</h1>'
              '<p data-cx="4">A paragraph with a <a href="/x" data-cx="5">link</a>.</p></main></body></html>')
    page = E("html", (0, 0, 1000, 800), [E("body", (0, 0, 1000, 800), [E("main", (0, 0, 800, 200), [
        E("h1", (0, 0, 800, 40), [T("Hand built")]),
        E("p", (0, 40, 800, 20), [T("A paragraph with a"), E("a", (100, 40, 30, 20), [T("link")]), T(".")]),
    ])])])
    return build(page, source=source, url="https://hand.example.org/p/", title="Hand built | Site").raw


def test_snapshot_dict_needs_no_browser() -> None:
    raw = _snapshot_dict()
    assert centrum.extract(raw, algorithm="semantic") == "Hand built\nA paragraph with a link ."
    md = centrum.extract(raw, algorithm="semantic", output="markdown")
    assert md.endswith("# Hand built\n\nA paragraph with a [link](https://hand.example.org/x).\n")
    data = centrum.extract(raw, algorithm="semantic", output="json")
    assert isinstance(data, dict)
    assert data["nodes"] == [2] and data["metadata"]["title"] == "Hand built"
    assert set(data) >= {"algorithm", "nodes", "candidates", "message", "metadata", "text", "markdown", "html",
                         "timing_ms"}


def test_invalid_snapshot_and_bad_params_raise_value_errors() -> None:
    raw = _snapshot_dict()
    broken = json.loads(json.dumps(raw))
    broken["elements"]["parent"][3] = 7
    with pytest.raises(SnapshotError, match=r"elements\.parent"):
        centrum.extract(broken)
    with pytest.raises(ConfigError, match="bogus"):
        centrum.extract(raw, algorithm="semantic", params={"bogus": "1"})


def test_no_main_content_is_an_empty_string() -> None:
    raw = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [E("div", (0, 0, 100, 20), [T("x")])])]),
                source='<html data-cx="0"><body data-cx="1"><div data-cx="2">x</div></body></html>').raw
    assert centrum.extract(raw, algorithm="semantic", output="markdown") == ""
    data = centrum.extract(raw, algorithm="semantic", output="json")
    assert isinstance(data, dict) and data["nodes"] == [] and data["message"]


def test_html_string_and_bytes_resolve_against_url(ex: centrum.Extractor) -> None:
    md = ex.extract(ARTICLE, output="markdown", url="https://courier.example.org/news/")
    assert isinstance(md, str)
    assert '\ntitle: "Ferry terminal reopens"' in md or '\ntitle: "Ferry news"' in md
    assert "[more](https://courier.example.org/news/more.html)" in md
    assert "![The hall](https://courier.example.org/news/pics/hall.jpg)" in md
    html = ex.extract(ARTICLE.encode("utf-8"), output="html")
    assert isinstance(html, str) and html.startswith("<!DOCTYPE html>") and "<h1>Ferry terminal reopens</h1>" in html
    data = ex.extract(ARTICLE, output="json")
    assert isinstance(data, dict) and data["metadata"]["url"] is None  # not the temporary file it came from


def test_a_str_that_is_not_a_url_is_html(ex: centrum.Extractor) -> None:
    for text in ("tests/fixtures/sample/article.html", "just a few words"):
        snapshot = ex.snapshot(text)
        assert snapshot.text_of([0]) == text  # rendered as a page whose text is the string itself


def test_path_and_url(ex: centrum.Extractor) -> None:
    text = ex.extract(SAMPLE, algorithm="ensemble")
    # The article's title and its first paragraph, before the rest of it.
    assert isinstance(text, str) and text.splitlines()[1].startswith("The ferry terminal that stood empty")
    with loopback(functools.partial(QuietFileHandler, directory=str(SAMPLE.parent))) as base:
        url = f"{base}/article.html"
        md = ex.extract(url, output="markdown", params={"tags": "article"})
        assert isinstance(md, str) and f'url: "{url}"' in md and "## A building with a past" in md


def test_extractor_reopens_after_close() -> None:
    ex = centrum.Extractor(algorithm="semantic")
    try:
        assert "Ferry terminal reopens" in str(ex.extract(ARTICLE))
        ex.close()
        assert "Ferry terminal reopens" in str(ex.extract(ARTICLE))
    finally:
        ex.close()


def test_unreachable_and_silent_servers_never_hang(ex: centrum.Extractor) -> None:
    from centrum.render import RenderError

    with socket.socket() as s:  # a free port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RenderError, match="could not"):
        ex.extract(f"http://127.0.0.1:{port}/")
    silent = socket.socket()  # accepts connections, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        quick = centrum.Extractor(algorithm="semantic", timeout=1)
        t0 = time.perf_counter()
        try:
            assert quick.extract(f"http://127.0.0.1:{silent.getsockname()[1]}/") == ""
        finally:
            quick.close()
        assert time.perf_counter() - t0 < 60  # a loaded 2-core machine: 14 s seen
    finally:
        silent.close()
