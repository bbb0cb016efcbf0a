"""Every page is a stranger (SECURITY.md): a saved page reaches no local file outside its own folder and sends nothing
out, through every command that renders it (`centrum extract`, `batch`, `eval`), while its own `_files/` still load.

The attacker's page frames a secret file outside its folder (by absolute path, by `../` and through a symlink in its
folder), reads it with fetch and a synchronous XHR, and opens WebRTC connections (its own and a fresh iframe's) that
would send STUN datagrams to a UDP listener on loopback. Before the renderer confined saved pages, each of these put the
secret in the output or a datagram on the wire."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from centrum.core.render import Renderer
from centrum.core.snapshot import parse_snapshot

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "RAY_USAGE_STATS_ENABLED": "0"}
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
ARTICLE = ("The harbour council met on Tuesday evening to decide what becomes of the old ferry terminal, which has "
           "stood empty since the last crossing ran. Residents asked for a library, a market hall and a school. ")


@dataclass
class UdpListener:
    """A UDP socket on 127.0.0.1 that records every datagram it receives while the test runs."""

    port: int = 0
    datagrams: list[bytes] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> Iterator[UdpListener]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0.2)
        self.port = sock.getsockname()[1]

        def listen() -> None:
            while not self._stop.is_set():
                try:
                    self.datagrams.append(sock.recvfrom(65536)[0])
                except TimeoutError:
                    continue

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(timeout=5)
            sock.close()


@pytest.fixture(scope="module")
def udp() -> Iterator[UdpListener]:
    yield from UdpListener().run()


def hostile_page(secret: Path, udp_port: int) -> str:
    rtc = (f"{{iceServers: [{{urls: 'stun:127.0.0.1:{udp_port}'}}, "
           f"{{urls: 'turn:127.0.0.1:{udp_port}?transport=udp', username: 'u', credential: 'c'}}]}}")
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Harbour council</title>
<link rel="stylesheet" href="page_files/style.css"></head><body>
<article><h1>Harbour council decides on the ferry terminal</h1><p>{ARTICLE * 3}</p>
<div id="styled">A box its own stylesheet sizes.</div><img id="own-image" src="page_files/pixel.png" alt="">
<iframe src="{secret.as_uri()}"></iframe><iframe src="../{secret.name}"></iframe>
<iframe src="page_files/link.txt"></iframe>
<p id="out">Stolen:</p></article>
<script>
const out = document.getElementById("out");
const say = t => {{ out.textContent += " " + t; }};
for (const url of ["{secret.as_uri()}", "../{secret.name}", "page_files/link.txt"]) {{
  fetch(url).then(r => r.text()).then(say, () => say("fetch refused"));
  try {{ const x = new XMLHttpRequest(); x.open("GET", url, false); x.send(); say(x.responseText); }}
  catch (e) {{ say("xhr refused"); }}
}}
const rtc = PC => {{
  const pc = new PC({rtc});
  pc.createDataChannel("d"); pc.createOffer().then(o => pc.setLocalDescription(o));
}};
try {{ rtc(window.RTCPeerConnection); say("rtc opened"); }} catch (e) {{ say("rtc refused"); }}
try {{ const f = document.createElement("iframe"); document.body.appendChild(f); rtc(f.contentWindow.RTCPeerConnection);
      say("frame rtc opened"); }} catch (e) {{ say("frame rtc refused"); }}
</script></body></html>"""


def write_site(root: Path, udp_port: int, name: str = "page.html") -> tuple[Path, str]:
    """A saved page in ``root/site/`` with its ``page_files/``, a secret file outside the folder and a symlink to it
    inside; returns (page path, secret text)."""
    root.mkdir(parents=True, exist_ok=True)
    secret_text = f"SECRET-{os.getpid()}-{time.monotonic_ns()}"
    secret = root / "secret.txt"
    secret.write_text(secret_text)
    site = root / "site"
    (site / "page_files").mkdir(parents=True, exist_ok=True)
    (site / "page_files" / "style.css").write_text("#styled { width: 321px; height: 40px; }")
    (site / "page_files" / "pixel.png").write_bytes(PIXEL_PNG)
    link = site / "page_files" / "link.txt"
    if not link.is_symlink():
        link.symlink_to(secret)
    page = site / name
    page.write_text(hostile_page(secret, udp_port), encoding="utf-8")
    return page, secret_text


def centrum(*args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "centrum.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV, cwd=REPO)


def no_datagram_after(udp: UdpListener, seconds: float = 1.0) -> None:
    time.sleep(seconds)  # ICE gathering runs after the page's script: give stray datagrams time to arrive
    assert udp.datagrams == [], f"{len(udp.datagrams)} datagram(s) left the page: {udp.datagrams[0]!r}"


def test_a_saved_page_loads_its_own_files_and_nothing_else(renderer: Renderer, tmp_path: Path,
                                                             udp: UdpListener) -> None:
    page, secret = write_site(tmp_path, udp.port)
    out = renderer.render(page)
    snap = parse_snapshot(out.raw)
    texts = "\n".join(snap.texts)
    assert secret not in texts
    (stolen,) = [t for t in snap.texts if t.startswith("Stolen:")]
    assert "rtc refused" in stolen and "frame rtc refused" in stolen, stolen
    # Its own stylesheet applied and its own image loaded; every file outside its folder was refused.
    (styled,) = [i for i, v in snap.attrs["id"].items() if v == "styled"]
    assert snap.box[styled][2] == 321
    assert out.stylesheets == {"loaded": 1, "failed": 0} and out.raw["page"]["stylesheets"] == out.stylesheets
    assert not [u for u in out.failed if "page_files/pixel.png" in u or "page_files/style.css" in u]
    assert any(u.endswith("/secret.txt") for u in out.failed) and any("link.txt" in u for u in out.failed)
    assert out.blocked >= 3
    no_datagram_after(udp)


def test_extract_prints_no_local_file_and_sends_nothing(tmp_path: Path, udp: UdpListener) -> None:
    page, secret = write_site(tmp_path, udp.port)
    for fmt in ("text", "json", "markdown", "html"):
        p = centrum("extract", str(page), "-f", fmt, "--algorithm", "semantic", timeout=120)
        assert p.returncode == 0, p.stderr
        assert secret not in p.stdout and secret not in p.stderr
        assert "Harbour council decides" in p.stdout or fmt == "text"
    no_datagram_after(udp)


def test_batch_over_saved_pages_and_a_warc_keeps_them_in(tmp_path: Path, udp: UdpListener) -> None:
    pytest.importorskip("ray", reason="the batch extra (pip install 'centrum[batch]') is installed by tox")
    from centrum.batch.crawl import response_record

    page, secret = write_site(tmp_path, udp.port)
    warc = tmp_path / "crawl.warc"
    warc.write_bytes(response_record("http://example.test/news/1", "text/html; charset=utf-8",
                                     hostile_page(tmp_path / "secret.txt", udp.port).encode()))
    out = tmp_path / "out"
    p = centrum("batch", "--no-progress", str(page.parent), str(warc), "--out", str(out), "--format", "jsonl",
                "--actors", "1", "--algorithm", "semantic")
    assert p.returncode == 0, p.stderr[-3000:]
    shards = "".join(f.read_text() for f in sorted(out.rglob("*.jsonl")))
    rows = [json.loads(line) for line in shards.splitlines() if line.strip()]
    assert len([r for r in rows if "Harbour council decides" in (r.get("text") or "")]) == 2, rows
    assert secret not in shards and secret not in p.stdout + p.stderr
    no_datagram_after(udp)


def test_eval_of_a_data_set_of_saved_pages_keeps_them_in(tmp_path: Path, udp: UdpListener) -> None:
    data = tmp_path / "set"
    page, secret = write_site(data, udp.port, name="p1.html")
    pages = data / "pages"
    page.parent.rename(pages)  # the data set layout: pages/p1.html with pages/page_files/ beside it
    (data / "gold").mkdir()
    (data / "gold" / "p1.txt").write_text("Harbour council decides on the ferry terminal\n" + ARTICLE * 3)
    (data / "meta.jsonl").write_text(json.dumps({"id": "p1", "lang": "en"}) + "\n")
    out = tmp_path / "eval-out"
    p = centrum("eval", str(data), "--algorithms", "semantic", "--peers", "none", "--out", str(out),
                "--save-texts", "--no-cache")
    assert p.returncode == 0, p.stderr[-3000:]
    written = [f for f in out.rglob("*") if f.is_file()]
    assert any("Harbour council" in f.read_text(errors="replace") for f in written)
    assert not [f for f in written if secret in f.read_text(errors="replace")]
    no_datagram_after(udp)


def test_doctor_says_whether_pages_render_in_chromiums_sandbox() -> None:
    p = centrum("doctor", "--browser", "chromium", timeout=120)
    (line,) = [line for line in p.stdout.splitlines() if line.startswith("renderer:")]
    if os.geteuid() == 0:
        assert line.startswith("renderer: Chromium sandbox OFF") and "running as root" in line, line
    else:  # on, or off with the launch error that says why
        assert line == "renderer: Chromium sandbox on" or "could not start sandboxed" in line, line


@pytest.mark.parametrize("render", [True, False])
def test_extract_refuses_a_page_over_its_limit_with_the_limit_named(tmp_path: Path, render: bool) -> None:
    from centrum.core.limits import PAGE_FILE_BYTES

    page = tmp_path / "huge.html"
    with page.open("wb") as f:
        f.write(b"<!DOCTYPE html><html><body><p>")
        f.truncate(PAGE_FILE_BYTES + 1)
    p = centrum("extract", str(page), "-a", "semantic" if render else "source", *([] if render else ["--no-render"]),
                timeout=120)
    assert p.returncode == 2, p.stderr
    assert "over the page_file_bytes limit" in p.stderr and "Traceback" not in p.stderr
