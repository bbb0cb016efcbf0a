"""The native host's extract answer is the Result and a handle of the page; the page's metadata and the Markdown /
HTML the reader's "Copy as Markdown" and "Save" buttons use come from an ``outputs`` request on that handle when the
reader opens, or with the extract when it asks for them (PROTOCOL.md "Request")."""

from __future__ import annotations

from typing import Any

import pytest

from centrum.core.builders import E, T, build
from centrum.native import nativehost

SOURCE = ('<html lang="en" data-cx="0"><head data-cx="1"><title data-cx="2">Harbour reopens | Coast News</title>'
          '<meta property="og:site_name" content="Coast News" data-cx="3">'
          '<meta name="author" content="Ana Lima" data-cx="4">'
          '<meta property="article:published_time" content="2026-11-20T08:30:00Z" data-cx="5"></head>'
          '<body data-cx="6"><article data-cx="7"><h1 data-cx="8">Harbour reopens</h1>'
          '<p data-cx="9">After two years of works the old harbour opened again on Saturday 20 November 2026 '
          'to a large crowd.</p>'
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
                # The page writes the day it declares (metadata counts a declared date only then).
                E("p", (100, 150, 800, 40), [T("After two years of works the old harbour opened again on Saturday "
                                               "20 November 2026 to a large crowd.")]),
            ]),
        ]),
    ])
    built = build(page, source=SOURCE, url="https://coast.example/harbour", title="Harbour reopens | Coast News")
    return built.raw


def ask(**fields: Any) -> dict[str, Any]:
    request = {"v": 1, "id": 1, "type": "extract", "algorithm": "semantic", "snapshot": harbour(), **fields}
    answer: dict[str, Any] = nativehost.handle_extract(request)
    return answer


def outputs_of(answer: dict[str, Any], *names: str) -> dict[str, Any]:
    out: dict[str, Any] = nativehost.handle_outputs({"v": 1, "id": 2, "type": "outputs", "page": answer["page"],
                                                     "outputs": list(names)})
    return out


def test_press_answer_is_the_result_without_outputs() -> None:
    answer = ask()
    assert answer["nodes"] == [7]  # the <article>
    assert not {"metadata", "markdown", "html"} & set(answer)  # built only when the reader asks
    assert "metadata" not in answer["timing_ms"]
    assert isinstance(answer["page"], str) and answer["page"]


def test_outputs_request_gives_the_metadata_of_the_extracted_page() -> None:
    m = outputs_of(ask(), "metadata")["metadata"]
    assert m["title"] == "Harbour reopens"  # the site suffix is gone
    assert m["sitename"] == "Coast News" and m["author"] == "Ana Lima"
    assert m["date"] == "2026-11-20T08:30:00+00:00" and m["language"] == "en"  # declared, and the page writes the day
    assert m["reading_minutes"] == 1 and m["description"].startswith("After two years")


def test_outputs_equal_those_asked_with_the_extract() -> None:
    names = ("metadata", "markdown", "html")
    with_extract = ask(outputs=list(names))
    later = outputs_of(ask(), *names)
    assert {k: with_extract[k] for k in names} == {k: later[k] for k in names}
    assert "metadata" in later["timing_ms"] and "metadata" in with_extract["timing_ms"]


def test_markdown_and_html_when_asked() -> None:
    answer = outputs_of(ask(), "markdown", "html")
    assert "metadata" not in answer
    assert "# Harbour reopens" in answer["markdown"] and "After two years of works" in answer["markdown"]
    assert 'author: "Ana Lima"' in answer["markdown"]
    assert answer["html"].startswith("<!DOCTYPE html>") and "<title>Harbour reopens</title>" in answer["html"]
    assert "data-cx" not in answer["html"]


def test_only_the_last_page_is_held() -> None:
    first = ask()
    second = ask()
    assert outputs_of(second, "metadata")["metadata"]["title"] == "Harbour reopens"
    with pytest.raises(nativehost.HostError) as err:
        outputs_of(first, "metadata")
    assert err.value.code == "E_REQUEST" and err.value.field == "page"


@pytest.mark.parametrize("page", [None, 7, "x" * 300, "not-a-handle"])
def test_bad_page_handle_is_a_request_error(page: Any) -> None:
    ask()
    with pytest.raises(nativehost.HostError) as err:
        nativehost.handle_outputs({"v": 1, "id": 2, "type": "outputs", "page": page, "outputs": ["metadata"]})
    assert err.value.code == "E_REQUEST" and err.value.field == "page"


@pytest.mark.parametrize("outputs", [[], None, ["pdf"]])
def test_outputs_request_names_outputs(outputs: Any) -> None:
    answer = ask()
    with pytest.raises(nativehost.HostError) as err:
        nativehost.handle_outputs({"v": 1, "id": 2, "type": "outputs", "page": answer["page"], "outputs": outputs})
    assert err.value.code == "E_REQUEST" and err.value.field == "outputs"


def test_without_source_the_snapshot_still_gives_title_and_reading_time() -> None:
    raw = harbour()
    del raw["source"]
    answer = nativehost.handle_extract({"v": 1, "id": 1, "type": "extract", "algorithm": "semantic",
                                        "snapshot": raw, "outputs": ["metadata", "markdown"]})
    # No og:site_name here, but the host (coast.example) names the suffix "Coast News".
    assert answer["metadata"]["title"] == "Harbour reopens" and answer["metadata"]["author"] is None
    assert answer["metadata"]["reading_minutes"] == 1
    assert answer["markdown"] is None  # nothing to format without the source


@pytest.mark.parametrize("outputs", ["markdown", ["pdf"], ["markdown", 3], ["html"] * 3, {"a": 1}])
def test_bad_outputs_field_is_a_request_error(outputs: Any) -> None:
    with pytest.raises(nativehost.HostError) as err:
        ask(outputs=outputs)
    assert err.value.code == "E_REQUEST" and err.value.field == "outputs"


def test_all_answers_stay_results_without_metadata() -> None:
    answer = ask(algorithm="all", outputs=["metadata"])
    assert "semantic" in answer and "metadata" not in answer["semantic"] and "page" not in answer["semantic"]


def test_outputs_of_a_press_profile_page_with_the_readers_unseen_equal_the_full_snapshots() -> None:
    """The press collects without the ``unseen`` judgement and the source (extension/src/pack.js); the reader, as it
    opens, sends the full collection's: the outputs and the disclosed panels are then those of the full snapshot.
    Ids past the page's elements (the view's own host element, added since) are left out."""
    names = ("metadata", "markdown", "html")
    full = harbour()
    full["unseen"] = {"subtree": [], "text": [9]}  # the paragraph's letters draw nothing
    want = outputs_of(ask(snapshot=full), *names)
    press = harbour()
    assert "unseen" not in press
    assert outputs_of(ask(snapshot=press), "markdown")["markdown"] != want["markdown"]  # the paragraph is there
    del press["source"]  # the press profile: no source unless the algorithm reads it
    answer = ask(snapshot=press)
    assert outputs_of(answer, "markdown")["markdown"] is None
    got = nativehost.handle_outputs({"v": 1, "id": 3, "type": "outputs", "page": answer["page"],
                                     "outputs": list(names), "unseen": {"subtree": [10], "text": [9]},
                                     "source": SOURCE})
    assert {k: got[k] for k in (*names, "disclosed")} == {k: want[k] for k in (*names, "disclosed")}
    with pytest.raises(nativehost.HostError) as err:
        nativehost.handle_outputs({"v": 1, "id": 4, "type": "outputs", "page": ask(snapshot=harbour())["page"],
                                   "outputs": ["metadata"], "unseen": {"subtree": [-1], "text": []}})
    assert err.value.code == "E_SNAPSHOT" and err.value.field == "unseen.subtree[0]"
