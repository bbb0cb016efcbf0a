"""``centrum labels export`` writes private files (folders 0700, files 0600), inert pages (no script, no event
handler, no javascript: URL; every element and its text kept, so node paths still point where they did) and, with
--force, never follows a symbolic link nor deletes anything outside the export folder (issue #40)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import lxml.html
import pytest
from helpers.labels import label

from centrum.annotation import labels as L

HOSTILE = (
    '<!DOCTYPE html><html data-cx="0"><head data-cx="1"><meta http-equiv="refresh" content="0;url=https://evil.test/"'
    ' data-cx="2"><script src="https://evil.test/x.js" data-cx="3">steal(document.cookie)</script></head>'
    '<body onload="steal()" data-cx="4"><!-- <img src=x onerror=alert(1)> stays a comment -->'
    '<nav data-cx="5"><a href="javascript:steal()" data-cx="6">Home</a>'
    '<a href=" jav&#x61;&Tab;script:steal()" title="ok" data-cx="7">Two</a>'
    '<a href="VBScript:msgbox(1)" data-cx="8">Three</a><a href="https://example.test/a?b=c" data-cx="9">Fine</a></nav>'
    '<article ONCLICK="steal()" class="story" data-cx="10"><p title="x onclick=alert(1) y" data-cx="11">One two '
    'three onclick=alert(1) javascript:alert(1) four.</p><p title=\'a>b\' onmouseover=steal() data-cx="12">Five <img '
    'src="data:image/png;base64,iVBORw0KGgo=" onerror="steal()" data-cx="13"> six.</p>'
    '<form action="javascript:steal()" data-cx="14"><button formaction="java\nscript:steal()" data-cx="15">Go'
    '</button></form><iframe srcdoc="&lt;script&gt;steal()&lt;/script&gt;" src="data:text/html,<script>x()</script>"'
    ' data-cx="16"></iframe><div style="background:url(javascript:steal())" data-cx="17">Styled</div>'
    '<svg data-cx="18"><a xlink:href="javascript:steal()" data-cx="19"><text data-cx="20">svg text</text></a>'
    '<animate attributeName="href" values="https://ok;javascript:steal()" data-cx="21"></animate></svg>'
    '<script data-cx="22">var secret = "token";</script><textarea data-cx="23">draft</textarea></article>'
    '<footer data-cx="24">Copyright <a href="/about" data-cx="25">about</a></footer></body></html>')


def elements(source: str) -> list[str]:
    """The element tags in document order, as an independent HTML parser (libxml2's) reads ``source``."""
    return [str(e.tag) for e in lxml.html.document_fromstring(source).iter() if isinstance(e.tag, str)]


def test_exported_pages_are_inert_and_keep_every_element_and_its_text() -> None:
    out = L.export_html(HOSTILE)
    doc = lxml.html.document_fromstring(out)
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        if el.tag == "script":
            assert not el.attrib and not (el.text or "").strip(), lxml.html.tostring(el)
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), (el.tag, name)
            compact = "".join(value.split()).lower()
            assert "javascript:" not in compact and "vbscript:" not in compact, (el.tag, name, value)
            assert name != "srcdoc" and not (name == "src" and compact.startswith("data:text")), (el.tag, name)
            assert not (el.tag == "meta" and name == "http-equiv"), value
    # Every element where it was (node paths count element children), the visible text unchanged.
    # (export_html also declares UTF-8: a <meta charset> first in <head>, where no label points.)
    before = L.scrub_source(HOSTILE)
    assert elements(L.inert_html(before)) == elements(HOSTILE) and len(elements(HOSTILE)) == 26
    assert elements(out) == [*elements(HOSTILE)[:2], "meta", *elements(HOSTILE)[2:]]
    story = doc.find_class("story")[0]
    assert story.text_content().startswith("One two three onclick=alert(1) javascript:alert(1) four.Five  six.")
    assert lxml.html.document_fromstring(before).find_class("story")[0].text_content() == story.text_content()
    # What is harmless stays byte for byte: text, titles, http(s) and relative links, image data URLs, comments.
    for kept in ('title="x onclick=alert(1) y"', "title='a>b'", 'href="https://example.test/a?b=c"',
                 'src="data:image/png;base64,iVBORw0KGgo="', '<a href="/about">about</a>', 'title="ok"',
                 "<!-- <img src=x onerror=alert(1)> stays a comment -->", 'class="story"',
                 'content="0;url=https://evil.test/"'):
        assert kept in out, kept
    assert "steal" not in out.split("-->", 1)[1].replace('content="0;url=https://evil.test/"', "")
    assert "data-cx" not in out and "secret" not in out and "draft" not in out
    assert L.inert_html(L.inert_html(HOSTILE)) == L.inert_html(HOSTILE)  # a second pass finds nothing more


@pytest.mark.parametrize("source, gone", [
    ('<p/onclick=x()>t</p>', "onclick"),
    ('<p a=1 onclick=x() b=2>t</p>', "onclick"),
    ('<a href=javascript:x()>t</a>', "javascript"),
    ('<a href="&#106;&#97;vascript:x()">t</a>', "#106"),
    ('<a href="\x01javascript:x()">t</a>', "javascript"),
    ('<iframe src="data:image/svg+xml,<svg onload=x()>"></iframe>', "data:"),
    ('<object data="data:text/html,x"></object>', "data:"),
])
def test_the_scan_reads_attributes_as_a_browser_does(source: str, gone: str) -> None:
    out = L.inert_html(source)
    assert gone not in out and elements(out) == elements(source), out


@pytest.mark.parametrize("source", [
    # Inside <svg>/<math>, <style> and <plaintext> are foreign elements whose content is markup, and an <img> there
    # breaks out into HTML: read as raw text it would go unscrubbed.
    '<svg><style><img src=x onerror=steal()></style></svg><p>t</p>',
    '<math><style><img src=x onerror=steal()></style></math><p>t</p>',
    '<svg><title><a href="javascript:steal()">x</a></title></svg><p>t</p>',
    '<svg><plaintext><img src=x onerror=steal()>',
])
def test_markup_in_foreign_content_is_not_missed(source: str) -> None:
    out = L.inert_html(source)
    assert "steal" not in out, out


def test_an_svg_animation_of_a_handler_or_link_is_cut() -> None:
    for target in ("onclick", "href", "xlink:href"):
        out = L.inert_html(f'<svg><set attributeName="{target}" to="steal()"></set></svg>')
        assert out == '<svg><set to="steal()"></set></svg>', out  # without attributeName it animates nothing
    kept = '<svg><animate attributeName="opacity" values="0;1"></animate></svg>'
    assert L.inert_html(kept) == kept


def test_raw_text_without_tags_is_kept() -> None:
    for source in ("<style>p > a { color: red }</style>", "<style><!-- p { color: red } --></style>",
                   "<title>a < b and c > d</title>", "<noscript>enable scripts</noscript>"):
        assert L.inert_html(source) == source


def test_a_tag_that_never_ends_is_cut_as_the_parser_drops_it() -> None:
    assert L.inert_html('<p>t</p><img src=x onerror=x()') == "<p>t</p>"


def tree(root: Path) -> Iterator[tuple[str, int]]:
    for path in sorted([root, *root.rglob("*")]):
        yield path.relative_to(root.parent).as_posix(), stat.S_IMODE(path.lstat().st_mode)


def test_export_folders_are_0700_and_files_0600_whatever_the_umask(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    L.save_label(db, label(source=HOSTILE))
    old = os.umask(0o022)
    try:
        L.export_dataset(db, tmp_path / "new" / "set")
    finally:
        os.umask(old)
    modes = dict(tree(tmp_path / "new" / "set"))
    assert modes == {"set": 0o700, "set/README.md": 0o600, "set/gold": 0o700, "set/meta.jsonl": 0o600,
                     "set/pages": 0o700, "set/gold/000001-127.0.0.1-news-canal.txt": 0o600,
                     "set/pages/000001-127.0.0.1-news-canal.html": 0o600}, modes
    page = (tmp_path / "new" / "set" / "pages" / "000001-127.0.0.1-news-canal.html").read_text(encoding="utf-8")
    assert "steal" not in page.split("-->", 1)[1].replace("evil.test", "") and "Copyright" in page
    # Replacing (--force) an export whose files were made wider tightens them again.
    for path in (tmp_path / "new" / "set").rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    L.export_dataset(db, tmp_path / "new" / "set", force=True)
    modes = dict(tree(tmp_path / "new" / "set"))
    assert {k: v for k, v in modes.items() if k != "set"} == {
        "set/README.md": 0o600, "set/gold": 0o700, "set/meta.jsonl": 0o600, "set/pages": 0o700,
        "set/gold/000001-127.0.0.1-news-canal.txt": 0o600, "set/pages/000001-127.0.0.1-news-canal.html": 0o600}


def victim(tmp_path: Path) -> Path:
    """A folder outside the export with files an export --force would delete if it followed links."""
    v = tmp_path / "victim"
    v.mkdir()
    for name in ("keep.html", "keep.txt", "notes.md"):
        (v / name).write_text(f"victim {name}", encoding="utf-8")
    return v


def untouched(v: Path) -> bool:
    return sorted(p.name for p in v.iterdir()) == ["keep.html", "keep.txt", "notes.md"] and all(
        (v / n).read_text(encoding="utf-8") == f"victim {n}" for n in ("keep.html", "keep.txt", "notes.md"))


@pytest.mark.parametrize("planted", ["pages", "gold"])
def test_force_never_follows_a_linked_folder(tmp_path: Path, planted: str) -> None:
    db = tmp_path / "l.sqlite3"
    L.save_label(db, label())
    v = victim(tmp_path)
    out = tmp_path / "set"
    out.mkdir()
    (out / planted).symlink_to(v, target_is_directory=True)
    with pytest.raises(L.ExportError, match=f"{out / planted} is a symbolic link or not a folder: not followed"):
        L.export_dataset(db, out, force=True)
    assert untouched(v)
    # The CLI says so in one line, no traceback.
    run = subprocess.run([sys.executable, "-m", "centrum.cli", "labels", "export", str(out), "--db", str(db),
                          "--force"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "not followed" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert untouched(v)


def test_force_removes_links_not_their_targets_and_never_writes_through_one(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    L.save_label(db, label())
    v = victim(tmp_path)
    out = tmp_path / "set"
    L.export_dataset(db, out)
    (out / "pages" / "planted.html").symlink_to(v / "keep.html")
    (out / "gold" / "planted.txt").symlink_to(v / "keep.txt")
    (out / "meta.jsonl").unlink()
    (out / "meta.jsonl").symlink_to(v / "notes.md")
    (out / "README.md").unlink()
    (out / "README.md").symlink_to(tmp_path / "victim" / "new-file-outside.md")  # dangling: would create it
    (out / "pages" / "sub").mkdir()
    (out / "pages" / "sub" / "own.html").write_text("kept", encoding="utf-8")
    L.export_dataset(db, out, force=True)
    assert untouched(v)
    assert not (out / "pages" / "planted.html").exists() and not (out / "gold" / "planted.txt").exists()
    for name in ("meta.jsonl", "README.md"):
        assert not (out / name).is_symlink() and (out / name).stat().st_mode & 0o777 == 0o600
    assert (out / "pages" / "sub" / "own.html").read_text(encoding="utf-8") == "kept"  # only *.html of pages/


def test_a_linked_export_folder_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    L.save_label(db, label())
    v = victim(tmp_path)
    (tmp_path / "link").symlink_to(v, target_is_directory=True)
    with pytest.raises(L.ExportError, match="is a symbolic link: not followed"):
        L.export_dataset(db, tmp_path / "link", force=True)
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(L.ExportError, match="is not a folder"):
        L.export_dataset(db, tmp_path / "file")
    assert untouched(v)
