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
