"""End to end: pages rendered in real Chromium, labelled through the real host process (label.save), exported with
``centrum labels export`` and evaluated with ``centrum eval`` on the exported folder."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from centrum.annotation import labels as L
from centrum.core.render import Renderer
from centrum.core.snapshot import parse_snapshot
from centrum.native.framing import encode_message, read_response

REPO = Path(__file__).resolve().parents[2]
TINYSET = REPO / "tests" / "fixtures" / "tinyset"
PAGES = {"styled-article": "article", "ja-article": "main"}  # page -> the element the annotator selects


def host_ask(home: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send requests to a fresh ``centrum host`` process over its pipes; answers in order."""
    with open(home.parent / "host-stderr.txt", "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "centrum.cli", "host"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, env={**os.environ, "CENTRUM_HOME": str(home)})
        assert proc.stdin and proc.stdout
        answers = []
        try:
            for req in requests:
                proc.stdin.write(encode_message(req))
                proc.stdin.flush()
                answers.append(read_response(proc.stdout)[0])
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
    return answers


def centrum(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=REPO)


def test_labels_export_then_eval(tmp_path: Path, renderer: Renderer) -> None:
    home = tmp_path / "home"
    requests, gold = [], {}
    for k, (name, tag) in enumerate(PAGES.items()):
        raw = renderer.render(TINYSET / "pages" / f"{name}.html", source=True).raw
        snap = parse_snapshot(raw)
        node = int(np.nonzero(snap.tags == tag)[0][0])
        gold[name] = snap.text_of([node])
        for annotator in ("alice", "bob"):
            # bob also takes the page title on the English page: the two annotators disagree a little there.
            nodes = [node] + ([int(np.nonzero(snap.tags == "nav")[0][0])] if annotator == "bob" and k == 0 else [])
            requests.append({"v": 1, "id": f"{name}-{annotator}", "type": "label.save",
                             "label": {"url": f"https://example.test/{name}", "annotator": annotator,
                                       "nodes": nodes, "snapshot": raw, "dataset": "tinyset", "page_id": name}})
    answers = host_ask(home, requests)
    assert [a["status"] for a in answers] == ["ok"] * 4, answers
    assert [a["result"]["label_id"] for a in answers] == [1, 2, 3, 4]
    db = home / "labels.sqlite3"

    agree = json.loads(centrum("labels", "agreement", "--db", str(db), "--json").stdout)
    by_page = {p["page_id"]: p for p in agree["pages"]}
    assert by_page["ja-article"]["token_f1"] == 1.0 and by_page["ja-article"]["node_f1"] == 1.0
    assert 0.5 < by_page["styled-article"]["token_f1"] < 1.0 and by_page["styled-article"]["node_f1"] < 1.0

    out = tmp_path / "labelled"
    exported = centrum("labels", "export", str(out), "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    meta = [json.loads(x) for x in (out / "meta.jsonl").read_text(encoding="utf-8").splitlines()]
    ids = {m["page_id"]: m["id"] for m in meta}
    assert set(ids) == set(PAGES)
    assert {m["page_id"]: m["language"] for m in meta} == {"styled-article": "en", "ja-article": "ja"}
    for name in PAGES:
        assert (out / "gold" / f"{ids[name]}.txt").read_text(encoding="utf-8") == gold[name]

    # Node-level labels survive a re-render of the exported page: the stored path finds the same element.
    for m in meta:
        again = parse_snapshot(renderer.render(out / "pages" / f"{m['id']}.html", source=False).raw)
        [path] = m["node_paths"]
        node = L.resolve_path(again, path)
        assert node is not None and again.tags[node] == PAGES[m["page_id"]]
        assert again.text_of([node]) == gold[m["page_id"]]

    report = tmp_path / "report"
    ev = centrum("eval", str(out), "--peers", "none", "--algorithms", "semantic", "--out", str(report),
                 "--cache", str(tmp_path / "cache"))
    assert ev.returncode == 0, ev.stderr[-3000:]
    assert "## All pages" in (report / "report.md").read_text(encoding="utf-8")
    with (report / "results.csv").open(encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    assert set(rows) == set(ids.values())
    # The semantic baseline answers <article>/<main>, exactly what alice selected.
    for name in PAGES:
        assert float(rows[ids[name]]["f1"]) > 0.95, rows[ids[name]]
