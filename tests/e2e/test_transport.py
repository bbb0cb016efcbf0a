"""The snapshot's two encodings carry the same page: one collection in real Chromium is emitted both as JSON number
lists (``centrumCollect({encoding: "json"})``) and packed (``centrumPack`` of that very object), and the host parses
both to equal arrays, on every fixture page and on 50 pages of the shared data sets. The press profile
(extension/src/pack.js) gives the ensemble the same arrays, features and answer as the full collection."""

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


# The press profile (pack.js): the walk without the `unseen` judgement (with the source, which the ensemble's DANA
# proposers read). Every array an algorithm reads is the same as the full collection's, made right after it in the
# same page, so the ensemble's candidates, features, block rows and answer are too; only `unseen` is absent (the
# reader hands the full one over when it opens).
PRESS = {"press": f"""async () => {{ {PACK_JS}
    const pack = globalThis[Symbol.for("centrum.pack")];
    const full = JSON.stringify(centrumCollect({{source: true}}));
    const press = await pack.collect({{source: true}}, {{press: true}});
    const zipped = await pack.collect({{source: true}}, {{press: true, form: "gzip"}});
    return JSON.stringify([full, press, zipped]);
}}"""}


def assert_press_profile_reads_the_same(renderer: Renderer, page: Path) -> None:
    import base64
    import gzip

    from centrum.algorithms import ensemble as E
    from centrum.core.trace import wanting

    out = renderer.render(page, source=False, extra=PRESS)
    assert out.extra.get("press"), f"{page.name}: {out.errors}"
    full_text, press, zipped = json.loads(out.extra["press"])
    # The press sends JSON text, gzipped above pack.js's GZIP_ABOVE (a large page's press comes zipped too).
    assert set(press) in ({"json"}, {"gzip"}) and set(zipped) == {"gzip"}, page.name
    unzipped = json.loads(gzip.decompress(base64.b64decode(zipped["gzip"])))
    press_text = press["json"] if "json" in press else gzip.decompress(base64.b64decode(press["gzip"])).decode()
    assert {**unzipped, "page": {}} == {**json.loads(press_text), "page": {}}, page.name  # another walk's timing
    full, lean = parse_snapshot(json.loads(full_text)), parse_snapshot(json.loads(press_text))
    assert lean.unseen_subtree is None and full.unseen_subtree is not None, page.name
    assert full.n == lean.n and full.m == lean.m, page.name
    for name in COLUMNS:
        assert np.array_equal(getattr(full, name), getattr(lean, name)), f"{page.name}: {name}"
    assert full.attrs == lean.attrs and full.texts == lean.texts and full.source == lean.source, page.name
    cfg, model, blocks = E.Config(), E.load_model(), E.load_block_model()
    with wanting(False, False):
        pages = [E.prepare(s, E.run_base(s, E.proposers_of(model, blocks))[0], cfg) for s in (full, lean)]
        answers = [E.run(s, cfg) for s in (full, lean)]
    assert pages[0].candidates == pages[1].candidates and np.array_equal(pages[0].X, pages[1].X), page.name
    if pages[0].candidates:
        best = pages[0].candidates[0]
        rows = [E.block_scores(s, best, pm, cfg, blocks) for s, pm in zip((full, lean), pages, strict=True)]
        assert np.array_equal(rows[0][0].X, rows[1][0].X) and np.array_equal(rows[0][1], rows[1][1]), page.name
    assert answers[0].nodes == answers[1].nodes and answers[0].text == answers[1].text, page.name


@pytest.mark.parametrize("page", FIXTURE_PAGES, ids=[p.name for p in FIXTURE_PAGES])
def test_fixture_pages_read_the_same_from_the_press_profile(main_world_renderer: Renderer, page: Path) -> None:
    assert_press_profile_reads_the_same(main_world_renderer, page)


def test_shared_pages_read_the_same_from_the_press_profile(main_world_renderer: Renderer,
                                                           shared_pages: Callable[[int], list[Path]]) -> None:
    for page in shared_pages(20):
        assert_press_profile_reads_the_same(main_world_renderer, page)


@pytest.mark.parametrize("page", FIXTURE_PAGES, ids=[p.name for p in FIXTURE_PAGES])
def test_fixture_pages_inflate_to_the_same_snapshot(main_world_renderer: Renderer, page: Path) -> None:
    assert_packed_inflates_to_the_snapshot(main_world_renderer, page)


def test_shared_pages_inflate_to_the_same_snapshot(main_world_renderer: Renderer,
                                                    shared_pages: Callable[[int], list[Path]]) -> None:
    for page in shared_pages(10):
        assert_packed_inflates_to_the_snapshot(main_world_renderer, page)
