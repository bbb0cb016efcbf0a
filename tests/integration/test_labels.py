"""Annotator label store (centrum.annotation.labels): save/list/export/agreement on hand-built snapshots, hostile
fields,
concurrent and killed writers, migrations, the native host's label.save over real pipes, and the CLI."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers.host import HostProcess
from helpers.labels import BUILT, SOURCE, label, page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from centrum.annotation import labels as L
from centrum.core.builders import E, T, build
from centrum.core.snapshot import parse_snapshot
from centrum.gold.datasets import load_dataset


def count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM labels").fetchone()[0])


# ---------------------------------------------------------------------------------------------- save / list


def test_save_and_list_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "labels.sqlite3"
    lid = L.save_label(db, label())
    [row] = L.list_labels(db)
    assert row["id"] == lid == 1
    assert row["url"] == "http://127.0.0.1/news/canal" and row["annotator"] == "alice"
    assert row["nodes"] == [BUILT.ids["article"]] and row["n_elements"] == BUILT.snapshot.n
    # The host computes the text of the selection from the snapshot: paragraphs are blocks, nav/footer excluded.
    assert row["text"] == "One two three four five six seven.\nEight nine ten eleven twelve."
    # article is the 2nd element child of body, body the 2nd of html.
    assert row["node_paths"] == ["html:1>body:2>article:2"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", row["created"])
    assert row["title"] == "Canal" and row["lang"] == "en-GB"
    full = L.load_label(db, lid)
    assert full["source"] == SOURCE
    assert full["snapshot"] == BUILT.raw  # the stored snapshot is the one sent, source included
    assert parse_snapshot(full["snapshot"]).n == BUILT.snapshot.n


def test_several_disjoint_nodes_in_selection_order_and_given_text(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    ids = BUILT.ids
    L.save_label(db, label(nodes=[ids["p2"], ids["p1"]]))
    L.save_label(db, label(nodes=[ids["footer"]], text="my own words", source="<p>given</p>"))
    first, second = L.list_labels(db)
    assert first["nodes"] == [ids["p2"], ids["p1"]]  # the annotator's order is kept ...
    assert first["text"] == "One two three four five six seven.\nEight nine ten eleven twelve."  # ... text in DOM order
    assert first["node_paths"] == ["html:1>body:2>article:2>p:2", "html:1>body:2>article:2>p:1"]
    assert second["text"] == "my own words"
    assert L.load_label(db, second["id"])["source"] == "<p>given</p>"


def test_list_filters_and_default_db_in_centrum_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CENTRUM_HOME", str(home))
    L.save_label(None, label())
    L.save_label(None, label(annotator="bob"))
    assert (home / "labels.sqlite3").is_file()
    assert [r["annotator"] for r in L.list_labels(annotator="bob")] == ["bob"]
    assert len(L.list_labels(url="http://127.0.0.1/news/canal")) == 2
    assert L.list_labels(url="http://other/") == []
    with sqlite3.connect(home / "labels.sqlite3") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# ---------------------------------------------------------------------------------------------- validation

BAD_SNAPSHOT = json.loads(json.dumps(BUILT.raw))
BAD_SNAPSHOT["elements"]["parent"][3] = 7  # a parent after its child: a cycle in disguise


@pytest.mark.parametrize(("over", "field", "words"), [
    ({"url": None}, "label.url", "missing"),
    ({"url": 5}, "label.url", "expected a string"),
    ({"annotator": "   "}, "label.annotator", "must not be empty"),
    ({"annotator": "x" * 257}, "label.annotator", "exceed the limit"),
    ({"annotator": "bad \ud800 surrogate"}, "label.annotator", "lone surrogate"),
    ({"url": "http://x/" + "a" * 9000}, "label.url", "exceed the limit"),
    ({"nodes": None}, "label.nodes", "missing"),
    ({"nodes": "6"}, "label.nodes", "list"),
    ({"nodes": []}, "label.nodes", "no node selected"),
    ({"nodes": [True]}, "label.nodes[0]", "integer"),
    ({"nodes": [6, 1.5]}, "label.nodes[1]", "integer"),
    ({"nodes": [99]}, "label.nodes[0]", "not in the snapshot"),
    ({"nodes": [-1]}, "label.nodes[0]", "not in the snapshot"),
    ({"nodes": [6, 6]}, "label.nodes", "selected twice"),
    ({"nodes": [7, 6]}, "label.nodes", "inside another selected node"),
    ({"nodes": list(range(10_001))}, "label.nodes", "exceed the limit"),
    ({"snapshot": None}, "label.snapshot", "missing"),
    ({"snapshot": [1, 2]}, "label.snapshot", "expected a protocol-1 snapshot"),
    ({"snapshot": BAD_SNAPSHOT}, "label.snapshot.elements.parent", "parent"),
    ({"snapshot": {k: v for k, v in BUILT.raw.items() if k != "source"}}, "label.source", "required"),
    ({"text": 3}, "label.text", "expected a string"),
    ({"dataset": ["x"]}, "label.dataset", "expected a string"),
    ({"path": "/etc/passwd"}, "label.path", "unknown field"),
])
def test_bad_labels_are_refused_with_the_field_named(tmp_path: Path, over: dict[str, Any], field: str,
                                                     words: str) -> None:
    db = tmp_path / "l.sqlite3"
    L.save_label(db, label())
    lab = label(**over)
    if over.get("url", "") is None:
        del lab["url"]
    with pytest.raises(L.LabelError) as info:
        L.save_label(db, lab)
    assert info.value.code == "E_REQUEST"
    assert info.value.field is not None and info.value.field.startswith(field), info.value.field
    assert words in info.value.message and field in info.value.message
    assert count(db) == 1  # nothing half-stored


def test_label_that_is_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(L.LabelError, match="label: expected an object"):
        L.save_label(tmp_path / "l.sqlite3", "DROP TABLE labels")
    with pytest.raises(L.LabelError, match="label: missing"):
        L.handle_label_save({"type": "label.save"}, tmp_path / "l.sqlite3")


def test_lone_surrogates_in_page_text_become_replacement_characters(tmp_path: Path) -> None:
    built = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [
        E("p", (0, 0, 100, 20), [T("broken \ud83d text")], name="p")])]), source="<p>\udc00</p>")
    db = tmp_path / "l.sqlite3"
    lid = L.save_label(db, {"url": "u", "annotator": "a", "nodes": [built.ids["p"]], "snapshot": built.raw})
    assert L.list_labels(db)[0]["text"] == "broken \ufffd text"
    assert L.load_label(db, lid)["source"] == "<p>\ufffd</p>"


# ---------------------------------------------------------------------------------------------- hostile fields

HOSTILE = ["'); DROP TABLE labels;--", "\"; DELETE FROM labels WHERE 1=1; --", "../../etc/passwd",
           "/etc/passwd", "..\\..\\windows\\system32", "nul\x00byte/../x", "C:\\x", "~/.bashrc", ".",
           "..", "", "%2e%2e%2f", "http://[::1", "ид/../страница"]


def test_sql_and_path_strings_are_stored_verbatim_and_exported_to_safe_names(tmp_path: Path) -> None:
    db = tmp_path / "db" / "labels.sqlite3"
    out = tmp_path / "export"
    stored = []
    for k, s in enumerate(HOSTILE):
        fields = {"url": s or "x", "annotator": s or "y", "page_id": s or None, "dataset": s or None}
        L.save_label(db, label(**fields))
        stored.append((k + 1, fields))
    rows = {r["id"]: r for r in L.list_labels(db)}
    assert len(rows) == len(HOSTILE)
    for lid, fields in stored:
        for key, value in fields.items():
            assert rows[lid][key] == value  # verbatim, NUL bytes and SQL included
    # The tables are all still there.
    with sqlite3.connect(db) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"labels", "schema_version"} <= names
    before = sorted(p.name for p in tmp_path.iterdir())
    meta = L.export_dataset(db, out, every=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({*before, "export"})  # nothing written beside it
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) == 2 * len(HOSTILE) + 2  # pages, gold, meta.jsonl, README.md
    for p in files:
        assert p.resolve().is_relative_to(out.resolve())
        assert re.fullmatch(r"[0-9]{6}(-[A-Za-z0-9._-]+)?\.(html|txt)|meta\.jsonl|README\.md", p.name), p.name
    by_label = {m["label_id"]: m for m in meta}
    for lid, fields in stored:
        assert by_label[lid]["url"] == fields["url"] and by_label[lid]["page_id"] == fields["page_id"]
    ds = load_dataset(out)
    assert len(ds.pages) == len(HOSTILE)


def test_safe_page_id() -> None:
    assert L.safe_page_id(7, "../../etc/passwd") == "000007-etc-passwd"
    assert L.safe_page_id(7, "/") == "000007"
    assert L.safe_page_id(7, None) == "000007"
    assert L.safe_page_id(12, "a\x00b/../c") == "000012-a-b-..-c"
    assert L.safe_page_id(3, "x" * 500) == "000003-" + "x" * 60


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(url=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=80).filter(str.strip),
       annotator=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40).filter(str.strip))
def test_any_unicode_string_round_trips(tmp_path: Path, url: str, annotator: str) -> None:
    db = tmp_path / "prop.sqlite3"
    lid = L.save_label(db, label(url=url, annotator=annotator, keep_query=True))
    row = L.load_label(db, lid)
    assert row["url"] == url and row["annotator"] == annotator
    # By default the URL is kept up to its first "?" or "#".
    assert L.load_label(db, L.save_label(db, label(url=url)))["url"] == re.split(r"[?#]", url)[0]
    assert L.safe_page_id(lid, url).startswith(f"{lid:06d}")
    assert re.fullmatch(r"[0-9]{6}(-[A-Za-z0-9._-]+)?", L.safe_page_id(lid, url))


# ---------------------------------------------------------------------------------------------- export


def test_export_is_a_dataset_that_eval_loads(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    ids = BUILT.ids
    L.save_label(db, label())
    L.save_label(db, label(annotator="bob", nodes=[ids["p1"]]))
    other = build(page(), source='<html data-cx="0"><body data-cx="1">b</body></html>', url="http://h/b", lang="")
    L.save_label(db, {"url": "http://h/b", "annotator": "bob", "nodes": [1], "snapshot": other.raw,
                      "dataset": "cleaneval", "page_id": "dev-7"})
    out = tmp_path / "set"
    meta = L.export_dataset(db, out)
    assert [m["id"] for m in meta] == ["000001-127.0.0.1-news-canal", "000003-dev-7"]
    first = meta[0]
    assert first["annotator"] == "alice" and first["annotators"] == ["alice", "bob"] and first["label_ids"] == [1, 2]
    assert first["language"] == "en" and first["lang"] == "en-GB" and meta[1]["language"] == "und"
    assert first["nodes"] == [ids["article"]] and first["node_paths"] == ["html:1>body:2>article:2"]
    assert meta[1]["dataset"] == "cleaneval" and meta[1]["page_id"] == "dev-7"
    html = (out / "pages" / "000001-127.0.0.1-news-canal.html").read_text(encoding="utf-8")
    assert "data-cx" not in html
    assert re.sub(r' data-cx="\d+"', "", SOURCE).replace("windows-1252", "utf-8") == html
    assert (out / "pages" / "000003-dev-7.html").read_text(encoding="utf-8") == "<html><body>b</body></html>"
    ds = load_dataset(out)
    assert [p.id for p in ds.pages] == ["000001-127.0.0.1-news-canal", "000003-dev-7"]
    assert ds.pages[0].gold.text == "One two three four five six seven.\nEight nine ten eleven twelve."
    assert ds.pages[0].language == "en"
    lines = (out / "meta.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == meta

    # A second export into the same folder needs --force, and then leaves no stale page behind.
    with pytest.raises(FileExistsError):
        L.export_dataset(db, out)
    (out / "pages" / "stale.html").write_text("x")
    meta_all = L.export_dataset(db, out, every=True, force=True)
    assert len(meta_all) == 3
    assert sorted(p.name for p in (out / "pages").iterdir()) == sorted(f"{m['id']}.html" for m in meta_all)


def test_export_html_declares_utf8() -> None:
    assert L.export_html('<html data-cx="0"><head data-cx="1"></head><body data-cx="2">é</body></html>') == \
        '<html><head><meta charset="utf-8"></head><body>é</body></html>'
    src = '<head data-cx="1"><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS" data-cx="2">'
    assert L.export_html(src) == '<head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
    # Only the collector's attribute (last in a start tag) is removed, not text that looks like it.
    assert L.export_html('<p data-cx="3">say data-cx="4" &gt;</p>') == '<p>say data-cx="4" &gt;</p>'


# ---------------------------------------------------------------------------------------------- agreement


def test_agreement_token_and_node_f1(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    ids = BUILT.ids
    L.save_label(db, label(annotator="alice", nodes=[ids["article"]]))
    L.save_label(db, label(annotator="bob", nodes=[ids["p1"], ids["p2"]]))
    L.save_label(db, label(annotator="carol", nodes=[ids["p1"]]))
    L.save_label(db, label(url="http://only-one/", annotator="alice"))  # one annotator: no agreement row
    res = L.agreement(db)
    [pg] = res["pages"]
    assert pg["annotators"] == ["alice", "bob", "carol"]
    pairs = {(p["a"], p["b"]): p for p in pg["pairs"]}
    # Same text: token F1 1; element sets {article, p1, p2} vs {p1, p2}: 2*2/(3+2).
    assert pairs[("alice", "bob")]["token_f1"] == 1.0
    assert pairs[("alice", "bob")]["node_f1"] == pytest.approx(0.8)
    # bob {p1, p2} vs carol {p1}: 2*1/3.
    assert pairs[("bob", "carol")]["node_f1"] == pytest.approx(2 / 3)
    # carol's 7 tokens vs 12: shingles 4 of 9 shared -> P = 1 (carol in bob), R = 4/9.
    p, r = 1.0, 4 / 9
    assert pairs[("bob", "carol")]["token_f1"] == pytest.approx(2 * p * r / (p + r))
    assert pg["node_f1"] == pytest.approx((0.8 + 2 / 3 + 2 * 1 / 4) / 3)
    assert res["token_f1"] == pytest.approx(pg["token_f1"]) and res["node_f1"] == pytest.approx(pg["node_f1"])


def test_agreement_maps_nodes_across_re_renders_by_path(tmp_path: Path) -> None:
    """Node F1 compares selections through their tag:nth-child paths, so a re-render with the same tree agrees
    fully, and one where an element was inserted before the selection does not (a documented limitation)."""
    shifted = build(page(extra_first=True), source=SOURCE)
    db = tmp_path / "l.sqlite3"
    L.save_label(db, label(annotator="alice", nodes=[BUILT.ids["footer"]]))
    L.save_label(db, label(annotator="bob", nodes=[shifted.ids["footer"]], snapshot=shifted.raw))
    [pg] = L.agreement(db)["pages"]
    # Ids differ (footer is 8 vs 9) and the path too (body child 3 vs 4): the footer is not found -> node F1 0,
    # although the text agrees.
    assert BUILT.ids["footer"] != shifted.ids["footer"]
    assert pg["pairs"][0]["token_f1"] == 1.0 and pg["pairs"][0]["node_f1"] == 0.0
    # Same structure, another collection: ids equal, paths resolve, full agreement.
    again = build(page(), source=SOURCE)
    L.save_label(db, label(annotator="bob", nodes=[again.ids["footer"]], snapshot=again.raw))
    [pg] = L.agreement(db)["pages"]  # bob's latest label counts
    assert pg["pairs"][0]["label_b"] == 3 and pg["pairs"][0]["node_f1"] == 1.0


def test_resolve_path() -> None:
    snap = BUILT.snapshot
    for name, node in BUILT.ids.items():
        [path] = L.node_paths(snap, [node])
        assert L.resolve_path(snap, path) == node, name
    assert L.node_paths(snap, [0]) == ["html:1"]
    # Several nodes at once, in the order given (the one-pass stack shares their common ancestors).
    ids = BUILT.ids
    assert L.node_paths(snap, [ids["footer"], ids["p2"], ids["a"], ids["p1"]]) == [
        "html:1>body:2>footer:3", "html:1>body:2>article:2>p:2", "html:1>body:2>nav:1>a:1",
        "html:1>body:2>article:2>p:1"]
    assert L.resolve_path(snap, "html:1>body:2>div:2") is None  # tag differs
    assert L.resolve_path(snap, "html:1>body:9") is None  # no such child
    assert L.resolve_path(snap, "html:1>body:x") is None


# ---------------------------------------------------------------------------------------------- migrations


def test_old_database_is_migrated_and_newer_refused(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    conn = L.connect(db, upto=1)
    assert L.schema_version(conn) == 1
    conn.execute("INSERT INTO labels (created, url, annotator, title, lang, nodes, node_paths, text, n_elements, "
                 "snapshot, snapshot_sha256, source) VALUES ('t', 'u', 'a', '', '', '[1]', '[\"html:1\"]', 'old', "
                 "1, ?, '', ?)", (zlib.compress(b"{}"), zlib.compress(b"<p>")))
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "labels_by_url" not in indexes
    conn.close()
    conn = L.connect(db)
    assert L.schema_version(conn) == L.SCHEMA_VERSION == 5
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"labels_by_url", "labels_by_page", "labels_by_save_id"} <= indexes
    assert [r["text"] for r in L.list_labels(conn)] == ["old"]
    # The old row has no save_id; new saves with and without one go in beside it.
    assert conn.execute("SELECT save_id FROM labels").fetchall() == [(None,)]
    assert L.save_label(conn, label(save_id="k" * 8)) == L.save_label(conn, label(save_id="k" * 8)) == 2
    assert L.save_label(conn, label()) == 3
    conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    with pytest.raises(L.LabelError) as info:
        L.save_label(db, label())
    assert info.value.code == "E_STORAGE" and "newer" in info.value.message


def test_unwritable_location_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(L.LabelError) as info:
        L.save_label(blocker / "labels.sqlite3", label())
    assert info.value.code == "E_STORAGE"


# ---------------------------------------------------------------------------------------------- privacy (issue #20)

FORM_SOURCE = (
    '<html data-cx="0"><head data-cx="1"><script data-cx="2">var token = "s3cret"; if (a < b) go("</scrip" + "t>");'
    '</script><style data-cx="3">a[title="<script>"] { color: red }</style></head><body data-cx="4">'
    '<!-- <input value="in a comment"> --><form data-cx="5">'
    '<input type="hidden" name="csrf" value="CSRF-TOKEN" data-cx="6">'
    "<INPUT Value='a>b' checked type=\"checkbox\" data-cx=\"7\">"
    '<textarea name="draft" data-cx="8">my private draft</textarea>'
    '<select data-cx="9"><option value="a" selected data-cx="10">A</option></select></form>'
    '<p title="x > y" data-cx="11">Text that says &lt;input value=1&gt; stays.</p>'
    '<svg data-cx="12"><script data-cx="13">alert(1)</script></svg></body></html>')


def test_scrub_source_drops_script_contents_and_form_values() -> None:
    assert L.scrub_source(FORM_SOURCE) == (
        '<html data-cx="0"><head data-cx="1"><script data-cx="2"></script>'
        '<style data-cx="3">a[title="<script>"] { color: red }</style></head><body data-cx="4">'
        '<!-- <input value="in a comment"> --><form data-cx="5">'
        '<input type="hidden" name="csrf" data-cx="6">'
        '<INPUT type="checkbox" data-cx="7">'
        '<textarea name="draft" data-cx="8"></textarea>'
        '<select data-cx="9"><option value="a" data-cx="10">A</option></select></form>'
        '<p title="x > y" data-cx="11">Text that says &lt;input value=1&gt; stays.</p>'
        '<svg data-cx="12"><script data-cx="13"></script></svg></body></html>')
    # Tokenizer corner cases: abrupt comments, unquoted values, an attribute glued to a quoted value, an
    # unterminated tag (dropped with the rest, as a parser does), a case-insensitive end tag, <plaintext>.
    assert L.scrub_source("<!--><input value=1><!---><input value=2>") == "<!--><input><!---><input>"
    assert L.scrub_source('<input a="b"value="q"><input value=x/>') == '<input a="b"><input>'
    assert L.scrub_source('<p>kept</p><input value="never closed') == "<p>kept</p>"
    assert L.scrub_source("<SCRIPT>one</SCRIPT ><script>two") == "<SCRIPT></SCRIPT ><script>"
    assert L.scrub_source("<plaintext><input value=3>") == "<plaintext><input value=3>"
    assert L.scrub_source("") == "" and L.scrub_source("a < b > c") == "a < b > c"
    # End tags end at their own ">" (a quoted one inside does not count); "</ x" is a bogus comment up to the first.
    assert L.scrub_source('</a="><!--"><input value=1>') == '</a="><!--"><input value=1>'  # in a comment
    assert L.scrub_source('</p x="<input value=1>"><input value=2>') == '</p x="<input value=1>"><input>'
    assert L.scrub_source("</ e='>'<option selected>") == "</ e='>'<option>"
    assert L.scrub_source('<//a="><p/a=">') == '<//a=">'
    # Linear: a long source of many tags and one of one huge attribute both scrub in one pass.
    big = '<input value="v" data-cx="1">' * 50_000 + '<p title="' + "x" * 1_000_000
    assert L.scrub_source(big) == '<input data-cx="1">' * 50_000


def test_stored_label_keeps_no_scripts_form_values_or_query(tmp_path: Path) -> None:
    built = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [
        E("p", (0, 0, 100, 20), [T("Visible words")], name="p"),
        E("textarea", (0, 30, 100, 20), [T("my private draft")], name="ta")])]),
        source=FORM_SOURCE, url="https://mail.example/read?msg=42&session=abc#reply")
    db = tmp_path / "l.sqlite3"
    lid = L.save_label(db, {"url": "https://mail.example/read?msg=42&session=abc#reply", "annotator": "a",
                            "nodes": [built.ids["p"]], "snapshot": built.raw})
    full = L.load_label(db, lid)
    assert full["url"] == "https://mail.example/read" and full["snapshot"]["page"]["url"] == full["url"]
    assert full["source"] == L.scrub_source(FORM_SOURCE)
    for secret in ("s3cret", "CSRF-TOKEN", "my private draft", "alert(1)", "msg=42", "session=abc"):
        assert secret not in json.dumps(full), secret
        with sqlite3.connect(db) as conn:  # nor anywhere in the stored row, compressed columns included
            for row in conn.execute("SELECT * FROM labels"):
                flat = "".join(zlib.decompress(v).decode() if isinstance(v, bytes) else str(v) for v in row)
                assert secret not in flat, secret
    assert full["snapshot"]["text"]["text"] == ["Visible words", ""]  # the textarea's text is a form value too
    assert parse_snapshot(full["snapshot"]).n == built.snapshot.n and full["text"] == "Visible words"
    out = tmp_path / "set"
    L.export_dataset(db, out)
    [page_file] = (out / "pages").iterdir()
    assert "CSRF-TOKEN" not in page_file.read_text() and "<textarea name=\"draft\"></textarea>" in page_file.read_text()
    # Opt-in: the user keeps the query (e.g. a site whose pages differ only by ?id=).
    kept = L.save_label(db, {"url": "http://forum/view.php?id=7#p3", "annotator": "a", "nodes": [built.ids["p"]],
                             "snapshot": built.raw, "keep_query": True})
    full = L.load_label(db, kept)
    assert full["url"] == "http://forum/view.php?id=7#p3"
    assert full["snapshot"]["page"]["url"] == "https://mail.example/read?msg=42&session=abc#reply"
    with pytest.raises(L.LabelError, match="label.keep_query: expected true or false"):
        L.save_label(db, {**label(), "keep_query": "yes"})


def test_save_id_makes_a_retry_store_nothing_twice(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    key = "3f2b8c1e-0d4a-4e57-9c1b-7a6f5e4d3c2b"
    first = L.save_label(db, label(save_id=key))
    assert L.save_label(db, label(save_id=key)) == first  # the retry answers the first label's id ...
    assert count(db) == 1  # ... and stores nothing
    assert L.save_label(db, label()) != L.save_label(db, label())  # without a key every save is a new label
    with pytest.raises(L.LabelError) as info:  # a key reused for another label is a client bug, said so
        L.save_label(db, label(save_id=key, annotator="bob"))
    assert info.value.field == "label.save_id" and f"label {first}" in info.value.message
    for bad in ("short", "x" * 129, "has space x", 12345678, "é" * 10):
        with pytest.raises(L.LabelError) as info:
            L.save_label(db, label(save_id=bad))
        assert info.value.code == "E_REQUEST" and info.value.field == "label.save_id"
    assert count(db) == 3
    with sqlite3.connect(db) as conn, pytest.raises(sqlite3.IntegrityError):  # the database enforces it too
        conn.execute("UPDATE labels SET save_id = ? WHERE id != ?", (key, first))


def test_delete_by_id_url_and_age(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    for k in range(6):
        L.save_label(db, label(url=f"http://site/{k % 2}", annotator=f"a{k}", text=f"secret-{k}"))
    with sqlite3.connect(db) as conn:  # labels 1-3 were made 40 days ago
        conn.execute("UPDATE labels SET created = '2000-01-01T00:00:00.000Z' WHERE id <= 3")
    assert L.delete_labels(db, ids=[2, 5, 99]) == [2, 5]
    assert L.delete_labels(db, url="http://site/0", older_than=timedelta(days=30)) == [1, 3]  # both must hold
    assert [r["id"] for r in L.list_labels(db)] == [4, 6]
    assert L.delete_labels(db, older_than=timedelta(days=30)) == []
    assert L.delete_labels(db, url="http://site/1") == [4, 6] and count(db) == 0
    with pytest.raises(ValueError, match="needs"):
        L.delete_labels(db)
    # Deleted means gone from the files: secure_delete overwrote the rows, the WAL was checkpointed and emptied.
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert b"secret-" not in db.read_bytes()


# ---------------------------------------------------------------------------------------------- cost


def chain_page(depth: int, leaves: int) -> dict[str, Any]:
    """A chain of ``depth`` divs with ``leaves`` paragraphs under its last one (ids ``depth ..``)."""
    n = depth + leaves
    raw = build(E("html", (0, 0, 100, 100), [E("p", (0, 0, 10, 10), [T("w")])])).raw
    raw = json.loads(json.dumps(raw))
    el = raw["elements"]
    tag = {t: k for k, t in enumerate(raw["enums"]["tag"])}
    raw["enums"]["tag"].append("div")
    el["parent"] = [-1] + list(range(depth - 1)) + [depth - 1] * leaves
    el["tag"] = [tag["html"]] + [len(tag)] * (depth - 1) + [tag["p"]] * leaves
    el["box"] = [0, 0, 10, 10] * n
    for col in ("display", "position", "visibility", "flags"):
        el[col] = [el[col][1]] * n
    el["opacity"], el["font_size"] = [1] * n, [16] * n
    raw["text"] = {"owner": list(range(depth, n)), "seq": list(range(depth + 1, n + 1)), "text": ["w"] * leaves,
                   "rect_offsets": list(range(leaves + 1)), "rects": [0, 0, 5, 5] * leaves}
    raw["source"] = "<p>w</p>"
    return raw


def python_lines(fn: Any) -> int:
    """Lines of centrum.annotation.labels executed while ``fn`` runs: the Python-level work, counted (not timed)."""
    lines = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal lines
        if frame.f_code.co_filename != L.__file__:
            return None
        if event == "line":
            lines += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return lines


def test_label_save_work_grows_with_the_nodes_not_depth_times_nodes(tmp_path: Path) -> None:
    # Equal node count (2,000) and equal selection (1,000 leaves); only the depth above the leaves differs.
    shallow, deep = chain_page(2, 1000), chain_page(1000, 1000)
    lines = {}
    for name, raw in (("shallow", shallow), ("deep", deep)):
        leaves = list(range(len(raw["elements"]["parent"]) - 1000, len(raw["elements"]["parent"])))
        lab = {"url": "u", "annotator": "a", "nodes": leaves, "snapshot": raw}
        lines[name] = python_lines(lambda lab=lab: L.validate_label(lab))  # type: ignore[misc]
    rec = L.validate_label({"url": "u", "annotator": "a", "nodes": [1999], "snapshot": deep})
    assert rec.node_paths == [">".join(["html:1"] + ["div:1"] * 999 + ["p:1000"])]
    # Walking every leaf's ancestors would be 1,000 x 1,000 steps: 1,000x the shallow page's work, not ~1x.
    assert lines["deep"] < 2 * lines["shallow"], lines
    # Paths as long as depth x nodes are refused before they are built, naming the limit.
    too_deep = chain_page(4000, 1000)
    with pytest.raises(L.LabelError) as info:
        L.validate_label({"url": "u", "annotator": "a", "nodes": list(range(4000, 5000)), "snapshot": too_deep})
    assert info.value.field == "label.nodes" and str(L.MAX_NODE_PATH_CHARS) in info.value.message
    assert "24005893 characters" in info.value.message  # the exact length the paths would have had
    ok = L.node_paths(parse_snapshot(too_deep), list(range(4000, 5000)), limit=24_005_893)
    assert sum(map(len, ok)) == 24_005_893


# ---------------------------------------------------------------------------------------------- processes

WRITER = textwrap.dedent("""
    import sys
    from centrum.annotation import labels as L
    from centrum.core.builders import E, T, build
    db, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    words = " ".join(f"w{k}" for k in range(int(sys.argv[4]) if len(sys.argv) > 4 else 5))
    built = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [
        E("p", (0, 0, 100, 20), [T(words)], name="p")])]), source="<p>" + words + "</p>")
    k = 0
    while n < 0 or k < n:
        L.save_label(db, {"url": f"http://w/{who}/{k}", "annotator": who, "nodes": [built.ids["p"]],
                          "snapshot": built.raw})
        k += 1
        print(k, flush=True)
""")


def test_concurrent_writers_from_two_processes(tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "labels.sqlite3"  # both processes also race to create and migrate it
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), who, "25"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for who in ("p1", "p2")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
    rows = L.list_labels(db)
    assert len(rows) == 50 and len({r["id"] for r in rows}) == 50
    for who in ("p1", "p2"):
        assert sorted(r["url"] for r in rows if r["annotator"] == who) == sorted(f"http://w/{who}/{k}"
                                                                                 for k in range(25))
    conn = L.connect(db)
    assert L.schema_version(conn) == L.SCHEMA_VERSION
    conn.close()


def test_database_survives_a_killed_writer(tmp_path: Path) -> None:
    db = tmp_path / "labels.sqlite3"
    before = [L.save_label(db, label(annotator=f"a{k}")) for k in range(3)]
    saved = {r["id"]: r for r in L.list_labels(db)}
    # Big labels (200k words) so that the kill very likely lands inside a write.
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db), "killed", "-1", "200000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout
    try:
        assert proc.stdout.readline().strip() == "1", proc.stderr.read() if proc.stderr else ""
        time.sleep(0.3)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = {r["id"]: r for r in L.list_labels(db)}
    for lid in before:
        assert rows[lid] == saved[lid]
        assert L.load_label(db, lid)["snapshot"] == BUILT.raw
    killed = [r for r in rows.values() if r["annotator"] == "killed"]
    assert killed and all(len(r["text"].split()) == 200000 for r in killed)  # whole labels only
    for r in killed:
        L.load_label(db, r["id"])  # every committed blob decompresses
    assert L.save_label(db, label()) == max(rows) + 1  # and the store takes new labels


def test_writer_killed_inside_its_transaction(tmp_path: Path) -> None:
    """Deterministically mid-write: the process holds the write lock with an inserted, uncommitted label."""
    db = tmp_path / "labels.sqlite3"
    L.save_label(db, label())
    code = textwrap.dedent("""
        import sys, time
        from centrum.annotation import labels as L
        conn = L.connect(sys.argv[1])
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM labels")
        conn.execute("INSERT INTO labels (created, url, annotator, title, lang, nodes, node_paths, text, "
                     "n_elements, snapshot, snapshot_sha256, source) "
                     "VALUES ('t', 'half', 'a', '', '', '[]', '[]', '', 0, x'00', '', x'00')")
        print("inside", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout
    try:
        assert proc.stdout.readline().strip() == "inside", proc.stderr.read() if proc.stderr else ""
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert [r["url"] for r in L.list_labels(db)] == ["http://127.0.0.1/news/canal"]  # the delete never happened
    assert L.save_label(db, label()) == 2  # the dead process's lock is gone


def test_native_host_label_save(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    host = HostProcess(home)
    try:
        ok = host.ask({"v": 1, "id": "l1", "type": "label.save", "label": label()})
        assert ok["status"] == "ok" and ok["result"] == {"label_id": 1}, ok
        bad = host.ask({"v": 1, "id": "l2", "type": "label.save",
                        "label": label(nodes=[999], annotator="'); DROP TABLE labels;--")})
        assert bad["status"] == "error" and bad["error"]["code"] == "E_REQUEST"
        assert bad["error"]["field"] == "label.nodes[0]"
        evil = host.ask({"v": 1, "id": "l3", "type": "label.save",
                         "label": label(annotator="'); DROP TABLE labels;--", url="../../etc/passwd")})
        assert evil["result"] == {"label_id": 2}
        assert host.ask({"v": 1, "id": "p", "type": "ping"})["status"] == "ok"  # still serving
    finally:
        host.close()
    rows = L.list_labels(home / "labels.sqlite3")
    assert [(r["annotator"], r["url"]) for r in rows] == [
        ("alice", "http://127.0.0.1/news/canal"), ("'); DROP TABLE labels;--", "../../etc/passwd")]
    # The host wrote only inside its data directory (stderr.txt is the test's capture of its stderr).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
    assert sorted(p.name for p in home.iterdir()) == ["host.log", "labels.sqlite3", "stderr.txt"]


def test_native_host_storage_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "labels.sqlite3").mkdir()  # a folder where the database should be
    host = HostProcess(home)
    try:
        res = host.ask({"v": 1, "id": "l1", "type": "label.save", "label": label()})
        assert res["status"] == "error" and res["error"]["code"] == "E_STORAGE", res
        assert host.ask({"v": 1, "id": "p", "type": "ping"})["status"] == "ok"
    finally:
        host.close()


def test_cli_list_export_agreement(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    L.save_label(db, label())
    L.save_label(db, label(annotator="bob", nodes=[BUILT.ids["p1"], BUILT.ids["p2"]]))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "centrum.cli", "labels", *args], capture_output=True,
                              text=True, timeout=120)

    listed = cli("list", "--db", str(db))
    assert listed.returncode == 0 and "2 labels" in listed.stdout and "bob" in listed.stdout
    as_json = [json.loads(x) for x in cli("list", "--db", str(db), "--json").stdout.splitlines()]
    assert [r["annotator"] for r in as_json] == ["alice", "bob"]
    agree = cli("agreement", "--db", str(db))
    assert agree.returncode == 0 and "alice vs bob" in agree.stdout and "0.800" in agree.stdout
    exported = cli("export", str(tmp_path / "out"), "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    assert len(load_dataset(tmp_path / "out").pages) == 1
    again = cli("export", str(tmp_path / "out"), "--db", str(db))
    assert again.returncode == 1 and "--force" in again.stderr
    missing = cli("list", "--db", str(tmp_path / "nope.sqlite3"))
    assert missing.returncode == 1 and "no label database" in missing.stderr
    assert not (tmp_path / "nope.sqlite3").exists()

    # delete: by id, URL, age; a dry run first; nothing without a selector; a bad age is a usage error.
    L.save_label(db, label(url="http://other/x?q=1"))  # id 3, stored as http://other/x
    dry = cli("delete", "--url", "http://other/x", "--dry-run", "--db", str(db))
    assert dry.returncode == 0 and dry.stdout.strip() == "would delete 1 label: 3" and count(db) == 3
    assert cli("delete", "--url", "http://other/x", "--db", str(db)).stdout.strip() == "deleted 1 label: 3"
    assert cli("delete", "--older-than", "30d", "--db", str(db)).stdout.strip() == "deleted 0 labels"
    nothing = cli("delete", "--db", str(db))
    assert nothing.returncode == 2 and "give label ids" in nothing.stderr and count(db) == 2
    bad = cli("delete", "--older-than", "thirty days", "--db", str(db))
    assert bad.returncode == 2 and "not an age like 30d" in bad.stderr
    assert cli("delete", "1", "2", "--older-than", "0s", "--db", str(db)).stdout.strip() == "deleted 2 labels: 1, 2"
    assert "0 labels" in cli("list", "--db", str(db)).stdout


def test_scrub_source_fallback_scan_gives_the_same_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the regex engine mis-matches possessive group repeats (CPython < 3.11.5, Debian 12's 3.11.2), the
    text-only fast path is used; it must scrub exactly as the full fast path does."""
    cases = [FORM_SOURCE, "<!--><input value=1><!---><input value=2>", '<input a="b"value="q"><input value=x/>',
             '<p>kept</p><input value="never closed', "<SCRIPT>one</SCRIPT ><script>two", "a < b > c <3 <!x>",
             '</a="><!--"><input value=1>', "</ e='>'<option selected>", '<//a="><p/a=">']
    fast = [L.scrub_source(c) for c in cases]
    monkeypatch.setattr(L, "_PLAIN", L._PLAIN_FALLBACK)
    assert [L.scrub_source(c) for c in cases] == fast
    assert L._plain_is_sound() is False  # the probes see the fallback's shorter matches
