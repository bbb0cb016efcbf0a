"""Snapshot cache keys: every input that can change a render changes the key; version 1 keeps the first keys."""

from __future__ import annotations

import pytest

from centrum.core import render
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
    assert render.RENDERER_VERSION == 9 and {3, 4, 5, 6, 7, 8} <= set(render.CARRIED_OVER)
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


def _snapshot_showing(text: str) -> dict:
    """A hand-built snapshot of a page showing one paragraph of ``text``."""
    from centrum.core.builders import E, T, build

    page = E("html", (0, 0, 1920, 1080), [E("body", (0, 0, 1920, 1080), [E("p", (0, 0, 800, 400), [T(text)])])])
    return build(page).raw


def test_a_version_5_render_is_kept_unless_the_pages_scripts_took_most_of_its_text(tmp_path) -> None:
    """Version 6 renders a saved page again with scripts off when it showed under LOST_SHARE of the text its body holds
    (at least LOST_MIN_CHARS); every other version-5 render stays valid."""
    store = cache.SnapshotCache(tmp_path)
    story = "A sentence of the saved story. " * 40
    page = f"<html><body><article>{story}</article><script>var x = '{'y' * 900}';</script></body></html>".encode()
    short = b"<html><body><p>Hello there, short page.</p></body></html>"
    consent = "Accept our cookies."
    assert render._saved_text_chars(page) == len(story.replace(" ", ""))  # the script's text is not shown text
    for p, shown in ((page, story), (short, "Hello")):
        store.store(cache.snapshot_key(p, (1920, 1080), version=5), {"raw": _snapshot_showing(shown), "warnings": []})
    assert store.find(page, (1920, 1080)) is not None  # shows its story
    assert store.find(short, (1920, 1080)) is not None  # too little saved text to judge
    wiped = page.replace(b"<article>", b"<article id=w>")
    store.store(cache.snapshot_key(wiped, (1920, 1080), version=5), {"raw": _snapshot_showing(consent), "warnings": []})
    assert render._lost_to_scripts(_snapshot_showing(consent), wiped)
    assert store.find(wiped, (1920, 1080)) is None  # rendered again


def test_a_version_6_render_is_kept_when_the_noscript_rule_decides_as_before(tmp_path) -> None:
    """Version 7 counts <noscript> text and rendered text as non-blank characters (version 6: bytes with blanks,
    styles included): a version-6 render is kept unless the rule may now decide otherwise."""
    store = cache.SnapshotCache(tmp_path)
    story = "Posts that the page's scripts would draw. " * 40
    fonts = "<style>" + "@font-face{font-family:x;src:url(a.woff)}" * 200 + "</style>"

    def page(noscript: str, marker: str) -> bytes:
        return f"<html><body><p id={marker}>Loading</p><noscript>{noscript}</noscript></body></html>".encode()

    def entry(shown: str, *warnings: str) -> dict:
        return {"raw": _snapshot_showing(shown), "warnings": list(warnings)}

    cases = {  # page, version-6 entry, kept
        "shows its text": (page(story, "a"), entry(story), True),
        "an empty shell with its posts in <noscript>": (page(story, "c"), entry("Loading"), False),
        "rendered again by the <noscript> rule": (page(story, "d"), entry(story, render.NOSCRIPT_SHOWN + "; ..."),
                                                  False),
        "rendered again by the text-lost rule, little <noscript>": (
            page("Enable JavaScript.", "e"), entry(story, render.SCRIPTS_HID + " (0 of 900 characters shown)"), True),
        "rendered again by the text-lost rule, a page's worth in <noscript>": (
            page(story, "f"), entry(story, render.SCRIPTS_HID + " (0 of 900 characters shown)"), False),
        "rendered again after navigating": (page(story, "g"), entry("Loading", render.NAVIGATED + " 1 time(s)"), True),
    }
    # The rule itself: a short page whose <noscript> holds only a web font's CSS is not an empty shell (version 6
    # counted the CSS and rendered it again without scripts).
    assert not render._shown_only_without_scripts(_snapshot_showing("Loading, a moment."), page(fonts, "b"))
    assert render._shown_only_without_scripts(_snapshot_showing("Loading, a moment."), page(story, "b"))
    for name, (p, e, kept) in cases.items():
        store.store(cache.snapshot_key(p, (1920, 1080), version=6), e)
        assert (store.find(p, (1920, 1080)) is not None) is kept, name


def test_a_fresh_render_shaped_by_the_same_rules_keeps_the_earlier_versions_render(tmp_path) -> None:
    """A version-6 render that the <noscript> rule rendered again is not carried over by its entry alone; once a fresh
    render shows the rule still takes it, the version-6 render is kept (two renders jitter by a few pixels)."""
    store = cache.SnapshotCache(tmp_path)
    page = b"<html><body><noscript><p>The posts.</p></noscript></body></html>"
    shell, other = b"<html><body><p>Loading</p></body></html>", b"<html><body><p>Elsewhere</p></body></html>"
    again = render.NOSCRIPT_SHOWN + "; rendered again with JavaScript disabled"
    earlier = {"raw": _snapshot_showing("The posts."), "warnings": [again, "blocked 3 request(s)"]}
    for p in (page, shell):
        store.store(cache.snapshot_key(p, (1920, 1080), version=6), earlier)
    assert store.find(page, (1920, 1080)) is None  # the entry alone cannot vouch for it
    fresh = {"raw": _snapshot_showing("The posts, a pixel lower."), "warnings": [again, "blocked 2 request(s)"]}
    assert store.settle(page, (1920, 1080), None, fresh) == earlier
    # Shaped by other rules (here: none), the fresh render is the page's now; no earlier render: the fresh one.
    plain = {"raw": _snapshot_showing("Loading"), "warnings": ["blocked 3 request(s)"]}
    assert store.settle(shell, (1920, 1080), None, plain) is plain
    assert store.settle(other, (1920, 1080), None, fresh) is fresh
    # Only versions the renderer names: a version-5 render is never taken this way.
    store.store(cache.snapshot_key(other, (1920, 1080), version=5), earlier)
    assert store.settle(other, (1920, 1080), None, fresh) is fresh
    assert render.rules_taken(fresh) == {render.NOSCRIPT_SHOWN}
