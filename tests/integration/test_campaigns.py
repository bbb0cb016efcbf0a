"""Annotation campaigns (centrum.annotation.campaigns): the queue (overlap K with K distinct annotators, no annotator
twice,
resume, skip frees a slot, flag keeps it), the suggestion record, agreement figures on hand-computed cases,
adjudication, the export (node-level gold that the evaluation loads), hostile requests, the CLI and the native host
over real pipes."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.host import HostProcess
from helpers.labels import BUILT, label

from centrum.annotation import campaigns as C
from centrum.annotation import labels as L
from centrum.core.snapshot import parse_snapshot
from centrum.gold.datasets import load_dataset

IDS = BUILT.ids  # html 0, head 1, meta 2, body 3, nav 4, a 5, article 6, p1 7, p2 8, footer 9, img 10
PAGES = [("p1", "https://example.test/a"), ("p2", "https://example.test/b"), ("p3", None), ("p4", None)]


def make(db: Path, overlap: int = 2, annotators: list[str] | None = None, pages: Any = PAGES) -> dict[str, Any]:
    return C.create_campaign(db, "camp", pages, overlap=overlap, annotators=annotators, dataset="tiny")


def nxt(db: Path, who: str) -> dict[str, Any]:
    return C.next_page(db, "camp", who)


def sub(db: Path, who: str, aid: int, nodes: list[int], suggestion: list[int] | None = None) -> dict[str, Any]:
    lab = label(nodes=nodes)
    del lab["annotator"]
    req: dict[str, Any] = {"campaign": "camp", "annotator": who, "assignment": aid, "label": lab}
    if suggestion is not None:
        req["suggestion"] = suggestion
    return C.submit(db, req)


# ---------------------------------------------------------------------------------------------- queue


def test_each_page_goes_to_k_distinct_annotators_whatever_the_order(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    make(db, overlap=2, annotators=["a", "b", "c"])
    rng = random.Random(7)
    active = {"a", "b", "c"}
    seen: list[tuple[str, str]] = []
    while active:
        who = rng.choice(sorted(active))
        got = nxt(db, who)
        if got["assignment"] is None:
            active.discard(who)
            continue
        seen.append((got["page_id"], who))
        sub(db, who, got["assignment"], [IDS["article"]])
    assert len(seen) == len(set(seen))  # no annotator got a page twice
    per_page: dict[str, set[str]] = {}
    for pid, who in seen:
        per_page.setdefault(pid, set()).add(who)
    assert {pid: len(w) for pid, w in per_page.items()} == {"p1": 2, "p2": 2, "p3": 2, "p4": 2}
    assert holders_consistent(db)
    with sqlite3.connect(db) as conn:  # the store refuses a duplicate even if the queue code had a bug
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO assignments (campaign, page, annotator, state, created, updated) "
                         "SELECT campaign, page, annotator, 'open', '', '' FROM assignments LIMIT 1")


def test_pages_in_order_with_position_and_total(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    make(db, overlap=1, annotators=["a", "b"])
    first = nxt(db, "a")
    assert (first["page_id"], first["position"], first["total"], first["url"]) == ("p1", 1, 4, "https://example.test/a")
    sub(db, "a", first["assignment"], [IDS["article"]])
    b = nxt(db, "b")  # overlap 1: p1 is taken, b starts at p2 and may still get 3 pages
    assert (b["page_id"], b["position"], b["total"]) == ("p2", 1, 3)
    a2 = nxt(db, "a")
    assert (a2["page_id"], a2["position"], a2["total"]) == ("p3", 2, 3)


def test_resume_gives_the_open_assignment_again(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    make(db)
    one = nxt(db, "alice")
    # A browser restart: a new connection (a new host process) asks again and gets the same page.
    again = C.next_page(L.connect(db), "camp", "alice")
    assert again["assignment"] == one["assignment"] and again["page_id"] == "p1"
    sub(db, "alice", one["assignment"], [IDS["article"]])
    assert nxt(db, "alice")["page_id"] == "p2"


def test_skip_frees_the_slot_and_flag_keeps_it(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    make(db, overlap=1, pages=PAGES[:2])
    a = nxt(db, "a")
    assert C.skip_or_flag(db, {"campaign": "camp", "annotator": "a", "assignment": a["assignment"]},
                          "skipped")["state"] == "skipped"
    assert nxt(db, "a")["page_id"] == "p2"  # never p1 again
    b = nxt(db, "b")
    assert b["page_id"] == "p1"  # the skipped slot went to b
    with pytest.raises(L.LabelError) as e:
        C.skip_or_flag(db, {"campaign": "camp", "annotator": "b", "assignment": b["assignment"]}, "flagged")
    assert e.value.field == "reason"
    C.skip_or_flag(db, {"campaign": "camp", "annotator": "b", "assignment": b["assignment"],
                        "reason": "page is empty"}, "flagged")
    assert nxt(db, "c")["assignment"] is None  # p1 flagged (slot kept), p2 open with a: nothing for c
    st = C.status(db, "camp")
    assert st["flagged"] == [{"page_id": "p1", "annotator": "b", "reason": "page is empty"}]
    assert st["annotators"]["a"]["skipped"] == 1 and st["annotators"]["a"]["open"] == 1
    assert st["annotators"]["b"]["flagged"] == 1


def test_hostile_requests_are_refused_with_the_field(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    make(db, annotators=["a", "b"])
    aid = nxt(db, "a")["assignment"]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"campaign": "../x", "annotator": "a"}, "campaign"),
        ({"campaign": "nope", "annotator": "a"}, "campaign"),
        ({"campaign": ["camp"], "annotator": "a"}, "campaign"),
        ({"campaign": "camp", "annotator": "eve"}, "annotator"),
        ({"campaign": "camp", "annotator": "b", "assignment": aid}, "assignment"),  # a's, not b's
        ({"campaign": "camp", "annotator": "a", "assignment": True}, "assignment"),
        ({"campaign": "camp", "annotator": "a", "assignment": "1 OR 1=1"}, "assignment"),
        ({"campaign": "camp", "annotator": "a", "assignment": aid, "path": "/etc/passwd"}, "path"),
    ]
    for req, field in cases:
        with pytest.raises(L.LabelError) as e:
            C.skip_or_flag(db, req, "skipped") if "assignment" in req or "path" in req else \
                C.next_page(db, req["campaign"], req["annotator"])
        assert e.value.field == field, (req, e.value.message)
    lab = label()
    with pytest.raises(L.LabelError) as e:  # the campaign sets who labelled, not the request
        C.submit(db, {"campaign": "camp", "annotator": "a", "assignment": aid, "label": lab})
    assert e.value.field == "label.annotator"
    del lab["annotator"]
    with pytest.raises(L.LabelError) as e:
        C.submit(db, {"campaign": "camp", "annotator": "a", "assignment": aid, "label": lab, "suggestion": [99]})
    assert e.value.field == "suggestion[0]"
    assert L.list_labels(db) == []  # nothing stored by a refused request


def test_create_checks_its_arguments(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    with pytest.raises(L.LabelError, match="only 1 annotators"):
        make(db, overlap=2, annotators=["a"])
    with pytest.raises(L.LabelError, match="given twice"):
        make(db, pages=[("x", None), ("x", None)])
    make(db)
    with pytest.raises(L.LabelError, match="exists"):
        make(db)


# ---------------------------------------------------------------------------------------------- suggestion


def test_suggestion_is_recorded_and_a_change_counted(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    make(db, overlap=1, annotators=["a"])
    one = nxt(db, "a")
    assert sub(db, "a", one["assignment"], [IDS["article"]], suggestion=[IDS["article"]])["changed"] is False
    two = nxt(db, "a")
    # The suggestion nested p1 under the article: only the outer node counts (the covered elements are the same).
    assert sub(db, "a", two["assignment"], [IDS["p1"]], suggestion=[IDS["article"], IDS["p1"]])["changed"] is True
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT suggestion_paths, changed FROM assignments ORDER BY id").fetchall()
    assert [json.loads(r[0]) for r in rows] == [["html:1>body:2>article:2"]] * 2
    assert [r[1] for r in rows] == [0, 1]
    c = C.status(db, "camp")["annotators"]["a"]
    assert (c["done"], c["changed"], c["with_suggestion"]) == (2, 1, 2)


# ---------------------------------------------------------------------------------------------- agreement


def test_cohen_kappa_on_the_textbook_table() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o 0.7, p_e 0.5*0.6 + 0.5*0.4 = 0.5.
    a = np.array([1] * 20 + [1] * 5 + [0] * 10 + [0] * 15, dtype=bool)
    b = np.array([1] * 20 + [0] * 5 + [1] * 10 + [0] * 15, dtype=bool)
    assert C.cohen_kappa(a, b) == pytest.approx(0.4)
    assert C.cohen_kappa(a, a) == 1.0 and C.cohen_kappa(a, ~a) < -0.9
    assert C.cohen_kappa(np.zeros(5, bool), np.zeros(5, bool)) == 1.0


def test_pair_agreement_by_hand() -> None:
    snap = parse_snapshot(BUILT.raw)
    a = {"nodes": [IDS["article"]], "node_paths": L.node_paths(snap, [IDS["article"]]),
         "text": snap.text_of([IDS["article"]])}
    b = {"nodes": [IDS["p1"]], "node_paths": L.node_paths(snap, [IDS["p1"]]), "text": snap.text_of([IDS["p1"]])}
    from centrum.gold import tokenize

    got = C.pair_agreement(snap, a, snap, b, tokenize.get("fair"))
    # Covered elements: A {article, p1, p2}, B {p1}: F1 = 2*1 / (3 + 1).
    assert got["node_f1"] == pytest.approx(0.5)
    # Over the 11 elements: p_o = 9/11, p_A = 3/11, p_B = 1/11, p_e = (3 + 80)/121, kappa = (99 - 83)/(121 - 83).
    assert got["kappa"] == pytest.approx(16 / 38)
    assert 0 < got["token_f1"] < 1
    same = C.pair_agreement(snap, a, snap, a, tokenize.get("fair"))
    assert same == {"node_f1": 1.0, "token_f1": 1.0, "kappa": 1.0}


# ------------------------------------------------------------------------------ status, adjudication, export


def labelled_campaign(db: Path) -> None:
    """p1: both select the article (agree); p2: a the article, b only p1 (disagree); p3: a only; p4: nobody."""
    make(db, overlap=2, annotators=["a", "b"])
    for who, choice in (("a", {"p1": "article", "p2": "article", "p3": "article"}),
                        ("b", {"p1": "article", "p2": "p1"})):
        while True:
            got = nxt(db, who)
            if got["page_id"] not in choice:
                break
            sub(db, who, got["assignment"], [IDS[choice[got["page_id"]]]], suggestion=[IDS["article"]])


def test_status_lists_the_disagreement_and_adjudication_settles_it(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    labelled_campaign(db)
    st = C.status(db, "camp")
    by_page = {p["page_id"]: p for p in st["pages"]}
    assert by_page["p1"]["node_f1"] == 1.0 and by_page["p1"]["kappa"] == 1.0
    assert by_page["p2"]["node_f1"] == pytest.approx(0.5) and by_page["p2"]["kappa"] == pytest.approx(16 / 38)
    assert by_page["p3"]["pairs"] == [] and by_page["p3"]["node_f1"] is None
    assert st["adjudicate"] == ["p2"]
    assert st["node_f1"] == pytest.approx(0.75)  # mean over the two pages with two labels
    assert st["annotators"]["b"]["changed"] == 1 and st["annotators"]["a"]["changed"] == 0
    [lab_a, lab_b] = [lab for lab in L.list_labels(db) if lab["page_id"] == "p2"]
    with pytest.raises(L.LabelError):
        C.adjudicate(db, {"campaign": "camp", "reviewer": "r", "page_id": "p2", "pick": 999})
    assert C.adjudicate(db, {"campaign": "camp", "reviewer": "r", "page_id": "p2", "pick": lab_b["id"]})["how"] == \
        "pick"
    st = C.status(db, "camp")
    assert st["adjudicate"] == [] and st["pages"][1]["adjudicated"]["label_id"] == lab_b["id"]
    # review answers the page's labels with their nodes found again in the snapshot the panel sends.
    rv = C.review(db, {"campaign": "camp", "reviewer": "r", "page_id": "p2", "snapshot": BUILT.raw})
    assert [(e["annotator"], e["nodes"]) for e in rv["page"]["labels"]] == [("a", [IDS["article"]]),
                                                                              ("b", [IDS["p1"]])]
    # A merge: the reviewer's own selection (p1 and p2 as two nodes) becomes the gold.
    lab = label(nodes=[IDS["p1"], IDS["p2"]])
    del lab["annotator"]
    merged = C.adjudicate(db, {"campaign": "camp", "reviewer": "r", "page_id": "p2", "label": lab})
    assert merged["how"] == "merge" and L.load_label(db, merged["label_id"])["annotator"] == "r"


def test_export_holds_the_adjudicated_nodes_and_loads_as_a_data_set(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    labelled_campaign(db)
    lab_b = [lab for lab in L.list_labels(db) if lab["page_id"] == "p2" and lab["annotator"] == "b"][0]
    C.adjudicate(db, {"campaign": "camp", "reviewer": "r", "page_id": "p2", "pick": lab_b["id"]})
    rows = C.export_campaign(db, "camp", tmp_path / "out")
    meta = {r["id"]: r for r in rows}
    assert set(meta) == {"p1", "p2", "p3"}
    assert meta["p2"]["node_paths"] == ["html:1>body:2>article:2>p:1"] and meta["p2"]["gold_from"].startswith(
        "adjudicated (pick by r)")
    assert meta["p1"]["gold_from"] == "first of 2 labels, not adjudicated" and meta["p3"]["gold_from"] == \
        "single label"
    assert meta["p1"]["url"] == "https://example.test/a"  # the page's own URL, not the server's
    ds = load_dataset(tmp_path / "out")
    items = {p.id: p for p in ds.pages}
    assert items["p2"].gold.text == "One two three four five six seven."
    assert items["p2"].meta["node_paths"] == meta["p2"]["node_paths"]
    assert b"data-cx" not in items["p2"].html()
    with pytest.raises(FileExistsError):
        C.export_campaign(db, "camp", tmp_path / "out")


# ---------------------------------------------------------------------------------------------- CLI, host


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", "labels", *args], capture_output=True, text=True,
                          timeout=120)


def test_cli_create_status_export(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    ds = tmp_path / "set"
    (ds / "pages").mkdir(parents=True)
    for pid in ("p1", "p2", "p3", "p4"):
        (ds / "pages" / f"{pid}.html").write_text("<p>x</p>", encoding="utf-8")
    (ds / "meta.jsonl").write_text(json.dumps({"id": "p1", "url": "https://example.test/a"}) + "\n")
    made = cli("campaign", "create", "camp", "--pages", str(ds), "--annotators", "a,b", "--overlap", "2",
               "--db", str(db))
    assert made.returncode == 0, made.stderr
    assert "4 pages, 2 annotator(s) per page (a, b)" in made.stdout
    assert nxt(db, "a")["url"] == "https://example.test/a"
    urls = tmp_path / "urls.txt"
    urls.write_text("# list\nhttps://example.test/x\nftp://nope\n", encoding="utf-8")
    bad = cli("campaign", "create", "c2", "--pages", str(urls), "--db", str(db))
    assert bad.returncode == 2 and "urls.txt: line 3: not an http(s) URL: 'ftp://nope'" in bad.stderr
    st = cli("campaign", "status", "camp", "--db", str(db))
    assert st.returncode == 0, st.stderr
    assert "campaign camp: 4 pages, 2 per page, 0 complete" in st.stdout and "to adjudicate" in st.stdout
    js = json.loads(cli("campaign", "status", "camp", "--db", str(db), "--json").stdout)
    assert js["annotators"]["a"]["open"] == 1 and js["annotators"]["b"]["total"] == 4
    limited = cli("campaign", "create", "c3", "--pages", str(ds), "--limit", "2", "--db", str(db))
    assert limited.returncode == 0 and "c3: 2 pages" in limited.stdout, limited.stderr
    missing = cli("campaign", "status", "nope", "--db", str(db))
    assert missing.returncode == 1 and "no campaign named 'nope'" in missing.stderr


def test_native_host_serves_the_queue_over_real_pipes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    make(home / "labels.sqlite3", overlap=1, annotators=["a"])
    host = HostProcess(home)
    try:
        got = host.ask({"v": 1, "id": 1, "type": "campaign.next", "campaign": "camp", "annotator": "a"})
        assert got["status"] == "ok" and got["result"]["page_id"] == "p1", got
        lab = label()
        del lab["annotator"]
        ok = host.ask({"v": 1, "id": 2, "type": "campaign.submit", "campaign": "camp", "annotator": "a",
                       "assignment": got["result"]["assignment"], "label": lab, "suggestion": [IDS["p1"]]})
        assert ok["status"] == "ok" and ok["result"]["changed"] is True, ok
        bad = host.ask({"v": 1, "id": 3, "type": "campaign.flag", "campaign": "camp", "annotator": "a",
                        "assignment": got["result"]["assignment"] + 1, "reason": "x"})
        assert bad["status"] == "error" and bad["error"]["code"] == "E_REQUEST" and bad["error"]["field"] == \
            "assignment"
        assert host.ask({"v": 1, "id": 4, "type": "ping"})["status"] == "ok"  # the host goes on serving
    finally:
        host.close()


def test_protocol_documents_every_campaign_request() -> None:
    from helpers.protocol_doc import section, table_rows

    from centrum.native import campaigns as campaign_host
    from centrum.native import nativehost

    documented = {row[0].strip("`") for row in table_rows(section("Campaigns (`campaign.*`)"))}
    assert documented == set(campaign_host.TYPES) == set(C.HANDLERS)
    assert set(campaign_host.TYPES) <= set(nativehost.HANDLERS)


def test_annotators_racing_for_the_last_slots(tmp_path: Path) -> None:
    import threading

    db = tmp_path / "l.sqlite3"
    make(db, overlap=2, pages=PAGES[:1])
    L.connect(db).close()
    got: dict[str, Any] = {}
    start = threading.Barrier(8)

    def ask(who: str) -> None:
        start.wait()
        got[who] = C.next_page(db, "camp", who)["page_id"]  # each thread its own connection

    threads = [threading.Thread(target=ask, args=(f"n{k}",)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(v for v in got.values() if v) == ["p1", "p1"]  # exactly K annotators hold the page


def test_hostile_campaign_requests_get_a_request_error_and_nothing_else(tmp_path: Path) -> None:
    """Random values in every field of every campaign request: the answer is a result or E_REQUEST naming a field,
    never another exception, and the store stays consistent (no label, no adjudication from a refused request)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    db = tmp_path / "l.sqlite3"
    make(db, annotators=["a", "b"])
    conn = L.connect(db)
    aid = nxt(db, "a")["assignment"]
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.floats(allow_nan=True),
                        st.text(max_size=30), st.sampled_from(["camp", "a", "b", "p1", "../p1", "\ud800", "x" * 300]),
                        st.just(aid))
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8),
                                                                                                inner, max_size=3),
                          max_leaves=6)
    fields = st.sampled_from(["campaign", "annotator", "assignment", "label", "suggestion", "reason", "reviewer",
                              "page_id", "pick", "snapshot", "threshold", "other"])
    requests = st.dictionaries(fields, values, max_size=6)

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(rtype=st.sampled_from(sorted(C.HANDLERS)), request=requests)
    def check(rtype: str, request: dict[str, Any]) -> None:
        mine = (request.get("assignment"), request.get("annotator"), request.get("campaign")) == (aid, "a", "camp")
        if rtype in ("campaign.skip", "campaign.flag") and mine:
            request["assignment"] = -1  # would legitimately end a's assignment
        try:
            C.REQUESTS[rtype](conn, request)
        except L.LabelError as e:
            assert e.code == "E_REQUEST" and e.field, (rtype, request, e.message)

    check()
    assert L.list_labels(conn) == []
    assert conn.execute("SELECT COUNT(*) FROM adjudications").fetchone()[0] == 0


def holders_consistent(db: Path) -> bool:
    with sqlite3.connect(db) as conn:
        return not conn.execute("SELECT 1 FROM campaign_pages p WHERE holders != (SELECT COUNT(*) FROM assignments a "
                                "WHERE a.page = p.id AND a.state != 'skipped')").fetchall()


def test_holder_counts_follow_claims_skips_and_resubmits(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    make(db, overlap=2, annotators=["a", "b", "c"], pages=PAGES[:2])
    a = nxt(db, "a")
    req = {"campaign": "camp", "annotator": "a", "assignment": a["assignment"]}
    C.skip_or_flag(db, req, "skipped")
    C.skip_or_flag(db, req, "skipped")  # a repeated skip frees the slot once
    assert holders_consistent(db)
    sub(db, "a", a["assignment"], [IDS["article"]])  # the annotator comes back and labels it after all
    for who in ("b", "c"):
        nxt(db, who)
    assert holders_consistent(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT page_id, holders FROM campaign_pages ORDER BY position").fetchall() == [
            ("p1", 2), ("p2", 1)]


def test_migration_to_holder_counts_backfills_them(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    conn = L.connect(db, upto=4)
    conn.execute("INSERT INTO campaigns (name, created, overlap) VALUES ('camp', '', 2)")
    conn.executemany("INSERT INTO campaign_pages (campaign, position, page_id) VALUES (1, ?, ?)",
                     [(1, "p1"), (2, "p2")])
    conn.executemany("INSERT INTO assignments (campaign, page, annotator, state, created, updated) VALUES "
                     "(1, ?, ?, ?, '', '')", [(1, "a", "done"), (1, "b", "skipped"), (2, "a", "open")])
    conn.close()
    L.connect(db).close()
    assert holders_consistent(db)
    assert C.next_page(db, "camp", "b")["page_id"] == "p2"  # b skipped p1 and never gets it again


def test_deleted_labels_leave_the_campaign_figures(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite3"
    labelled_campaign(db)
    p2 = [lab for lab in L.list_labels(db) if lab["page_id"] == "p2"]
    C.adjudicate(db, {"campaign": "camp", "reviewer": "r", "page_id": "p2", "pick": p2[1]["id"]})
    L.delete_labels(db, ids=[p2[1]["id"]])  # the user deletes b's label (privacy): the adjudication goes with it
    st = C.status(db, "camp")
    page = next(p for p in st["pages"] if p["page_id"] == "p2")
    assert page["annotators"] == ["a"] and page["adjudicated"] is None and st["adjudicate"] == []
    rows = {r["id"]: r for r in C.export_campaign(db, "camp", tmp_path / "out")}
    assert rows["p2"]["label_id"] == p2[0]["id"] and rows["p2"]["gold_from"] == "single label"


def test_pair_figures_are_computed_once_per_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "l.sqlite3"
    labelled_campaign(db)
    C._PAIRS.clear()
    parsed: list[int] = []
    real = C.parse_snapshot
    monkeypatch.setattr(C, "parse_snapshot", lambda raw: parsed.append(1) or real(raw))
    first = C.status(db, "camp")
    assert len(parsed) == 4  # two pages with two labels each
    again = C.review(db, {"campaign": "camp", "reviewer": "r"})  # the panel asks for the list again
    assert len(parsed) == 4 and again["adjudicate"] == first["adjudicate"] == ["p2"]


@pytest.mark.parametrize("url, message", [
    ("javascript:alert(document.cookie)", "not an http(s) URL: 'javascript:alert(document.cookie)'"),
    ("file:///etc/passwd", "not an http(s) URL"),
    ("data:text/html,<script>x()</script>", "not an http(s) URL"),
    ("JavaScript://example.test/%0aalert(1)", "not an http(s) URL"),
    ("http://", "not an http(s) URL"),
    ("https://exa mple.test/", "not an http(s) URL"),
    ("https://example.test/\nSet-Cookie: x", "not an http(s) URL"),
    ("http://[::1/", "not an http(s) URL"),
    ("https://example.test/" + "a" * 20_000, "the URL has 20021 characters, over the limit of 8192"),
    (12, "the URL is a int, not a string"),
])
def test_campaign_urls_are_http_and_bounded_with_the_line_named(tmp_path: Path, url: Any, message: str) -> None:
    ds = tmp_path / "set"
    (ds / "pages").mkdir(parents=True)
    for pid in ("p1", "p2"):
        (ds / "pages" / f"{pid}.html").write_text("<p>x</p>", encoding="utf-8")
    rows = [{"id": "p1", "url": "https://example.test/fine?q=1"}, {"id": "p2", "url": url}]
    (ds / "meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(ValueError) as e:
        C.pages_from(ds)
    assert str(e.value).startswith(f"{ds / 'meta.jsonl'}: line 2: ") and message in str(e.value), str(e.value)
    # The same URL in a file of URLs, and given to create_campaign directly: refused too.
    urls = tmp_path / "urls.txt"
    urls.write_text(f"# campaign\n\nhttps://example.test/ok\n{url}\n", encoding="utf-8")
    if isinstance(url, str) and "\n" not in url:
        with pytest.raises(ValueError, match=f"^{urls}: line 4: "):
            C.pages_from(urls)
    with pytest.raises(L.LabelError) as refused:
        C.create_campaign(tmp_path / "l.sqlite3", "camp", [("p1", url)])
    assert refused.value.field == "pages" and "page 'p1'" in refused.value.message


def test_good_campaign_urls_and_a_bad_meta_line(tmp_path: Path) -> None:
    ds = tmp_path / "set"
    (ds / "pages").mkdir(parents=True)
    for pid in ("p1", "p2", "p3"):
        (ds / "pages" / f"{pid}.html").write_text("<p>x</p>", encoding="utf-8")
    rows = [{"id": "p1", "url": "HTTPS://Example.test/a?b=c#d"}, {"id": "p2", "url": None}, {"id": "p3"}]
    (ds / "meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert C.pages_from(ds) == ("set", [("p1", "HTTPS://Example.test/a?b=c#d"), ("p2", None), ("p3", None)])
    (ds / "meta.jsonl").write_text('{"id": "p1"}\n{"id": "p2", "url": \n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"meta.jsonl: line 2 is not JSON"):
        C.pages_from(ds)
    (ds / "meta.jsonl").write_text('["p1", "javascript:x"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"meta.jsonl: line 1 is not a JSON object"):
        C.pages_from(ds)
