"""`centrum extract` as a real subprocess: renders in headless Chromium, runs an algorithm, prints content."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "fixtures" / "sample" / "article.html"
ARTICLE_START = "The ferry terminal that stood empty on the north pier"
ARTICLE_END = "late opening on Thursdays until ten in the evening."


def centrum(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=REPO)


def test_extract_sample_file_as_text() -> None:
    p = centrum("extract", str(SAMPLE), "--algorithm", "semantic")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert ARTICLE_START in out and ARTICLE_END in out
    assert "Harbour town turns old ferry terminal into a public library" in out
    # Boilerplate outside <main> never appears.
    for boilerplate in ("Most read", "Subscribe", "All rights reserved", "We use cookies", "Obituaries"):
        assert boilerplate not in out


def test_extract_served_sample_as_json_with_params(fixture_server: str, tmp_path: Path) -> None:
    saved = tmp_path / "article.snapshot.json"
    p = centrum("extract", fixture_server + "sample/article.html", "--format", "json", "--window", "1280x900",
                "--algorithm", "semantic", "--param", "tags=article", "--save-snapshot", str(saved))
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert result["algorithm"] == "semantic" and len(result["nodes"]) == 1
    assert result["text"].startswith("Harbour town turns old ferry terminal")
    assert "Comments (3)" not in result["text"]  # tags=article: the comments live in <main>, not in <article>
    assert "debug" not in result  # only with --debug
    snap = json.loads(saved.read_text(encoding="utf-8"))
    assert snap["page"]["viewport"] == [1280, 900]
    assert snap["page"]["url"].startswith(fixture_server)
    # The saved snapshot is itself a valid PAGE: same answer without a browser, also from stdin.
    again = centrum("extract", str(saved), "--format", "json", "--algorithm", "semantic", "--param", "tags=article")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["nodes"] == result["nodes"]
    piped = centrum("extract", "-", "--algorithm", "semantic", "--param", "tags=article",
                    stdin=saved.read_text(encoding="utf-8"))
    assert piped.returncode == 0 and piped.stdout.strip() == result["text"]


def test_extract_html_format(fixture_server: str) -> None:
    p = centrum("extract", fixture_server + "sample/article.html", "--format", "html", "--algorithm", "semantic",
                "--param", "tags=article")
    assert p.returncode == 0, p.stderr
    html = p.stdout.strip()
    # The clean, allow-listed tree in a standalone document (issue #24), no longer the page's raw outer HTML.
    assert html.startswith("<!DOCTYPE html>") and html.endswith("</html>")
    assert html.count("Harbour town turns old ferry terminal into a public library</h1>") == 1  # title once
    assert "data-cx" not in html and 'class="story"' not in html
    assert "<svg" not in html and "<figcaption>" in html


def test_extract_no_render_dana_reads_the_file() -> None:
    # DANAg on the raw HTML, no browser: the article's long paragraphs are the densest lines.
    p = centrum("extract", str(SAMPLE), "--no-render", "--algorithm", "danag")
    assert p.returncode == 0, p.stderr
    assert "ferry terminal that stood empty" in p.stdout and "We use cookies" not in p.stdout


def test_extract_no_result_exits_3() -> None:
    # hidden.html has no <main>/<article>: the semantic baseline has no answer.
    p = centrum("extract", str(REPO / "tests/fixtures/pages/hidden.html"), "--algorithm", "semantic")
    assert p.returncode == 3
    assert "no main content" in p.stderr and p.stdout == ""


@pytest.mark.parametrize(("args", "message"), [
    (["extract", "/nonexistent/page.html"], "no such file"),
    (["extract", str(SAMPLE), "--algorithm", "nope"], "unknown algorithm"),
    (["extract", str(SAMPLE), "--param", "nokey"], "KEY=VALUE"),
    (["extract", str(SAMPLE), "--param", "bogus=1"], "unknown parameter"),
    (["extract", str(SAMPLE), "--no-render", "--algorithm", "semantic"], "--no-render works only with"),
])
def test_extract_errors_are_clear(args: list[str], message: str) -> None:
    p = centrum(*args)
    assert p.returncode == 2
    assert message in p.stderr
    assert "Traceback" not in p.stderr


def test_bad_parameter_fails_before_any_page_is_loaded() -> None:
    """-p rows=-5 is refused before Chromium starts: at once (under 1 s on a quiet machine, loosely 3 s here) and
    before the load error of a URL nobody answers; so is an output --no-render cannot give."""
    t0 = time.perf_counter()
    p = centrum("extract", str(SAMPLE), "-a", "gce", "-p", "rows=-5")
    elapsed = time.perf_counter() - t0
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == "centrum extract: bad parameter: rows: -5 is outside its range [1, 32]\n"
    assert elapsed < 3
    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = centrum("extract", f"http://127.0.0.1:{port}/", "-a", "gce", "-p", "rows=-5")
    assert p.returncode == 2 and "rows: -5 is outside its range" in p.stderr and "could not" not in p.stderr
    p = centrum("extract", str(SAMPLE), "--no-render", "-f", "markdown")
    assert p.returncode == 2 and "--format markdown needs node ids" in p.stderr
    p = centrum("extract", f"http://127.0.0.1:{port}/", "--no-render")
    assert p.returncode == 2 and "--no-render needs a local HTML file, not a URL" in p.stderr
    p = centrum("extract", "-", "--no-render", stdin="<p>x</p>")
    assert p.returncode == 2 and "--no-render needs a local HTML file, not a snapshot on stdin" in p.stderr


def test_extract_invalid_snapshot_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.snapshot.json"
    bad.write_text(json.dumps({"protocol": 1, "page": {"viewport": [0, 1], "document": [1, 1]}}))
    p = centrum("extract", str(bad))
    assert p.returncode == 2 and "page.viewport" in p.stderr


def test_default_algorithm_is_the_learned_ensemble() -> None:
    """No --algorithm: the ensemble answers (the default of extract, ping and so the extension)."""
    p = centrum("extract", str(SAMPLE), "--format", "json")
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert result["algorithm"] == "ensemble"
    assert ARTICLE_START in result["text"] and ARTICLE_END in result["text"]
    for boilerplate in ("Most read", "All rights reserved", "We use cookies"):
        assert boilerplate not in result["text"]


def test_any_local_json_file_is_read_as_a_snapshot(tmp_path: Path) -> None:
    """A saved snapshot named page.json (not *.snapshot.json) is a snapshot, not a page whose JSON text is rendered;
    a .json file that is not a snapshot is refused with what it lacks."""
    import gzip

    text = gzip.decompress((REPO / "tests" / "pages" / "article-comments" / "snapshot.json.gz").read_bytes())
    plain = tmp_path / "page.json"
    plain.write_bytes(text)
    named = tmp_path / "page.snapshot.json"
    named.write_bytes(text)
    a, b = (centrum("extract", str(f), "--format", "json", "--algorithm", "semantic") for f in (plain, named))
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert json.loads(a.stdout)["nodes"] == json.loads(b.stdout)["nodes"] != []
    other = tmp_path / "data.JSON"
    other.write_text(json.dumps({"title": "not a snapshot", "items": [1, 2]}))
    p = centrum("extract", str(other))
    assert p.returncode == 2 and "invalid snapshot" in p.stderr and "Traceback" not in p.stderr
