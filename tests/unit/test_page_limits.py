"""A saved page is read at most `page_file_bytes` far, by every path that reads one (limits.read_page_file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from centrum.core.limits import PAGE_FILE_BYTES, TooLarge, read_page_file
from centrum.core.render import RenderError, target_url
from centrum.gold.datasets import PageItem
from centrum.gold.metrics import Gold


def page_of(path: Path, size: int) -> Path:
    head = b"<!DOCTYPE html><html><body><p>"
    with path.open("wb") as f:
        f.write(head)
        f.truncate(size)  # sparse: no 16 MiB written for the test
    return path


def test_a_page_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    assert len(read_page_file(page_of(tmp_path / "at.html", PAGE_FILE_BYTES))) == PAGE_FILE_BYTES
    over = page_of(tmp_path / "over.html", PAGE_FILE_BYTES + 1)
    with pytest.raises(TooLarge, match=r"over\.html: the file is over the page_file_bytes limit \(16777216 bytes"):
        read_page_file(over)
    # eval's data set loader and the renderer refuse it the same way, the renderer before a browser starts.
    with pytest.raises(TooLarge):
        PageItem("set", "over", over, Gold(text="")).html()
    with pytest.raises(RenderError, match="page_file_bytes"):
        target_url(over)


def test_a_data_set_reads_gzipped_pages_bounded_while_they_inflate(tmp_path: Path) -> None:
    import gzip
    import json
    import zlib

    from centrum.gold.datasets import DatasetError, load_dataset

    root = tmp_path / "set"
    (root / "pages").mkdir(parents=True)
    (root / "gold").mkdir()
    page = "<html><body><p>Le café est ouvert le dimanche.</p></body></html>".encode()
    (root / "pages" / "a.html.gz").write_bytes(gzip.compress(page))
    (root / "pages" / "b.html").write_bytes(page)
    for pid in "ab":
        (root / "gold" / f"{pid}.txt").write_text("Le café est ouvert le dimanche.")
    (root / "meta.jsonl").write_text("".join(json.dumps({"id": pid}) + "\n" for pid in "ab"))
    items = {item.id: item for item in load_dataset(root).pages}
    assert sorted(items) == ["a", "b"] and items["a"].html() == items["b"].html() == page
    # A small file that inflates past the limit is refused once the limit is read, never inflated whole.
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = z.compress(b"<p>") + b"".join(z.compress(bytes(1 << 20)) for _ in range(17)) + z.flush()
    (root / "pages" / "a.html.gz").write_bytes(bomb)
    assert len(bomb) < 100_000
    with pytest.raises(TooLarge, match="the file once inflated is over the page_file_bytes limit"):
        load_dataset(root).pages[0].html()
    (root / "pages" / "a.html.gz").write_bytes(b"not gzip at all")
    with pytest.raises(OSError, match="not a readable gzip file"):
        load_dataset(root).pages[0].html()
    (root / "pages" / "b.html.gz").write_bytes(gzip.compress(page))
    with pytest.raises(DatasetError, match="there twice"):
        load_dataset(root)
