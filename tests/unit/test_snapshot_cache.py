"""Snapshot cache keys: every input that can change a render changes the key; version 1 keeps the first keys."""

from __future__ import annotations

import pytest

from centrum import render
from centrum.evaluation import cache


def test_key_changes_with_page_window_extras_and_renderer_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "RENDERER_VERSION", 1)
    page = b"<p>hello</p>"
    base = cache.snapshot_key(page, (1920, 1080))
    assert cache.snapshot_key(page, (1920, 1080)) == base
    assert cache.snapshot_key(b"<p>hello!</p>", (1920, 1080)) != base
    assert cache.snapshot_key(page, (1280, 800)) != base
    assert cache.snapshot_key(page, (1920, 1080), {"readability": "0.6"}) != base
    monkeypatch.setattr(render, "RENDERER_VERSION", 2)
    bumped = cache.snapshot_key(page, (1920, 1080))
    assert bumped != base
    monkeypatch.setattr(render, "RENDERER_VERSION", 3)
    assert cache.snapshot_key(page, (1920, 1080)) not in (base, bumped)


def test_version_one_keys_are_the_unversioned_keys_of_existing_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    monkeypatch.setattr(render, "RENDERER_VERSION", 1)

    page = b"<p>hello</p>"
    h = hashlib.sha256()
    h.update(hashlib.sha256(page).digest())
    h.update(f"|collector={cache.collector_version()}|window=1920x1080|".encode())
    assert cache.snapshot_key(page, (1920, 1080)) == h.hexdigest()


def test_a_render_of_an_earlier_version_is_kept_when_the_new_renderer_carries_it_over(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Versions 4 and 5 changed only pages whose load never finished (images reloading themselves on error, frames
    left loading): a version-3 render that loaded in time is found under the current key (and copied there); one that
    timed out is a miss."""
    assert render.RENDERER_VERSION == 5 and {3, 4} <= set(render.CARRIED_OVER)
    store = cache.SnapshotCache(tmp_path)
    fine, stuck, page3 = b"<p>fine</p>", b"<p>stuck</p>", b"<p>only three</p>"
    for page, warnings in ((fine, ["blocked 2 request(s) leaving the local page"]),
                           (stuck, [f"{render.LOAD_TIMEOUT} 15 s; collected what had rendered"])):
        entry = {"raw": {"p": page.decode()}, "warnings": warnings}
        store.store(cache.snapshot_key(page, (1920, 1080), version=3), entry)
    assert store.find(fine, (1920, 1080))["raw"] == {"p": "<p>fine</p>"}
    assert store.load(cache.snapshot_key(fine, (1920, 1080))) is not None  # copied under the current key
    assert store.find(stuck, (1920, 1080)) is None
    assert store.find(page3, (1920, 1080)) is None
    # Another window or another extra is another render, whatever the version.
    assert store.find(fine, (1280, 800)) is None and store.find(fine, (1920, 1080), {"x": "1"}) is None
    # A version that carries nothing over finds nothing of the earlier one.
    monkeypatch.setattr(render, "CARRIED_OVER", {})
    store.store(cache.snapshot_key(page3, (1920, 1080), version=3), {"raw": {}, "warnings": []})
    assert store.find(page3, (1920, 1080)) is None
