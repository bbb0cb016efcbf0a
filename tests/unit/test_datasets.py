"""Data set loader: the shared layout, trafilatura-style snippet gold, and a clear error for every defect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from centrum.gold.datasets import DatasetError, load_dataset


def make(root: Path, pages: dict[str, str], gold: dict[str, str], meta: list[str] | None) -> Path:
    (root / "pages").mkdir(parents=True)
    (root / "gold").mkdir()
    for pid, html in pages.items():
        (root / "pages" / f"{pid}.html").write_text(html, encoding="utf-8")
    for name, text in gold.items():
        (root / "gold" / name).write_text(text, encoding="utf-8")
    if meta is not None:
        (root / "meta.jsonl").write_text("\n".join(meta) + "\n", encoding="utf-8")
    return root


def test_loads_text_and_snippet_gold(tmp_path: Path) -> None:
    root = make(tmp_path / "mini", {"b": "<p>B</p>", "a": "<p>A</p>"},
                {"a.txt": "gold a", "b.json": json.dumps({"with": ["x y"], "without": ["menu", "  "]})},
                ['{"id": "a", "language": "de"}', "", '{"id": "b"}'])
    ds = load_dataset(root)
    assert ds.name == "mini"
    assert [p.id for p in ds.pages] == ["a", "b"]
    a, b = ds.pages
    assert a.gold.kind == "text" and a.gold.text == "gold a" and a.language == "de"
    assert b.gold.kind == "snippets" and b.gold.with_ == ("x y",) and b.gold.without == ("menu",)
    assert b.language == "und"
    assert a.html() == b"<p>A</p>"
    assert [p.id for p in load_dataset(root, limit=1).pages] == ["a"]


def test_snippet_gold_with_only_one_side(tmp_path: Path) -> None:
    root = make(tmp_path / "s", {"a": "x"}, {"a.json": json.dumps({"with": ["kept"]})}, None)
    gold = load_dataset(root).pages[0].gold
    assert gold.with_ == ("kept",) and gold.without == ()


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path / "nope")


def test_missing_pages_folder(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(DatasetError, match="no pages/ folder"):
        load_dataset(tmp_path / "d")


def test_missing_gold(tmp_path: Path) -> None:
    root = make(tmp_path / "d", {"a": "x", "b": "y"}, {"a.txt": "gold"}, None)
    with pytest.raises(DatasetError, match=r"missing gold for page 'b'"):
        load_dataset(root)


def test_bad_meta_line_names_the_line(tmp_path: Path) -> None:
    root = make(tmp_path / "d", {"a": "x"}, {"a.txt": "g"}, ['{"id": "a"}', '{"id": "b", oops}'])
    with pytest.raises(DatasetError, match=r"meta\.jsonl:2: bad meta line \(not JSON"):
        load_dataset(root)


@pytest.mark.parametrize("line, message", [
    ('["a"]', "expected a JSON object"),
    ('{"language": "en"}', 'missing or non-string "id"'),
    ('{"id": "a", "language": 3}', '"language" must be a string'),
])
def test_meta_line_shapes(tmp_path: Path, line: str, message: str) -> None:
    root = make(tmp_path / "d", {"a": "x"}, {"a.txt": "g"}, [line])
    with pytest.raises(DatasetError, match=r"meta\.jsonl:1: .*" + message.replace("(", r"\(")):
        load_dataset(root)


def test_duplicate_and_orphan_meta_ids(tmp_path: Path) -> None:
    root = make(tmp_path / "d", {"a": "x"}, {"a.txt": "g"}, ['{"id": "a"}', '{"id": "a"}'])
    with pytest.raises(DatasetError, match="duplicate id 'a'"):
        load_dataset(root)
    root = make(tmp_path / "e", {"a": "x"}, {"a.txt": "g"}, ['{"id": "a"}', '{"id": "ghost"}'])
    with pytest.raises(DatasetError, match="ids without a page file: ghost"):
        load_dataset(root)


@pytest.mark.parametrize("content, message", [
    ('{"with": [], "without": []}', "no snippets"),
    ("{}", "no snippets"),
    ('{"with": "one string"}', '"with" must be a list of strings'),
    ("[1, 2]", "must be an object"),
    ("{not json", "not valid UTF-8 JSON"),
])
def test_bad_snippet_gold(tmp_path: Path, content: str, message: str) -> None:
    root = make(tmp_path / "d", {"a": "x"}, {"a.json": content}, None)
    with pytest.raises(DatasetError, match=message):
        load_dataset(root)


def test_gold_not_utf8(tmp_path: Path) -> None:
    root = make(tmp_path / "d", {"a": "x"}, {}, None)
    (root / "gold" / "a.txt").write_bytes(b"caf\xe9")
    with pytest.raises(DatasetError, match="not UTF-8"):
        load_dataset(root)


def test_tinyset_fixture_loads() -> None:
    ds = load_dataset(Path(__file__).resolve().parents[1] / "fixtures" / "tinyset")
    assert {p.id: p.language for p in ds.pages} == {"ja-article": "ja", "styled-article": "en",
                                                    "unstyled-divs": "en"}


def test_gold_that_was_utf16_reencoded_as_utf8_is_repaired(tmp_path):
    from centrum.gold.datasets import _read_gold

    (tmp_path / "x.txt").write_text("\ufeffPaulo Coelho's Blog".encode("utf-16-le").decode("latin-1"), encoding="utf-8")
    assert _read_gold(tmp_path, "x").text == "Paulo Coelho's Blog"
