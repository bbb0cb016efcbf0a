"""Property-based tests: no snapshot, however broken, makes the parser or an algorithm raise anything but a
clear SnapshotError; every valid snapshot gets an answer (possibly "no result") from every algorithm."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from centrum import algorithms
from centrum.core.builders import E, T, build
from centrum.core.snapshot import SnapshotError, parse_snapshot

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def base_raw() -> dict:
    return build(E("html", (0, 0, 1200, 2000), [E("body", (0, 0, 1200, 2000), [
        E("article", (100, 100, 800, 900), [E("p", (100, 100, 800, 100), [T("Hello world. Second sentence.")])]),
        E("a", (0, 0, 50, 20), [T("Home")]),
    ])])).raw


def paths(obj, prefix=()):
    """Every (container path, key) in the raw snapshot, for targeted corruption."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix, k
            yield from paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield prefix, i
            yield from paths(v, prefix + (i,))


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
    st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
ALL_PATHS = list(paths(base_raw()))


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), JUNK, st.booleans()), min_size=1, max_size=4))
def test_corrupted_fields_raise_only_snapshot_error(corruptions):
    raw = base_raw()
    for (prefix, key), junk, delete in corruptions:
        target = raw
        try:
            for p in prefix:
                target = target[p]
            if delete and isinstance(target, dict):
                target.pop(key, None)
            else:
                target[key] = junk
        except (KeyError, IndexError, TypeError):
            continue
    try:
        snap = parse_snapshot(raw)
    except SnapshotError as e:
        assert e.field and e.message
    else:
        for name in algorithms.available():
            algorithms.run(name, snap)


@SETTINGS
@given(st.integers(min_value=0, max_value=4000))
def test_truncated_json_is_refused_cleanly(cut):
    text = json.dumps(base_raw())
    cut = min(cut, len(text) - 1)
    with pytest.raises(ValueError):  # json.JSONDecodeError is a ValueError; the host maps it to E_JSON
        parse_snapshot(json.loads(text[:cut]))


@st.composite
def random_pages(draw):
    n = draw(st.integers(min_value=1, max_value=60))
    parents = [-1] + [draw(st.integers(min_value=0, max_value=i - 1)) for i in range(1, n)]
    tags = ["html", "body", "div", "p", "a", "article", "main", "span", "img", "li", "ul", "h1", "section", "br"]
    displays = ["block", "inline", "none", "flex", "table-cell", "list-item", "inline-block"]
    coord = st.floats(min_value=0, max_value=5000, allow_nan=False)
    el = {k: [] for k in ("parent", "tag", "box", "display", "position", "visibility", "opacity", "font_size",
                          "flags")}
    for i in range(n):
        el["parent"].append(parents[i])
        el["tag"].append(draw(st.integers(0, len(tags) - 1)) if i else 0)
        el["box"].extend([draw(coord), draw(coord), draw(coord), draw(coord)])
        el["display"].append(draw(st.integers(0, len(displays) - 1)))
        el["position"].append(draw(st.integers(0, 2)))
        el["visibility"].append(draw(st.integers(0, 1)))
        el["opacity"].append(draw(st.floats(0, 1)))
        el["font_size"].append(draw(st.floats(0, 72)))
        el["flags"].append(draw(st.integers(0, 255)))
    words = st.sampled_from(["Hello world.", "日本語の文章です。", "مرحبا بالعالم.", "", " ", "Привет.", "a" * 50,
                             "\u200f\u202e", "x. y. z."])
    m = draw(st.integers(min_value=0, max_value=40))
    nodes = []
    for _ in range(m):
        owner = draw(st.integers(0, n - 1))
        rects = [[draw(coord), draw(coord), draw(coord), draw(coord)] for _ in range(draw(st.integers(0, 2)))]
        nodes.append((owner + 1, owner, draw(words), rects))
    nodes.sort(key=lambda t: t[0])  # document order
    text = {"owner": [t[1] for t in nodes], "seq": [t[0] for t in nodes], "text": [t[2] for t in nodes],
            "rect_offsets": [0], "rects": []}
    for t in nodes:
        for r in t[3]:
            text["rects"].extend(r)
        text["rect_offsets"].append(text["rect_offsets"][-1] + len(t[3]))
    vw = draw(st.sampled_from([320, 1280, 1920]))
    vh = draw(st.sampled_from([480, 720, 1080]))
    raw = base_raw()
    raw["page"]["viewport"] = [vw, vh]
    raw["page"]["document"] = [draw(st.floats(0, 20000)), draw(st.floats(0, 20000))]
    raw["enums"] = {"tag": tags, "display": displays, "position": ["static", "fixed", "sticky"],
                    "visibility": ["visible", "hidden"]}
    raw["elements"] = el
    raw["attrs"] = {"node": [0], "name": ["class"], "value": ["article content"]}
    raw["text"] = text
    return raw


@SETTINGS
@given(random_pages())
def test_every_algorithm_answers_any_valid_page(raw):
    snap = parse_snapshot(copy.deepcopy(raw))
    for name in algorithms.available():
        result = algorithms.run(name, snap)
        assert all(0 <= i < snap.n for i in result.nodes), name
        assert result.nodes or result.message, f"{name}: an empty answer must say why"
        json.dumps(result.to_json())  # serializable for the native host
        for c in result.candidates:
            assert math.isfinite(c.score) or c.score in (math.inf, -math.inf), name


def test_zero_elements_answered_by_every_algorithm():
    raw = base_raw()
    for k in raw["elements"]:
        raw["elements"][k] = []
    raw["attrs"] = {"node": [], "name": [], "value": []}
    raw["text"] = {"owner": [], "seq": [], "text": [], "rect_offsets": [0], "rects": []}
    snap = parse_snapshot(raw)
    for name in algorithms.available():
        result = algorithms.run(name, snap)
        assert result.nodes == [] and result.message, name


def test_ten_thousand_deep_nesting_answered_by_every_algorithm():
    n = 10_000
    raw = base_raw()
    raw["enums"]["tag"] = ["html", "body", "div"]
    raw["elements"] = {
        "parent": list(range(-1, n - 1)), "tag": [0, 1] + [2] * (n - 2), "box": [0, 0, 800, 600] * n,
        "display": [0] * n, "position": [0] * n, "visibility": [0] * n, "opacity": [1] * n,
        "font_size": [16] * n, "flags": [1] * n,
    }
    raw["attrs"] = {"node": [], "name": [], "value": []}
    raw["text"] = {"owner": [n - 1], "seq": [n], "text": ["Deep text. More text."], "rect_offsets": [0, 1],
                   "rects": [0, 0, 800, 20]}
    snap = parse_snapshot(raw)
    for name in algorithms.available():
        algorithms.run(name, snap)
