"""A real ``centrum-host`` subprocess driven over its stdin/stdout pipes, as a browser drives it (integration tests)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from centrum.core.builders import E, T, build
from centrum.native.framing import MAX_MESSAGE_BYTES, encode_message, read_frame


def host_command() -> list[str]:
    # The console script next to this interpreter (not a pyenv shim, which adds ~100 ms of bash per start).
    script = Path(sys.executable).parent / "centrum-host"
    if script.exists():
        return [str(script)]
    found = shutil.which("centrum-host")
    assert found, "centrum-host is not installed (pip install -e host)"
    return [found]


class HostProcess:
    def __init__(self, home: Path) -> None:
        env = {**os.environ, "CENTRUM_HOME": str(home)}
        # stderr to a file, not a pipe: an unread pipe would fill up and block the host (as a browser never does).
        self.stderr_path = home / "stderr.txt"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(host_command() + ["chrome-extension://test/"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err, env=env)
        self.sizes: list[int] = []

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: Any) -> None:
        self.send_raw(encode_message(obj))

    def receive(self) -> dict[str, Any]:
        """Read chunks until one whole response is reassembled (as the extension does)."""
        assert self.proc.stdout
        parts: list[str] = []
        expected_id: Any = "unset"
        while True:
            frame = read_frame(self.proc.stdout, MAX_MESSAGE_BYTES)
            assert frame is not None, "host closed stdout: " + self.stderr_tail()
            self.sizes.append(len(frame) + 4)
            chunk = json.loads(frame)
            assert set(chunk) == {"v", "id", "chunk", "chunks", "data"}
            if expected_id == "unset":
                expected_id = chunk["id"]
            assert chunk["id"] == expected_id and chunk["chunk"] == len(parts)
            parts.append(chunk["data"])
            if len(parts) == chunk["chunks"]:
                body = json.loads("".join(parts))
                assert body["id"] == expected_id
                return body

    def ask(self, obj: Any) -> dict[str, Any]:
        self.send(obj)
        return self.receive()

    def stderr_tail(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-2000:]

    def close(self) -> int:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostProcess]:
    h = HostProcess(tmp_path)
    yield h
    if h.proc.poll() is None:
        h.close()


def article_page() -> Any:
    return build(E("html", (0, 0, 1200, 2000), [
        E("body", (0, 0, 1200, 2000), [
            E("nav", (0, 0, 1200, 80), [E("a", (10, 10, 100, 20), [T("Home")])]),
            E("div", (0, 100, 1200, 1800), [
                E("article", (100, 100, 800, 1500), [E("p", (100, 120, 800, 200), [T("The story text.")])],
                  name="article"),
            ]),
        ]),
    ]))
