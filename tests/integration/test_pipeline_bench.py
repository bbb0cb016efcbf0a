"""The press -> highlight benchmark reads the host's own log and memory: checked against a real host process
(the browser part is exercised by `centrum bench` itself, never timed in tests)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers.host import HostProcess

from centrum.bench.pipeline import ExtensionBrowserError, last_extract_log, peak_rss_mb
from centrum.core.builders import E, T, build
from centrum.core.snapshot import pack_snapshot
from centrum.native.framing import encode_message


def test_last_extract_log_reads_the_hosts_own_line(tmp_path: Path) -> None:
    raw = pack_snapshot(build(E("html", (0, 0, 800, 600), [E("body", (0, 0, 800, 600), [
        E("main", (0, 0, 800, 400), [E("p", (0, 0, 800, 40), [T("A paragraph of the main content.")])])])])).raw)
    request = {"v": 1, "id": "b1", "type": "extract", "algorithm": "semantic", "debug": False, "snapshot": raw}
    host = HostProcess(tmp_path)
    try:
        before = time.time() * 1000
        host.send(request)
        answer = host.receive()
        after = time.time() * 1000
        assert answer["status"] == "ok", answer
        deadline = time.monotonic() + 10
        while b"'extract' ok in" not in (tmp_path / "host.log").read_bytes():
            assert time.monotonic() < deadline, "no extract line in host.log"
            time.sleep(0.05)
        end, host_ms, request_bytes = last_extract_log(tmp_path)
        # The log's clock is the wall clock at millisecond precision, written once the answer is out.
        assert before - 1 <= end <= after + 1000
        assert 0 < host_ms <= after - before + 1
        assert request_bytes == len(encode_message(request)) - 4  # the body, without the length header
        assert peak_rss_mb(host.proc.pid) > 10  # a Python with numpy imported
    finally:
        host.close()


def test_no_extract_in_the_log_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "host.log").write_text("2026-01-01 00:00:00,000 1 INFO host 0.1.0 started (pid 1)\n" +
                                       json.dumps({"not": "a log line"}) + "\n", encoding="utf-8")
    with pytest.raises(ExtensionBrowserError):
        last_extract_log(tmp_path)


def test_peak_rss_of_a_missing_process_is_nan() -> None:
    assert peak_rss_mb(2**22 + 12345) != peak_rss_mb(2**22 + 12345)  # NaN


def test_real_pages_take_every_set_in_turn_and_the_row_reports_the_ratio(tmp_path: Path) -> None:
    from centrum.bench.benchmark import format_real, real_pages

    for name, count in (("a", 3), ("b", 1), ("c", 2)):
        (tmp_path / name / "pages").mkdir(parents=True)
        for k in range(count):
            (tmp_path / name / "pages" / f"{k}.html").write_text("<p>x</p>", encoding="utf-8")
    (tmp_path / "README.md").write_text("not a set", encoding="utf-8")
    picked = [p.relative_to(tmp_path).as_posix() for p in real_pages(tmp_path, 5)]
    assert picked == ["a/pages/0.html", "b/pages/0.html", "c/pages/0.html", "a/pages/1.html", "c/pages/1.html"]
    report = {"real_pages": {"pages": [{"page": "a", "press_ms": 100.0, "readability_ms": 50.0}, {"page": "b",
                                                                                                "error": "x"}],
                             "measured": 1, "ratio_median": 2.0, "ratio_p90": 2.0, "press_ms_median": 100.0,
                             "readability_ms_median": 50.0}}
    row = format_real(report)[-1]
    assert row.startswith("| 2 of the data sets | 1 | 1 | 100.0 | 50.0 | 2.00× | 2.00× |")
    assert format_real({}) == []
