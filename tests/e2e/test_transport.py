"""The snapshot's two encodings carry the same page: one collection in real Chromium is emitted both as JSON number
lists (``centrumCollect({encoding: "json"})``) and packed (``centrumPack`` of that very object), and the host parses
both to equal arrays, on every fixture page and on 50 pages of the shared data sets."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from centrum.core.render import Renderer
from centrum.core.snapshot import parse_snapshot

REPO = Path(__file__).resolve().parents[2]
FIXTURE_PAGES = sorted((REPO / "tests" / "fixtures" / "pages").glob("*.html"))
COLUMNS = ("parent", "tag_code", "box", "display", "position", "visibility", "opacity", "font_size", "flags",
           "text_owner", "text_seq", "text_rect_offsets", "text_rects")
# Runs in the page after the renderer's own collection (main world: the renderer runs with isolated=False).
BOTH = {"both": "() => { const s = centrumCollect({encoding: 'json'}); return JSON.stringify([s, centrumPack(s)]); }"}


@pytest.fixture(scope="module")
def main_world_renderer() -> object:
    with Renderer(window=(1280, 800), timeout_s=20, isolated=False) as r:
        yield r


def assert_same_arrays(renderer: Renderer, page: Path) -> None:
    out = renderer.render(page, source=False, extra=BOTH)
    assert out.extra.get("both"), f"{page.name}: {out.errors}"
    as_lists, packed = json.loads(out.extra["both"])
    assert isinstance(as_lists["elements"]["parent"], list) and isinstance(packed["elements"]["parent"], dict)
    a, b = parse_snapshot(as_lists), parse_snapshot(packed)
    assert a.n == b.n and a.n > 0, page.name
    for name in COLUMNS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), f"{page.name}: {name}"
    assert a.attrs == b.attrs and a.texts == b.texts, page.name


@pytest.mark.parametrize("page", FIXTURE_PAGES, ids=[p.name for p in FIXTURE_PAGES])
def test_fixture_pages_parse_equal_in_both_encodings(main_world_renderer: Renderer, page: Path) -> None:
    assert_same_arrays(main_world_renderer, page)


def test_shared_pages_parse_equal_in_both_encodings(main_world_renderer: Renderer,
                                                    shared_pages: Callable[[int], list[Path]]) -> None:
    for page in shared_pages(50):
        assert_same_arrays(main_world_renderer, page)


# The press sends the snapshot compressed (extension/src/pack.js, PROTOCOL.md "Compressed snapshot"): one collection
# with its source, packed in the page by pack.js's own code, inflates to the very same JSON value, whether the bytes
# are turned into base64 by Uint8Array.toBase64 or by the btoa fallback of browsers without it.
PACK_JS = (REPO / "extension" / "src" / "pack.js").read_text(encoding="utf-8")
PACKED = {"packed": f"""async () => {{ {PACK_JS}
    const pack = globalThis[Symbol.for("centrum.pack")];
    const s = centrumCollect({{source: true}});
    const text = JSON.stringify(s);
    const gz = await pack.gzipBase64(text);
    const bytes = Uint8Array.from(atob(gz), (c) => c.charCodeAt(0));
    bytes.toBase64 = undefined;  // the fallback, on the same bytes
    return JSON.stringify([text, gz, pack.base64(bytes)]);
}}"""}


def assert_packed_inflates_to_the_snapshot(renderer: Renderer, page: Path) -> None:
    import base64
    import gzip

    out = renderer.render(page, source=False, extra=PACKED)
    assert out.extra.get("packed"), f"{page.name}: {out.errors}"
    text, gz, fallback = json.loads(out.extra["packed"])
    assert fallback == gz, page.name
    inflated = gzip.decompress(base64.b64decode(gz, validate=True)).decode("utf-8")
    assert json.loads(inflated) == json.loads(text) and json.loads(text)["source"], page.name


@pytest.mark.parametrize("page", FIXTURE_PAGES, ids=[p.name for p in FIXTURE_PAGES])
def test_fixture_pages_inflate_to_the_same_snapshot(main_world_renderer: Renderer, page: Path) -> None:
    assert_packed_inflates_to_the_snapshot(main_world_renderer, page)


def test_shared_pages_inflate_to_the_same_snapshot(main_world_renderer: Renderer,
                                                    shared_pages: Callable[[int], list[Path]]) -> None:
    for page in shared_pages(10):
        assert_packed_inflates_to_the_snapshot(main_world_renderer, page)
