"""centrum.batch without Ray: record discovery in WARCs, folders and URL lists, the archived charset rule, whole
shards, and the command's input errors (all raised before a cluster would start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from centrum.batch.crawl import HOST, page_url, response_record, write_crawl
from centrum.batch.inputs import InputError, archived, follow, index_warc, iter_inputs
from centrum.batch.shards import ShardWriter, done_ids, read_rows, shard_files
from centrum.cli import main


def test_warc_index_has_every_response_and_tasks_only_for_html(tmp_path: Path) -> None:
    warc = tmp_path / "c.warc.gz"
    write_crawl(warc, 12)
    index, tasks = index_warc(warc)
    assert [t.url for t in tasks] == [page_url(i) for i in range(12)]
    assert len({t.record_id for t in tasks}) == 12 and all(t.record_id.startswith("<urn:uuid:") for t in tasks)
    assert f"{HOST}/static/site.css" in index and f"{HOST}/static/img2.png" in index
    css = archived(str(warc), index[f"{HOST}/static/site.css"])
    assert css.status == 200 and css.headers["content-type"] == "text/css" and b"font-family" in css.body
    # Page 9 is windows-1252 declared only by HTTP: served with that charset spelled out.
    page = archived(str(warc), index[page_url(9)], page=True)
    assert page.headers["content-type"] == "text/html; charset=windows-1252"
    assert "café" in page.body.decode("cp1252")


def test_folders_url_lists_and_bad_inputs(tmp_path: Path) -> None:
    (tmp_path / "pages" / "sub").mkdir(parents=True)
    (tmp_path / "pages" / "a.html").write_text("<p>a</p>")
    (tmp_path / "pages" / "sub" / "b.htm").write_text("<p>b</p>")
    (tmp_path / "pages" / "c.css").write_text("p{}")
    urls = tmp_path / "urls.txt"
    urls.write_text("# comment\nhttps://example.org/a\n\nhttps://example.org/a\nhttp://example.org/b\n")
    got = {str(p): [t.kind for t in ts] for p, _, ts in iter_inputs([tmp_path / "pages", urls])}
    assert got == {str(tmp_path / "pages"): ["file", "file"], str(urls): ["url", "url"]}
    bad = tmp_path / "bad.txt"
    bad.write_text("https://ok.example/\nftp://nope/\n")
    with pytest.raises(InputError, match=r"bad.txt:2: not an http\(s\) URL"):
        list(iter_inputs([bad]))
    broken = tmp_path / "broken.warc.gz"
    broken.write_bytes(response_record(page_url(0), "text/html", b"<p>x</p>")[:40])
    with pytest.raises(InputError, match="not a readable WARC"):
        index_warc(broken)


def test_shards_are_whole_and_numbered_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    w = ShardWriter(out, "parquet", rows_per_shard=2)
    for i in range(5):
        w.add({"record_id": f"r{i}", "url": f"u{i}", "status": "ok", "node_paths": ["html:1"], "attempts": 1})
    w.flush()
    assert [p.name for p in shard_files(out)] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    (out / ".part-00003.parquet.tmp").write_bytes(b"torn")  # an interrupted write
    w2 = ShardWriter(out, "jsonl", rows_per_shard=10)
    assert not list(out.glob(".*.tmp")) and w2.next_index == 3
    w2.add({"record_id": "r5", "url": "u5", "status": "failed", "error_code": "E_EMPTY"})
    w2.flush()
    assert done_ids(out) == {f"r{i}" for i in range(6)}
    assert [r["record_id"] for r in read_rows(out)] == [f"r{i}" for i in range(6)]


def test_command_refuses_bad_usage_before_any_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warc = tmp_path / "c.warc.gz"
    write_crawl(warc, 1)
    assert main(["batch", str(warc), "--out", str(tmp_path / "o"), "-a", "nope"]) == 2
    assert "unknown algorithm 'nope'" in capsys.readouterr().err
    assert main(["batch", str(warc), "--out", str(tmp_path / "o"), "--no-render", "-a", "ensemble"]) == 2
    assert "--no-render works only with source, dana, danag, addanag" in capsys.readouterr().err
    assert main(["batch", str(warc), "--out", str(tmp_path / "o"), "--no-render", "-p", "block_threshold=7"]) == 2
    assert "block_threshold" in capsys.readouterr().err
    assert main(["batch", str(tmp_path / "missing.warc"), "--out", str(tmp_path / "o")]) == 2
    assert "no such input" in capsys.readouterr().err
    w = ShardWriter(tmp_path / "used", "jsonl")
    w.add({"record_id": "x"})
    w.flush()
    assert main(["batch", str(warc), "--out", str(tmp_path / "used")]) == 2
    assert "pass --resume" in capsys.readouterr().err


def test_archived_redirects_are_followed_inside_the_archive_only(tmp_path: Path) -> None:
    warc = tmp_path / "r.warc.gz"
    warc.write_bytes(response_record(f"{HOST}/old", "text/html", b"", 301, location="/new.html")
                     + response_record(f"{HOST}/gone", "text/html", b"", 302, location="http://elsewhere.test/")
                     + response_record(f"{HOST}/loop", "text/html", b"", 302, location="/loop")
                     + response_record(f"{HOST}/new.html", "text/html", b"<p>new</p>"))
    index, _ = index_warc(warc)
    new = follow(str(warc), index, f"{HOST}/old")
    assert new is not None and archived(str(warc), new).body == b"<p>new</p>"
    assert follow(str(warc), index, f"{HOST}/gone") is None  # the target is not archived: refused
    assert follow(str(warc), index, f"{HOST}/loop") is None
    assert follow(str(warc), index, f"{HOST}/missing") is None
