"""centrum batch's local engine (worker processes, no cluster) over a WARC holding every kind of record a crawl
holds: each record of interest gets one row with its status and provenance, the summary's counts add up to the
records read, recrawls and exact duplicates name the record they repeat, bytes are read as `centrum extract` reads
them; --only-ok, the Markdown format and --resume; and the local engine with Ray impossible to import."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from centrum.batch.crawl import FIRST_PAGE_ID, MIXED, page_html, write_crawl, write_mixed_crawl
from centrum.batch.engine import BatchOptions
from centrum.batch.run import run_batch
from centrum.batch.shards import read_rows, shard_files
from centrum.batch.worker import WorkerOptions

REPO = Path(__file__).resolve().parents[2]
SOURCE = WorkerOptions(algorithm="source", render=False, markdown=False)


def _run(warc: Path, out: Path, **kw: object) -> dict[str, object]:
    summary = run_batch(BatchOptions(inputs=[warc], out=out, worker=SOURCE, actors=2, fmt="jsonl",
                                     progress=False, **kw))  # type: ignore[arg-type]
    assert summary.engine == "local"
    return summary.to_json()


def test_every_record_of_a_mixed_crawl_is_accounted_for_with_its_provenance(tmp_path: Path) -> None:
    from fastwarc.warc import ArchiveIterator

    warc = tmp_path / "mixed.warc.gz"
    kinds = write_mixed_crawl(warc)
    out = tmp_path / "out"
    s = _run(warc, out)
    rows = list(read_rows(out))
    # The records read, by WARC-Type; every response and revisit record is a row, the others are only counted.
    responses = sum(len(urls) for kind, urls in kinds.items() if kind != "revisit")
    assert s["read"] == {"warcinfo": 1, "request": 1, "response": responses, "revisit": 1}
    assert s["of_interest"] == responses + 1 == len(rows) == s["records"]
    assert s["ok"] + s["http_error"] + s["skipped"] + s["failed"] == s["records"]  # type: ignore[operator]
    assert s["skipped_by_reason"] == {"not HTML": 3, "revisit": 1} and s["http_error"] == 2
    assert sum(s["errors"].values()) == s["failed"] == 2  # type: ignore[union-attr]
    # Each kind has the status it must have (a URL appears under two kinds for the recrawl and the revisit: rows
    # are matched in WARC order).
    order = [(kind, url) for kind, urls in kinds.items() for url in urls]
    by_offset = sorted(rows, key=lambda r: r["offset"])
    position = {url: [] for _k, url in order}  # type: dict[str, list[dict[str, object]]]
    for r in by_offset:
        position[r["url"]].append(r)
    for kind, url in order:
        statuses = {str(r["status"]) for r in position[url]}
        assert MIXED[kind] in statuses, (kind, url, statuses)
    by_url = {(r["url"], r["status"]): r for r in rows}
    page = lambda i: by_url[(f"http://archive.test/p/{i}.html", "ok")]  # noqa: E731
    first1 = min(position["http://archive.test/p/1.html"], key=lambda r: r["offset"])
    recrawl = max(position["http://archive.test/p/1.html"], key=lambda r: r["offset"])
    # 404 and 301 are http_error rows with their status, no text.
    for url, code in (("http://archive.test/missing.html", 404), ("http://archive.test/old.html", 301)):
        r = by_url[(url, "http_error")]
        assert r["http_status"] == code and r["text"] is None and str(code) in r["error_message"]
    # A recrawl (same URL, other bytes) and an exact duplicate (same bytes, other URL) name the first record.
    assert recrawl["duplicate_of"] == first1["record_id"] and first1["duplicate_of"] is None
    copy = by_url[("http://archive.test/copy/2.html", "ok")]
    assert copy["duplicate_of"] == page(2)["record_id"] and copy["content_hash"] == page(2)["content_hash"]
    assert recrawl["content_hash"] != first1["content_hash"]
    # Rows decided from the headers were made by the driver, not a worker; extracted rows name their worker.
    assert all(r["worker_pid"] is None for r in rows if r["status"].startswith(("skipped", "http_error")))
    assert all(r["worker_pid"] for r in rows if r["status"] in ("ok", "failed"))
    revisit = by_url[("http://archive.test/p/0.html", "skipped: revisit")]
    assert revisit["duplicate_of"] == FIRST_PAGE_ID == page(0)["record_id"]
    # Provenance: the record at each row's offset, read alone (length bytes), is the row's record.
    data = warc.read_bytes()
    for r in rows:
        assert r["warc_date"] and r["url"] and r["source"] == str(warc) and r["length"] > 0, r
        assert r["warc_type"] == "response" and r["content_hash"].startswith("sha1:") or r["warc_type"] == "revisit"
        alone = tmp_path / "one.warc.gz"
        alone.write_bytes(data[r["offset"]: r["offset"] + r["length"]])
        records = list(ArchiveIterator(str(alone)))
        assert [str(x.record_id) for x in records] == [r["record_id"]]
    # Bytes read as centrum.core.charset reads them: an iso-8859-1 label means windows-1252 (curly quotes, not C1
    # controls), a UTF-16 page by its BOM; the declared language is the row's.
    latin = by_url[("http://archive.test/latin.html", "ok")]
    assert "\u201cQuoted words\u201d" in latin["text"] and not any("\x80" <= c <= "\x9f" for c in latin["text"])
    assert latin["language"] == "fr" and page(0)["language"] == "en"
    u16 = by_url[("http://archive.test/u16.html", "ok")]
    assert "Story number 5" in u16["text"] and u16["charset"].startswith("utf-16")
    assert "XHTML page" in by_url[("http://archive.test/x.xhtml", "ok")]["text"]
    assert {by_url[(f"http://archive.test/{n}.html", "failed")]["error_code"] for n in ("empty", "noise")} <= {
        "E_INPUT", "E_EMPTY"}
    # Run again with --resume: every record already has its row.
    again = _run(warc, out, resume=True)
    assert again["records"] == 0 and again["already_done"] == len(rows)


def test_only_ok_keeps_the_other_rows_apart_and_resume_still_skips_them(tmp_path: Path) -> None:
    warc = tmp_path / "mixed.warc.gz"
    write_mixed_crawl(warc)
    out = tmp_path / "out"
    s = _run(warc, out, only_ok=True)
    ok, other = list(read_rows(out)), list(read_rows(out / "other"))
    assert {r["status"] for r in ok} == {"ok"} and len(ok) == s["ok"]
    assert "ok" not in {r["status"] for r in other} and len(ok) + len(other) == s["records"] == s["of_interest"]
    again = _run(warc, out, only_ok=True, resume=True)
    assert again["records"] == 0 and again["already_done"] == s["records"]


def test_markdown_shards_read_back_and_a_page_cannot_forge_a_row(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    forged = ('<!-- centrum-row {"record_id": "forged"} -->')
    (pages / "a.html").write_text(page_html(1).replace("Story number 1", f"Story number 1</h1><p>{forged}</p><h1>"),
                                  encoding="utf-8")
    (pages / "b.html").write_text(page_html(2), encoding="utf-8")
    out = tmp_path / "out"
    summary = run_batch(BatchOptions(inputs=[pages], out=out, worker=SOURCE, actors=1, fmt="markdown",
                                     progress=False))
    assert summary.records == 2 and [p.suffix for p in shard_files(out)] == [".md"]
    rows = {Path(r["source"]).name: r for r in read_rows(out)}
    assert set(rows) == {"a.html", "b.html"} and "forged" not in {r["record_id"] for r in rows.values()}
    assert "Story number 2" in rows["b.html"]["text"] and rows["b.html"]["status"] == "ok"
    assert rows["b.html"]["content_hash"].startswith("sha1:")


def test_a_shard_is_written_by_seconds_before_rows_per_shard_is_reached(tmp_path: Path) -> None:
    """A kill before --rows-per-shard rows keeps the rows of every --seconds-per-shard: here one shard per
    flush, each whole, however few rows (the last flush at the end of the run)."""
    warc = tmp_path / "c.warc.gz"
    write_crawl(warc, 400, paragraphs=60)
    out = tmp_path / "out"
    summary = run_batch(BatchOptions(inputs=[warc], out=out, worker=SOURCE, actors=1, fmt="jsonl", progress=False,
                                     rows_per_shard=100_000, seconds_per_shard=0.5))
    shards = shard_files(out)
    assert summary.records == 404 and len(shards) >= 2, (summary.seconds, len(shards))
    assert sum(1 for _ in read_rows(out)) == 404


BLOCKER = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "ray":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Absent())
"""


def test_batch_over_a_folder_runs_on_the_local_engine_with_ray_not_importable(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    for i in range(5):
        (pages / f"{i}.html").write_text(page_html(i), encoding="utf-8")
    out = tmp_path / "out"
    code = BLOCKER + textwrap.dedent(f"""
        import json, sys
        try:
            import ray  # noqa: F401
            raise SystemExit("ray imported")
        except ModuleNotFoundError:
            pass
        from centrum.cli import main
        sys.argv = ["centrum", "batch", "--no-progress", "--no-render", "--format", "jsonl", "--workers", "2",
                    {str(pages)!r}, "--out", {str(out)!r}]
        rc = main()
        print(json.dumps({{"rc": rc, "ray_loaded": "ray" in sys.modules}}))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    summary, end = (json.loads(line) for line in p.stdout.strip().splitlines()[-2:])
    assert end == {"rc": 0, "ray_loaded": False}
    assert summary["engine"] == "local" and summary["ok"] == 5 and summary["actors"] == 2
    assert summary["start_s"] < 10  # under 2 s on an idle machine; a loaded CI box gets slack
    assert len({r["worker_pid"] for r in read_rows(out)}) >= 1
    # With Ray installed, the local engine's driver still never imports it, also while it writes the rows of records
    # no worker needs (here the crawl's stylesheet and images): a Ray imported before engine.LOOPBACK_ENV is set
    # would make a later Ray run in the same process listen beyond loopback (it did, in `bench --batch`).
    warc = tmp_path / "c.warc.gz"
    write_crawl(warc, 3)
    code = textwrap.dedent(f"""
        import json, sys
        from centrum.batch.engine import BatchOptions
        from centrum.batch.run import run_batch
        from centrum.batch.worker import WorkerOptions
        s = run_batch(BatchOptions(inputs=[__import__("pathlib").Path({str(warc)!r})],
                                   out=__import__("pathlib").Path({str(tmp_path / "out3")!r}), progress=False,
                                   worker=WorkerOptions(algorithm="source", render=False), actors=1))
        print(json.dumps({{"ok": s.ok, "skipped": s.skipped, "ray": "ray" in sys.modules}}))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert (got["ok"], got["skipped"], got["ray"]) == (3, {"not HTML": 4}, False), got
    # And asking for Ray where it cannot be imported is a clear error, not a traceback.
    code = BLOCKER + textwrap.dedent(f"""
        import sys
        from centrum.cli import main
        sys.argv = ["centrum", "batch", "--no-progress", "--no-render", "--engine", "ray", {str(pages)!r},
                    "--out", {str(tmp_path / "out2")!r}]
        raise SystemExit(main())
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode == 2 and "centrum batch needs Ray: pip install 'centrum[batch]'" in p.stderr, p.stderr


def test_a_folder_s_copies_name_the_first_file_and_no_render_rows_have_markdown(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    for name, i in (("a.html", 1), ("b.html", 1), ("c.html", 2), ("d.html", 1)):
        (pages / name).write_text(page_html(i, paragraphs=4), encoding="utf-8")
    out = tmp_path / "out"
    worker = WorkerOptions(algorithm="source", render=False, markdown=True)
    run_batch(BatchOptions(inputs=[pages], out=out, worker=worker, actors=1, fmt="jsonl", progress=False))
    rows = {Path(r["source"]).name: r for r in read_rows(out)}
    first = rows["a.html"]["record_id"]
    assert [rows[n]["duplicate_of"] for n in ("a.html", "b.html", "c.html", "d.html")] == [None, first, None, first]
    assert rows["b.html"]["content_hash"] == rows["a.html"]["content_hash"] != rows["c.html"]["content_hash"]
    # The Markdown of the answer's elements (found by their paths in the page), with the front matter.
    md = rows["c.html"]["markdown"]
    assert md.startswith("---") and "# Story number 2" in md and "Paragraph 3 of story 2" in md
    assert "Copyright" not in md and rows["c.html"]["language"] == "en" and rows["c.html"]["text_truncated"] is False


def test_no_metadata_rows_keep_the_text_and_leave_metadata_and_language_empty(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    for i in range(3):
        (pages / f"{i}.html").write_text(page_html(i, paragraphs=4), encoding="utf-8")
    rows = {}
    for name, metadata, markdown in (("all", True, True), ("text", False, False), ("md", False, True)):
        worker = WorkerOptions(algorithm="source", render=False, markdown=markdown, metadata=metadata)
        run_batch(BatchOptions(inputs=[pages], out=tmp_path / name, worker=worker, actors=1, fmt="jsonl",
                               progress=False))
        rows[name] = {Path(r["source"]).name: r for r in read_rows(tmp_path / name)}
    for page, full in rows["all"].items():
        text, md = rows["text"][page], rows["md"][page]
        assert full["status"] == text["status"] == md["status"] == "ok" and not text["warnings"] and not md["warnings"]
        assert full["text"] == text["text"] == md["text"] and full["node_paths"] == text["node_paths"]
        assert json.loads(full["metadata"])["title"] and full["language"] == "en"
        assert text["metadata"] is None and text["language"] is None and text["markdown"] is None
        # Markdown without the metadata: the same content, no front matter.
        assert md["metadata"] is None and md["markdown"] and not md["markdown"].startswith("---")
        assert md["markdown"] in full["markdown"]


def test_a_text_over_the_row_limit_is_cut_at_a_line_end_and_the_row_says_so() -> None:
    from centrum.batch.worker import cap_text
    from centrum.core.limits import INPUT_LIMITS, ROW_TEXT_CHARS

    assert INPUT_LIMITS["row_text_chars"].value == ROW_TEXT_CHARS
    line = "x" * 99 + "\n"
    row = {"text": line * (ROW_TEXT_CHARS // 100 + 50), "markdown": None, "warnings": [], "text_truncated": False}
    full = len(row["text"])
    cap_text(row)
    assert row["text_truncated"] is True and len(row["text"]) <= ROW_TEXT_CHARS and row["text"].endswith("x")
    assert row["warnings"] == [f"text cut at {len(row['text'])} of {full} characters (the row_text_chars limit, "
                               f"{ROW_TEXT_CHARS})"]
    small = {"text": "short", "markdown": "short", "warnings": [], "text_truncated": False}
    cap_text(small)
    assert small == {"text": "short", "markdown": "short", "warnings": [], "text_truncated": False}
