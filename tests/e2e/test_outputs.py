"""Output formats end to end: `centrum extract -f markdown` against golden files, every lazy image in real Chromium,
the json payload, and the reader's clean.js against the host's cleaner on the same rendered pages.

The Markdown goldens are the golden pages' expected.md (tests/pages/<slug>/, one system with the algorithms'
answers): here two of them are rendered live and run through the CLI. After a deliberate change,
`python tests/helpers/goldens.py --regenerate` rewrites them; review the diff before committing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import goldens

from centrum.core.result import Result
from centrum.core.snapshot import parse_snapshot
from centrum.output.outputs import Outputs, SourcePage, clean_content, source_page

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def centrum(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True,
                          timeout=180, cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"})


# Golden pages whose page.html is a fixture the README and other tests use: rendered live, through the CLI.
LIVE = ("sample-article", "table-code")


@pytest.mark.parametrize("slug", LIVE)
def test_markdown_matches_golden_file(slug: str) -> None:
    p = centrum("extract", "-f", "markdown", str(goldens.PAGES / slug / "page.html"))
    assert p.returncode == 0, p.stderr
    golden = (goldens.PAGES / slug / goldens.EXPECTED_MD).read_text(encoding="utf-8")
    # The stored snapshot's address stands in for the checkout's file: URL, which the front matter leaves out.
    golden = golden.replace(f'url: "https://pages.centrum.test/{slug}/"\n', "")
    assert p.stdout == golden, f"differs from tests/pages/{slug}/expected.md ({goldens.REGENERATE})"


def test_golden_files_hold_the_constructs() -> None:
    # The golden file is only as good as what it holds: the constructs the table+code page is written for.
    md = (goldens.PAGES / "table-code" / goldens.EXPECTED_MD).read_text(encoding="utf-8")
    assert md.startswith('---\ntitle: "Measuring tide gauges with a ten-line script"\nauthor: "Ana Ferreira"\n')
    assert "\n\tdef" not in md and "\n\t# a tab-indented comment, kept as written\n" in md
    assert "        lo[day] = min(level, lo.get(day, level))    # lowest\n" in md
    assert "| North pier | 3.1 | 3.4 | spring tide |\n|  | 2.2 | 2.0 | neap \\| calm |" in md
    assert "   - for neap tides\n     - with wind under 5 m/s\n" in md
    assert "![A tide gauge on the north pier](https://fieldnotes.example.org/media/gauge.jpg)" in md
    assert "tide tables**.[^1]" in md and "\n[^1]: The harbour authority prints them each January.\n" in md
    assert "## The script" in md and "gauge A<sub>2</sub>" in md


def _render(renderer: Any, url: str) -> tuple[Any, SourcePage]:
    snapshot = parse_snapshot(renderer.render(url, source=True).raw)
    return snapshot, source_page(snapshot)


def _first(page: SourcePage, tag: str) -> int:
    el = next(page.root.iter(tag))
    node = page.node_id(el)
    assert node is not None
    return node


def test_every_lazy_image_resolved(renderer: Any, fixture_server: str) -> None:
    base = fixture_server + "pages/"
    snapshot, page = _render(renderer, base + "lazy-images.html")
    out = Outputs(snapshot, Result("test", [_first(page, "article")]))
    md = out.markdown()
    for alt, path in [("Placeholder swapped by a script", "img/data-src.jpg"), ("Fades in when loaded", "img/fade.jpg"),
                      ("Responsive sizes", "img/srcset-1600.jpg"), ("Picture element", "img/picture-large.webp"),
                      ("Only in noscript", "img/noscript.jpg"), ("Native lazy loading", "img/native-lazy.jpg")]:
        assert f"![{alt}]({base}{path})" in md, alt
    assert "pixel.gif" not in md and "hidden.jpg" not in md and "data:image" not in md
    assert "\n## A heading made of a div\n" in md
    # Each caption stays right after its picture.
    assert "img/fade.jpg)\n\nTwo: a fade-in loader" in md
    html = out.html()
    assert f'<img src="{base}img/noscript.jpg" alt="Only in noscript">' in html
    assert "<noscript" not in html and "data-centrum" not in html


def test_cli_json_holds_every_output(fixture_server: str) -> None:
    p = centrum("extract", "-f", "json", fixture_server + "pages/table-code.html")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["algorithm"] == "ensemble" and data["nodes"]
    assert data["metadata"]["title"] == "Measuring tide gauges with a ten-line script"
    assert data["metadata"]["date"] == "2026-10-02T09:15:00+02:00"
    assert "Three harbours publish" in data["text"] and "| North pier |" in data["markdown"]
    assert data["html"].startswith("<") and "<table>" in data["html"] and "data-cx" not in data["html"]
    assert {"parse", "algorithm", "clean", "markdown", "metadata"} <= set(data["timing_ms"])


# ---- the reader's cleaner (clean.js) and the host's keep the same elements and attributes --------------------------
# As the reader is handed them: the answer's disclosed panels (host node ids) as this page's elements.
TREE_JS = """([root, disclosed]) => {
  const clean = globalThis[Symbol.for("centrum.clean")];
  globalThis.centrumCollect({});
  return clean.tree([document.querySelector(root)], "", disclosed.map((i) => globalThis.centrumNodes[i])).blocks;
}"""


def _normal(items: list[Any]) -> list[Any]:
    """Comparable form of a clean tree (clean.js's {t, a, c} data): tags, attribute names and values, text with
    whitespace collapsed and merged across neighbours; img width/height left out (clean.js reads the loaded size,
    the host the markup)."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, str):
            if out and isinstance(out[-1], str):
                out[-1] += item
            else:
                out.append(item)
        else:
            attrs = {k: v for k, v in item["a"].items() if k not in ("width", "height")}
            out.append([item["t"], attrs, _normal(item["c"])])
    return [" ".join(x.split()) if isinstance(x, str) else x for x in out if not isinstance(x, str) or x.strip()]


def _as_data(el: Any) -> dict[str, Any]:
    children: list[Any] = [el.text] if el.text else []
    for child in el:
        children.append(_as_data(child))
        if child.tail:
            children.append(child.tail)
    attrs = {k: v for k, v in el.attrib.items() if not k.startswith("data-centrum")}
    return {"t": el.tag, "a": attrs, "c": children}


@pytest.mark.parametrize(("page", "root"), [
    ("sample/article.html", "article"), ("pages/meta-cjk.html", "article"), ("pages/meta-rtl.html", "article"),
    ("pages/table-code.html", "table"), ("pages/hidden.html", "body"), ("pages/hidden-tricks.html", "article"),
])
def test_reader_and_host_keep_the_same_elements(renderer: Any, fixture_server: str, playwright: Any, page: str,
                                                root: str) -> None:
    url = fixture_server + page
    snapshot, src = _render(renderer, url)
    host = [_as_data(b) for b in clean_content(src, [_first(src, root)]).blocks]
    from centrum.core.render import find_chromium

    browser = playwright.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox"])
    try:
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        tab.goto(url)
        # As the extension injects them (background.js PAGE_SCRIPTS): the collector first, whose rule clean.js uses.
        for script in ("collect.js", "clean.js"):
            tab.evaluate((REPO / "extension" / "src" / script).read_text(encoding="utf-8"))
        reader = tab.evaluate(TREE_JS, [root, snapshot.disclosed_in([_first(src, root)])])
    finally:
        browser.close()
    host_tree = _normal(host)
    if page == "pages/hidden.html":
        # One known difference: a `visibility: visible` child of a `visibility: hidden` parent is painted (the
        # snapshot marks it VISIBLE, so the host keeps it); clean.js skips the parent's whole subtree.
        host_tree = _without(host_tree, "Visible again")
    assert host_tree == _normal(reader)


def _without(items: list[Any], text: str) -> list[Any]:
    """``items`` minus the elements whose only content is ``text`` (which must be there)."""
    found = []

    def strip(xs: list[Any]) -> list[Any]:
        out = []
        for x in xs:
            if isinstance(x, list) and x[2] == [text]:
                found.append(x)
                continue
            out.append([x[0], x[1], strip(x[2])] if isinstance(x, list) else x)
        return out

    result = strip(items)
    assert found, f"{text!r} should be in the host's tree"
    return result
