"""Outputs a reader can open safely (issue #40), end to end in real Chromium through ``centrum extract``:

- tests/fixtures/pages/hidden-tricks.html hides text every way a security review found (transparent, white on white
  and background-coloured text, 1 px font, clip-path, zero-height and zero-size boxes cutting their overflow,
  filter: opacity(0), a transparent mask, -webkit-text-fill-color: transparent, fixed and absolute off-screen) next
  to controls a reader does see (gradient text, white on dark, faint, outlined and shadowed letters, white over a
  picture, a partial clip, text spilling out of a zero-height box, a zero-height panel its button opens): the
  text, Markdown and HTML outputs hold every SHOWN string and no HIDDEN one. The reader view applies the same rule
  (tests/e2e/test_ui_reader_hidden.py, tests/e2e/test_firefox_reader.py; tests/e2e/test_outputs.py compares its
  elements with the host's).
- tests/fixtures/pages/hostile-meta.html puts live HTML in its <title> and <meta> tags: the Markdown's front matter,
  rendered by a CommonMark renderer that ignores front matter (markdown-it's default, raw HTML on), makes no element
  or attribute of it, and YAML reads back the very metadata of the json output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.hidden_tricks import HIDDEN_TRICKS, check_hidden

REPO = Path(__file__).resolve().parents[2]
PAGES = REPO / "tests" / "fixtures" / "pages"


def centrum(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True,
                          timeout=180, cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _visible_text(fmt: str, out: str) -> str:
    if fmt != "html":
        return out
    from lxml import html

    doc = html.document_fromstring(out)
    assert "HIDDEN" not in out  # not in an attribute or the head either
    return doc.body.text_content()


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_hidden_text_stays_out_of_every_host_output(fmt: str) -> None:
    p = centrum("extract", "-f", fmt, str(HIDDEN_TRICKS))
    assert p.returncode == 0, p.stderr
    check_hidden(_visible_text(fmt, p.stdout))


def test_the_json_output_agrees() -> None:
    p = centrum("extract", "-f", "json", str(HIDDEN_TRICKS))
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    for key in ("text", "markdown", "html"):
        check_hidden(data[key] if key != "html" else re.sub(r"<[^>]+>", " ", data[key]))


def test_front_matter_of_a_hostile_page_is_text_to_markdown_and_exact_to_yaml() -> None:
    import yaml
    from lxml import html
    from markdown_it import MarkdownIt

    page = str(PAGES / "hostile-meta.html")
    p = centrum("extract", "-f", "markdown", page)
    assert p.returncode == 0, p.stderr
    markdown = p.stdout
    rendered = html.fromstring(f"<div>{MarkdownIt().render(markdown)}</div>")
    elements = [(el.tag, sorted(el.attrib)) for el in rendered.iter() if el is not rendered]
    assert {tag for tag, _ in elements} <= {"hr", "p", "h1", "h2"}, elements
    assert all(attrs == [] for _, attrs in elements), elements
    # Each payload is there as text (in its YAML spelling): the check above looked at the right document.
    shown = rendered.text_content()
    for payload in ("\\u003cimg src=x onerror=alert(1)\\u003e", "\\u003csvg onload=alert(4)\\u003e",
                    "\\u005bclick\\u005d(javascript:alert(5))"):
        assert payload in shown, payload
    # YAML reads back exactly what the json output's metadata says.
    front = yaml.safe_load(markdown.split("---\n")[1])
    j = centrum("extract", "-f", "json", page)
    assert j.returncode == 0, j.stderr
    meta = json.loads(j.stdout)["metadata"]
    assert front == {k: meta[k] for k in ("title", "author", "sitename", "language", "description") if meta[k]}
    assert "<img src=x onerror=alert(1)>" in front["title"] and front["author"].startswith("<img src=x")
