"""The per-snapshot arrays and fast paths the algorithms share (issue #43, the host's side) give exactly what the
plain definitions they replaced give, on every golden page (tests/pages/*/snapshot.json.gz) and on edge cases: the
packed-column decoder, the attribute grouping, the blank-text test, the tag masks, DANA's prefix count. The answers
themselves are held by tests/unit/test_goldens.py; a wider check of every algorithm's full answer on 200 cached real
pages is in docs/speed.md."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import numpy as np
import pytest
from helpers import goldens

from centrum.algorithms.dana import count_before
from centrum.algorithms.ensemble import features as F
from centrum.core.snapshot import _parse_attrs, _varints, pack_column, parse_snapshot

SLUGS = goldens.slugs()


def reference_varints(raw: np.ndarray) -> np.ndarray:
    """The per-byte decoder the vectorized one replaced (a shift per byte, OR-reduced per value)."""
    end = np.flatnonzero(raw < 128)
    start = np.r_[0, end[:-1] + 1]
    length = end - start + 1
    shift = (np.arange(raw.size) - np.repeat(start, length)) * 7
    u = np.bitwise_or.reduceat((raw & 127).astype(np.int64) << shift, start)
    return (u >> 1) ^ -(u & 1)


def reference_attrs(node: list[int], name: list[str], value: list[str]) -> dict[str, dict[int, str]]:
    attrs: dict[str, dict[int, str]] = {}
    for i, k, v in zip(node, name, value, strict=True):
        attrs.setdefault(k.lower(), {})[i] = v
    return attrs


def raw_of(slug: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress((goldens.PAGES / slug / goldens.SNAPSHOT).read_bytes()))
    return data


@pytest.mark.parametrize("slug", SLUGS)
def test_golden_page_arrays_equal_their_definitions(slug: str) -> None:
    raw = raw_of(slug)
    snap = parse_snapshot(raw)
    texts = snap.texts
    assert np.array_equal(snap.text_blank, np.array([not t.strip() for t in texts], dtype=bool))
    assert np.array_equal(snap.text_len, np.array([len(t) for t in texts], dtype=np.int64))
    for names in (("a",), ("h1", "h2", "h3"), ("body", "html"), ("p", "nosuchtag"), ()):
        assert np.array_equal(snap.tag_in(names), np.isin(snap.tags, list(names))), names
    a = raw["attrs"]
    node = a["node"] if isinstance(a["node"], list) else np.cumsum(_varints(np.frombuffer(
        base64.b64decode(a["node"]["varint"]), dtype=np.uint8), "attrs.node")).tolist()
    got, want = _parse_attrs(a, snap.n), reference_attrs(node, a["name"], a["value"])
    assert [(k, list(v.items())) for k, v in got.items()] == [(k, list(v.items())) for k, v in want.items()]
    source = np.frombuffer((snap.source or "").encode("utf-8"), dtype=np.uint8)
    mask = (source & 0xC0) != 0x80
    pos = np.unique(np.r_[0, source.size, np.arange(0, source.size, 97)])
    assert np.array_equal(count_before(mask, pos), np.r_[0, np.cumsum(mask)][pos])


def test_packed_column_decoder_equals_the_per_byte_one() -> None:
    rng = np.random.default_rng(7)
    values = np.r_[0, -1, 1, 63, 64, -64, -65, 2**20, -(2**20), 2**33, -(2**33), rng.integers(-(2**33), 2**33, 5000)]
    raw = np.frombuffer(base64.b64decode(pack_column(values)["varint"]), dtype=np.uint8)
    assert np.array_equal(_varints(raw, "x"), values)
    assert np.array_equal(_varints(raw, "x"), reference_varints(raw))


def test_attribute_grouping_keeps_the_loops_keys_order_and_last_values() -> None:
    node = [3, 1, 3, 2, 1, 0]
    name = ["Class", "id", "class", "ROLE", "ID", "data-x"]
    value = ["a", "b", "c", "d", "e", "f"]
    got = _parse_attrs({"node": node, "name": name, "value": value}, 4)
    want = reference_attrs(node, name, value)
    assert list(got.items()) == list(want.items())
    assert [list(v.items()) for v in got.values()] == [list(v.items()) for v in want.values()]
    assert _parse_attrs({"node": [], "name": [], "value": []}, 4) == {}


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, (1 << 21) - 1, 1 << 21, (1 << 21) + 9])
def test_prefix_count_equals_the_cumulative_sum(size: int) -> None:
    rng = np.random.default_rng(size)
    for density in (0.0, 0.3, 1.0):
        mask = rng.random(size) < density
        pos = np.unique(np.r_[0, size, rng.integers(0, size + 1, 2000)])
        assert np.array_equal(count_before(mask, pos), np.r_[0, np.cumsum(mask)][pos]), density


CUE_PATTERNS = (F.POSITIVE, F.NEGATIVE, F.STRONG_NEGATIVE, F.COMMENT_SECTION, F.THREAD, *F.CUE_GROUPS.values())


def reference_matches(values: list[str]) -> np.ndarray:
    return np.array([[p.search(v.lower()) is not None for p in CUE_PATTERNS] for v in values],
                    dtype=bool).reshape(len(values), len(CUE_PATTERNS))


@pytest.mark.parametrize("values", [
    [], [""], ["ad"], ["ad", "x-ad", "ads", "bad", "ad-"],
    ["tags", "tag", "\u0130tags", "ΟΔΟΣ nav", "comment", "commentary"],
    ["post\x00body", "nav", "", "AD"], ["main content", "Article", "foot", "comment-respond", "sidebar widget"]])
def test_cue_scan_equals_a_search_per_value(values: list[str]) -> None:
    assert np.array_equal(F._matches(values, CUE_PATTERNS), reference_matches(values))


@pytest.mark.parametrize("slug", SLUGS)
def test_cue_scan_on_golden_pages(slug: str) -> None:
    snap = goldens.load_snapshot(slug)
    values = list(dict.fromkeys([*snap.attrs.get("class", {}).values(), *snap.attrs.get("id", {}).values()]))
    assert np.array_equal(F._matches(values, CUE_PATTERNS), reference_matches(values))
