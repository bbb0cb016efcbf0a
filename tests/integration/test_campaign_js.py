"""extension/src/campaign.js, run by Node on its own: the campaign URLs the extension will open in the annotator's
tab are http(s) only (defence in depth behind the host's check), and served pages are known by the host names of
``centrum serve`` only (issue #40)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

CAMPAIGN_JS = Path(__file__).resolve().parents[2] / "extension" / "src" / "campaign.js"

# campaign.js runs in the background after messaging.js, whose CentrumError it throws; the class is the same shape.
RUN = """
const vm = require("vm");
const fs = require("fs");
const context = vm.createContext({ URL, console });
vm.runInContext("class CentrumError extends Error { constructor(code, message) { super(message); this.code = code; } }",
                context);
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), context);
const cases = JSON.parse(process.argv[2]);
const out = cases.map(([fn, args]) => {
  try { return ["ok", vm.runInContext(fn, context)(...args)]; } catch (e) { return [e.code || e.name, e.message]; }
});
process.stdout.write(JSON.stringify(out));
"""


def run(cases: list[tuple[str, list[object]]]) -> list[list[object]]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found (apt-get install nodejs)")
    done = subprocess.run([node, "-e", RUN, str(CAMPAIGN_JS), json.dumps(cases)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    out: list[list[object]] = json.loads(done.stdout)
    return out


def test_only_http_urls_are_opened() -> None:
    bad = ["javascript:alert(document.cookie)", " JavaScript:alert(1)", "file:///etc/passwd",
           "data:text/html,<script>x()</script>", "chrome://settings", "about:blank", "not a url",
           "https://example.test/" + "a" * 9000, None, 12]
    good = ["https://example.test/a?b=c", "http://example.test/"]
    got = run([("httpUrl", [u]) for u in bad + good])
    for url, (code, message) in zip(bad, got[:len(bad)], strict=True):
        assert code == "E_REQUEST" and str(message).startswith("not an http(s) URL"), (url, code, message)
    assert got[len(bad):] == [["ok", u] for u in good]
    # The next page of a URL-list campaign goes through the same check; a served page is built from its origin.
    c = {"origin": "http://0123456789abcdef.centrum.localhost:8080"}
    got = run([("campaignPageUrl", [c, {"dataset": None, "url": "javascript:alert(1)", "page_id": "u00001"}]),
               ("campaignPageUrl", [c, {"dataset": None, "url": "https://example.test/x", "page_id": "u00001"}]),
               ("campaignPageUrl", [c, {"dataset": "set", "url": "javascript:x", "page_id": "p 1"}])])
    assert got[0][0] == "E_REQUEST" and got[1] == ["ok", "https://example.test/x"]
    assert got[2] == ["ok", "http://0123456789abcdef.centrum.localhost:8080/p/p%201"]


def test_served_pages_are_known_by_their_host_name_only() -> None:
    urls = {"http://0123456789abcdef.centrum.localhost:8080/p/a1": "http://0123456789abcdef.centrum.localhost:8080",
            "http://127.0.0.1:8080/p/a1": None, "http://localhost:8080/p/a1": None,
            "https://0123456789abcdef.centrum.localhost:8080/p/a1": None,
            "http://0123456789abcdef.centrum.localhost.evil.test:8080/": None,
            "http://evil.0123456789abcdef.centrum.localhost:8080/": None,
            "http://0123456789ABCDEX.centrum.localhost:8080/": None, "javascript:x": None}
    got = run([("servedOrigin", [u]) for u in urls])
    assert [g[1] for g in got] == list(urls.values())
