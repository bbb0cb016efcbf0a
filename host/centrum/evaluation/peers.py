"""Peer extractors compared with Centrum's algorithms, one small adapter each.

Every adapter returns plain text with one block per line. HTML peers receive the page bytes exactly as stored
(encoding is theirs to detect, as in the peers' own benchmarks); peers that want ``str`` get
:func:`centrum.core.charset.decode`'s output. Two peers use the render instead of the bytes:

* ``readability_js`` — Mozilla's ``@mozilla/readability`` (npm), run *inside the same rendered Chromium page* on a
  clone of the live document through the renderer's ``extra`` hook: the fair anchor for a reader-mode button. One
  pinned version (``READABILITY_VERSION``, the same as the repository's ``package.json``) is read from
  ``$CENTRUM_NODE_MODULES`` when set (``.ci/run`` sets it after ``npm ci``, so tests download nothing), else installed
  with npm into ``$CENTRUM_CACHE/node/`` on first use (never into the repository); without npm it is reported as
  missing.
* ``wholepage`` — all visible text of the rendered page (the snapshot's root): the no-extraction baseline.

A peer whose package is not importable is reported as missing with the reason, never silently skipped.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import charset
from ..core.paths import cache_root
from ..core.snapshot import Snapshot

READABILITY_PACKAGE = "@mozilla/readability"
# Pinned: scores move with Readability's releases. package.json pins the same version (a test checks).
READABILITY_VERSION = "0.6.0"
READABILITY_NPM = f"{READABILITY_PACKAGE}@{READABILITY_VERSION}"


# ---- helpers ----------------------------------------------------------------------------------------------------
_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure", "footer",
    "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
    "table", "td", "th", "tr", "ul",
}


def html_to_text(html: str) -> str:
    """Text of an HTML fragment with a line break around block elements (so words of two blocks never merge)."""
    import lxml.html

    if not html.strip():
        return ""
    root = lxml.html.fromstring(html)
    for bad in root.xpath("//script|//style|//noscript"):
        bad.drop_tree()
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCK_TAGS:
            el.tail = "\n" + (el.tail or "")
            el.text = "\n" + (el.text or "")
    return _clean_lines(root.text_content())


def _clean_lines(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


# ---- HTML peers -----------------------------------------------------------------------------------------------------
def _trafilatura(html: bytes, language: str) -> str:
    import trafilatura

    # The canonical settings of trafilatura's own benchmark (tests/eval_common.py EXTRACT_OPTS).
    return trafilatura.extract(html, include_comments=False, include_tables=True, include_formatting=False) or ""


def _readability_lxml(html: bytes, language: str) -> str:
    from readability import Document

    return html_to_text(Document(charset.decode(html)).summary(html_partial=True))


# ISO 639-1 -> jusText stoplist name; other languages use the union of all stoplists (as trafilatura does).
_JUSTEXT_LANG = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "pl": "Polish", "pt": "Portuguese",
    "it": "Italian", "cs": "Czech", "ru": "Russian", "id": "Indonesian", "nl": "Dutch", "fi": "Finnish",
    "hu": "Hungarian", "no": "Norwegian_Bokmal", "sv": "Swedish", "da": "Danish", "tr": "Turkish", "ko": "Korean",
}


@functools.cache
def _justext_stoplist(language: str) -> frozenset[str]:
    import justext

    name = _JUSTEXT_LANG.get(language.split("/")[0].split("-")[0].lower())
    if name and name in justext.get_stoplists():
        return frozenset(justext.get_stoplist(name))
    words: set[str] = set()
    for n in justext.get_stoplists():
        words.update(justext.get_stoplist(n))
    return frozenset(words)


def _justext(html: bytes, language: str) -> str:
    import justext

    # The parameters both published benchmarks use (scrapinghub run_justext.py, trafilatura evaluate.py): length
    # 50/200, stopword density 0.1/0.2, link density 0.2, heading distance 200, no headings; jusText's defaults
    # drop whole news articles made of short paragraphs.
    paragraphs = justext.justext(html, _justext_stoplist(language), 50, 200, 0.1, 0.2, 0.2, 200, True)
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


@functools.cache
def _boilerpy3_extractor():  # type: ignore[no-untyped-def]
    from boilerpy3 import extractors

    return extractors.ArticleExtractor()


def _boilerpy3(html: bytes, language: str) -> str:
    return str(_boilerpy3_extractor().get_content(charset.decode(html)))


def _resiliparse(html: bytes, language: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(bytes_to_str(html, detect_encoding(html)))
    return str(extract_plain_text(tree, main_content=True))


@dataclass(frozen=True)
class PeerSpec:
    name: str
    package: str  # importable module that must be present, or "" for built-ins
    source: str  # "html": runs on page bytes; "render": comes from the rendered page
    summary: str
    run_html: Callable[[bytes, str], str] | None = None


PEERS: dict[str, PeerSpec] = {
    p.name: p
    for p in [
        PeerSpec("trafilatura", "trafilatura", "html", "trafilatura.extract (standard mode)", _trafilatura),
        PeerSpec("readability_lxml", "readability", "html", "readability-lxml Document.summary", _readability_lxml),
        PeerSpec("readability_js", "", "render", "Mozilla Readability.js in the rendered page"),
        PeerSpec("justext", "justext", "html", "jusText with the page language's stoplist", _justext),
        PeerSpec("boilerpy3", "boilerpy3", "html", "boilerpy3 ArticleExtractor", _boilerpy3),
        PeerSpec("resiliparse", "resiliparse", "html", "resiliparse extract_plain_text(main_content=True)",
                 _resiliparse),
        PeerSpec("wholepage", "", "render", "all visible text of the rendered page (baseline)"),
    ]
}


def missing_reason(name: str) -> str | None:
    """None when peer ``name`` can run here, else why not."""
    spec = PEERS.get(name)
    if spec is None:
        return f"unknown peer (known: {', '.join(PEERS)})"
    if spec.package:
        try:
            __import__(spec.package)
        except Exception as e:  # an ImportError or a broken install: either way the peer cannot run
            return f"python package {spec.package!r} not importable: {e}"
    if name == "readability_js":
        try:
            readability_js_source()
        except RuntimeError as e:
            return str(e)
    return None


def run_html_peer(name: str, html: bytes, language: str) -> str:
    spec = PEERS[name]
    assert spec.run_html is not None, name
    return spec.run_html(html, language)


@dataclass
class PeerAnswer:
    """One peer's answer on one page. ``kind``: "" (text), "empty", "error", or "render" (the page has no render);
    ``ran`` is False when the peer could not run here at all (its package is missing, or the page was rendered
    without the in-page extra it needs)."""

    text: str | None
    ms: float | None
    error: str = ""
    kind: str = ""
    ran: bool = True


def run_peer(name: str, html: bytes, language: str, snapshot: Snapshot | None = None,
             render: dict[str, Any] | None = None, render_error: str = "") -> PeerAnswer:
    """Run peer ``name`` on a page: its bytes, and for render peers its parsed snapshot and renderer entry (with the
    ``extra`` outputs and ``errors``). Never raises: a failing peer answers text None with the reason."""
    spec = PEERS[name]
    if spec.source == "html":
        t0 = time.perf_counter()
        try:
            text = run_html_peer(name, html, language)
        except Exception as e:  # noqa: BLE001 - scored 0 and listed
            return PeerAnswer(None, (time.perf_counter() - t0) * 1000, f"{type(e).__name__}: {e}"[:300], "error",
                              ran=missing_reason(name) is None)
        err = "" if text.strip() else "empty result"
        return PeerAnswer(text, (time.perf_counter() - t0) * 1000, err, "empty" if err else "")
    if name == "wholepage":
        if snapshot is None:
            return PeerAnswer(None, None, render_error or "not rendered", "render", ran=False)
        t0 = time.perf_counter()
        text = wholepage_text(snapshot)
        blank = not text.strip()
        return PeerAnswer(text, (time.perf_counter() - t0) * 1000, "empty page" if blank else "",
                          "empty" if blank else "")
    if render is None:
        return PeerAnswer(None, None, render_error or "not rendered", "render", ran=False)
    text, ms, err = readability_js_text(render.get("extra"))
    err = err or (render.get("errors") or {}).get(name, "")
    ran = bool(render.get("extra"))
    if text is None or not text.strip():
        return PeerAnswer(text, ms, err or "empty result", "error" if text is None and err != "no article" else "empty",
                          ran=ran)
    return PeerAnswer(text, ms, "", "", ran=ran)


def wholepage_text(snapshot: Snapshot) -> str:
    return snapshot.text_of([0]) if snapshot.n else ""


# ---- Readability.js -------------------------------------------------------------------------------------------------
def readability_js_dir() -> Path:
    modules = os.environ.get("CENTRUM_NODE_MODULES")
    base = Path(modules) if modules else cache_root() / "node" / "node_modules"
    return base / READABILITY_PACKAGE


@functools.cache
def readability_js_source() -> str:
    """Readability.js source: from ``$CENTRUM_NODE_MODULES``, else installed into ``$CENTRUM_CACHE/node`` on first
    use at the pinned version (a different version found there is replaced)."""
    path = readability_js_dir() / "Readability.js"
    if os.environ.get("CENTRUM_NODE_MODULES"):
        if not path.exists():
            raise RuntimeError(f"{path} not found: CENTRUM_NODE_MODULES points at a folder without "
                               f"{READABILITY_PACKAGE} (run `npm ci` in the repository to install the pinned version)")
        return path.read_text(encoding="utf-8")
    if not path.exists() or readability_js_version() != READABILITY_VERSION:
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(f"npm not found: install Node.js/npm (apt-get install npm) so that {READABILITY_NPM} "
                               f"can be installed into {cache_root() / 'node'}")
        prefix = cache_root() / "node"
        prefix.mkdir(parents=True, exist_ok=True)
        print(f"centrum eval: installing {READABILITY_NPM} with npm into {prefix} (first use)", file=sys.stderr)
        proc = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--save-exact",
                               READABILITY_NPM], capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or not path.exists():
            raise RuntimeError(f"npm install {READABILITY_NPM} failed: {proc.stderr.strip()[-500:]}")
    return path.read_text(encoding="utf-8")


def readability_js_version() -> str:
    try:
        return str(json.loads((readability_js_dir() / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "?"


# Runs in the page after collection. The library source is inlined in the function body so that nothing is added
# to the page's globals; it parses a clone (Readability mutates its input) and the result is turned into text in an
# inert DOMParser document (a detached element of the live document could start loading images).
_READABILITY_WRAPPER = """() => {
%s
  const BLOCK = new Set(%s);
  const t0 = performance.now();
  let article = null;
  try { article = new Readability(document.cloneNode(true)).parse(); }
  catch (e) { return {text: null, error: String(e), ms: performance.now() - t0}; }
  const ms = performance.now() - t0;
  if (!article || !article.content) return {text: null, error: "no article", ms};
  const doc = new DOMParser().parseFromString(article.content, "text/html");
  const parts = [];
  const walk = (node) => {
    if (node.nodeType === 3) { parts.push(node.data); return; }
    if (node.nodeType !== 1) return;
    const tag = node.localName;
    if (tag === "script" || tag === "style" || tag === "noscript") return;
    const block = BLOCK.has(tag);
    if (block) parts.push("\\n");
    for (const child of node.childNodes) walk(child);
    if (block) parts.push("\\n");
  };
  walk(doc.body);
  return {text: parts.join(""), title: article.title || "", ms};
}"""


def readability_js_extra() -> dict[str, str]:
    """The renderer ``extra`` entry that runs Readability.js in the page (empty when it is unavailable)."""
    try:
        src = readability_js_source()
    except RuntimeError:
        return {}
    return {"readability_js": _READABILITY_WRAPPER % (src, json.dumps(sorted(_BLOCK_TAGS)))}


def readability_js_text(extra: dict | None) -> tuple[str | None, float | None, str]:
    """(text, in-page milliseconds, error) from a render's ``extra``."""
    value = (extra or {}).get("readability_js")
    if not isinstance(value, dict):
        return None, None, "no Readability.js output in the render" if value is None else f"bad output: {value!r}"
    ms = value.get("ms")
    text = value.get("text")
    err = str(value.get("error") or "")
    return (_clean_lines(text) if isinstance(text, str) else None), (float(ms) if ms is not None else None), err
