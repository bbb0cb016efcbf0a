"""Real host processes with the ``fast`` extra: the first one's warm-up compiles the default models in a process of
its own, once however many hosts start meanwhile, and the host then answers with them, the same nodes as before."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers.host import HostProcess, article_page

from centrum import algorithms
from centrum.algorithms import compile_defaults


def test_hosts_compile_the_defaults_once_in_the_background_then_answer_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CENTRUM_COMPILE", raising=False)
    built = article_page()
    request = {"v": 1, "id": "x", "type": "extract", "algorithm": algorithms.DEFAULT_ALGORITHM, "text": False,
               "snapshot": built.raw}
    homes = [tmp_path / "a", tmp_path / "b"]
    hosts = []
    for home in homes:
        home.mkdir()
        hosts.append(HostProcess(home))
    try:
        for h in hosts:
            assert h.ask({"v": 1, "id": "p", "type": "ping"})["status"] == "ok"
        before = hosts[0].ask(request)
        assert before["status"] == "ok", before
        deadline = time.monotonic() + 300
        while compile_defaults.missing() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not compile_defaults.missing(), (tmp_path / "cache" / "compiled" / "compile.log").read_text()
        log = (tmp_path / "cache" / "compiled" / "compile.log").read_text()
        for name in compile_defaults.default_texts():
            assert log.count(f"{name}: compiled") == 1, log  # one compilation, not one per host
        # One host compiled; the other waited for it (whichever warmed up first took the lock). Both look again.
        logs = [""]
        while ("".join(logs).count("compilation ended") < 2) and time.monotonic() < deadline:
            time.sleep(0.2)
            logs = [(home / "host.log").read_text() for home in homes]
        joined = "".join(logs)  # compile.log above shows that each model was compiled once
        assert "background compilation ended (exit 0)" in joined and joined.count("compilation ended") == 2, joined
        for h, home in zip(hosts, homes, strict=True):
            after = h.ask(request)
            assert after["result"]["nodes"] == before["result"]["nodes"]
            assert "loaded compiled model" in (home / "host.log").read_text()  # the block filter, compiled
            maps = Path(f"/proc/{h.proc.pid}/maps").read_text()
            assert ".so" in maps and "llvm" not in maps.lower()  # a shared library of its own: no LLVM to predict
        third = HostProcess(tmp_path)  # a later host finds the files: nothing to compile
        assert third.ask({"v": 1, "id": "p", "type": "ping"})["status"] == "ok"
        assert third.ask(request)["result"]["nodes"] == before["result"]["nodes"]
        hosts.append(third)
    finally:
        for h in hosts:
            h.close()
    assert "compiling" not in (tmp_path / "host.log").read_text()
