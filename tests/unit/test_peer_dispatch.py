"""evaluation.peers.run_peer: the one place that runs a peer by name, for `centrum eval` and `centrum train`."""

from centrum.core.builders import E, T, build
from centrum.evaluation import peers

PAGE = b"<html><body><article><p>" + b"Plain words in a paragraph of the page. " * 20 + b"</p></article></body></html>"


def test_render_peers_need_a_render_and_say_so() -> None:
    snap = build(E("html", (0, 0, 100, 100), [E("body", (0, 0, 100, 100), [E("p", (0, 0, 100, 20), [T("Hi")])])]))
    whole = peers.run_peer("wholepage", PAGE, "en", snap.snapshot)
    assert (whole.text, whole.kind, whole.ran) == ("Hi", "", True)
    none = peers.run_peer("wholepage", PAGE, "en", None, None, "render crashed")
    assert (none.text, none.error, none.kind, none.ran) == (None, "render crashed", "render", False)
    no_extra = peers.run_peer("readability_js", PAGE, "en", snap.snapshot, {"extra": {}})
    assert no_extra.text is None and no_extra.kind == "error" and not no_extra.ran
    ok = peers.run_peer("readability_js", PAGE, "en", snap.snapshot,
                        {"extra": {"readability_js": {"text": "Body\n\nMore", "ms": 2.5}}})
    assert (ok.text, ok.ms, ok.kind, ok.ran) == ("Body\nMore", 2.5, "", True)
    empty = peers.run_peer("readability_js", PAGE, "en", snap.snapshot,
                           {"extra": {"readability_js": {"text": "", "error": "no article"}}})
    assert (empty.kind, empty.error) == ("empty", "no article")


def test_html_peers_run_on_the_bytes_and_never_raise() -> None:
    ans = peers.run_peer("trafilatura", PAGE, "en")
    assert ans.ran and ans.kind == "" and "Plain words in a paragraph" in (ans.text or "")
    bad = peers.run_peer("readability_lxml", b"", "en")  # lxml refuses an empty document
    assert bad.ran and bad.kind in ("empty", "error") and not bad.text and bad.error
