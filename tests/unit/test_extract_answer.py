"""The native host's extract answer carries the page's metadata, and the Markdown / HTML the reader's "Copy as
Markdown" and "Save" buttons use when the request asks for them (PROTOCOL.md "Request")."""

from __future__ import annotations

from typing import Any

import pytest

from centrum import nativehost
from centrum.testing import E, T, build

SOURCE = ('<html lang="en" data-cx="0"><head data-cx="1"><title data-cx="2">Harbour reopens | Coast News</title>'
          '<meta property="og:site_name" content="Coast News" data-cx="3">'
          '<meta name="author" content="Ana Lima" data-cx="4">'
          '<meta property="article:published_time" content="2026-11-20T08:30:00Z" data-cx="5"></head>'
          '<body data-cx="6"><article data-cx="7"><h1 data-cx="8">Harbour reopens</h1>'
          '<p data-cx="9">After two years of works the old harbour opened again on Saturday to a large crowd.</p>'
          "</article></body></html>")


def harbour() -> dict[str, Any]:
    page = E("html", (0, 0, 1000, 1000), [
        E("head", children=[E("title", children=[T("Harbour reopens | Coast News")]),
                            E("meta", attrs={"property": "og:site_name", "content": "Coast News"}),
                            E("meta", attrs={"name": "author", "content": "Ana Lima"}),
                            E("meta", attrs={"property": "article:published_time",
                                             "content": "2026-11-20T08:30:00Z"})]),
        E("body", (0, 0, 1000, 1000), [
            E("article", (100, 100, 800, 400), [
                E("h1", (100, 100, 800, 40), [T("Harbour reopens")]),
                E("p", (100, 150, 800, 40), [T("After two years of works the old harbour opened again on Saturday "
                                               "to a large crowd.")]),
            ]),
        ]),
    ])
    built = build(page, source=SOURCE, url="https://coast.example/harbour", title="Harbour reopens | Coast News")
    return built.raw


def ask(**fields: Any) -> dict[str, Any]:
    request = {"v": 1, "id": 1, "type": "extract", "algorithm": "semantic", "snapshot": harbour(), **fields}
    answer: dict[str, Any] = nativehost.handle_extract(request)
    return answer


def test_answer_carries_the_metadata() -> None:
    answer = ask()
    m = answer["metadata"]
    assert answer["nodes"] == [7]  # the <article>
    assert m["title"] == "Harbour reopens"  # the site suffix is gone
    assert m["site_name"] == "Coast News" and m["byline"] == "Ana Lima"
    assert m["published"] == "2026-11-20T08:30:00+00:00" and m["language"] == "en"
    assert m["reading_minutes"] == 1 and m["excerpt"].startswith("After two years")
    assert "markdown" not in answer and "html" not in answer  # only when asked for
    assert "metadata" in answer["timing_ms"]


def test_markdown_and_html_when_asked() -> None:
    answer = ask(outputs=["markdown", "html"])
    assert "# Harbour reopens" in answer["markdown"] and "After two years of works" in answer["markdown"]
    assert 'author: "Ana Lima"' in answer["markdown"]
    assert answer["html"].startswith("<!DOCTYPE html>") and "<title>Harbour reopens</title>" in answer["html"]
    assert "data-cx" not in answer["html"]


def test_without_source_the_snapshot_still_gives_title_and_reading_time() -> None:
    raw = harbour()
    del raw["source"]
    answer = nativehost.handle_extract({"v": 1, "id": 1, "type": "extract", "algorithm": "semantic",
                                        "snapshot": raw, "outputs": ["markdown"]})
    # No og:site_name to recognise the suffix by (it does not match the host name): the title stays whole.
    assert answer["metadata"]["title"] == "Harbour reopens | Coast News" and answer["metadata"]["byline"] is None
    assert answer["metadata"]["reading_minutes"] == 1
    assert answer["markdown"] is None  # nothing to format without the source


@pytest.mark.parametrize("outputs", ["markdown", ["pdf"], ["markdown", 3], ["html"] * 3, {"a": 1}])
def test_bad_outputs_field_is_a_request_error(outputs: Any) -> None:
    with pytest.raises(nativehost.HostError) as err:
        ask(outputs=outputs)
    assert err.value.code == "E_REQUEST" and err.value.field == "outputs"


def test_all_answers_stay_results_without_metadata() -> None:
    answer = ask(algorithm="all")
    assert "semantic" in answer and "metadata" not in answer["semantic"]
