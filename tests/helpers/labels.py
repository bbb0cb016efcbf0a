"""A hand-built news page and a label of its article, shared by the label-store, export and campaign tests."""

from __future__ import annotations

from typing import Any

from centrum.core.builders import E, T, build

SOURCE = ('<!DOCTYPE html><html data-cx="0"><head data-cx="1"><meta charset="windows-1252" data-cx="2"></head>'
          '<body data-cx="3"><nav data-cx="4"><a href="/" data-cx="5">Home</a></nav>'
          '<article data-cx="6"><p data-cx="7">One two three four five six seven.</p>'
          '<p data-cx="8">Eight nine ten eleven twelve.</p></article>'
          '<footer data-cx="9">Copyright</footer><img src="x.png" data-cx="10"/></body></html>')


def page(extra_first: bool = False) -> Any:
    """nav, article (two paragraphs), footer, image. ``extra_first`` inserts a banner before the nav (a re-render
    where every later node id and body child index shifts by one)."""
    body = [
        E("nav", (0, 0, 1000, 50), [E("a", (0, 0, 60, 20), [T("Home")], name="a")], name="nav"),
        E("article", (0, 60, 800, 400), [
            E("p", (0, 60, 800, 100), [T("One two three four five six seven.")], name="p1"),
            E("p", (0, 200, 800, 100), [T("Eight nine ten eleven twelve.")], name="p2"),
        ], name="article"),
        E("footer", (0, 900, 1000, 50), [T("Copyright")], name="footer"),
        E("img", (0, 960, 10, 10), name="img"),
    ]
    if extra_first:
        body.insert(0, E("div", (0, 0, 1000, 10), [T("Cookie banner")], name="banner"))
    return E("html", (0, 0, 1000, 1000), [
        E("head", children=[E("meta")]),
        E("body", (0, 0, 1000, 1000), body, name="body"),
    ])


BUILT = build(page(), source=SOURCE, url="http://127.0.0.1/news/canal", title="Canal", lang="en-GB")


def label(**over: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"url": "http://127.0.0.1/news/canal", "annotator": "alice",
                           "nodes": [BUILT.ids["article"]], "snapshot": BUILT.raw}
    out.update(over)
    return out
