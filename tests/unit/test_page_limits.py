"""A saved page is read at most `page_file_bytes` far, by every path that reads one (limits.read_page_file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from centrum.evaluation.datasets import PageItem
from centrum.evaluation.metrics import Gold
from centrum.limits import PAGE_FILE_BYTES, TooLarge, read_page_file
from centrum.render import RenderError, target_url


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
