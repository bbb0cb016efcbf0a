"""The extension manifest: least permissions, and every icon it names is a PNG of the size it is declared at."""

from __future__ import annotations

import json
import struct
from pathlib import Path

EXT = Path(__file__).resolve().parents[2] / "extension"


def manifest() -> dict:
    return json.loads((EXT / "manifest.json").read_text(encoding="utf-8"))


def test_permissions_are_the_least_needed_and_no_host_access() -> None:
    m = manifest()
    assert sorted(m["permissions"]) == ["activeTab", "nativeMessaging", "scripting", "storage"]
    assert "host_permissions" not in m and "content_scripts" not in m  # nothing injected before the button


def test_every_icon_is_a_png_of_its_declared_size() -> None:
    m = manifest()
    icons = {**m["icons"], **m["action"]["default_icon"]}
    assert {"16", "32", "48", "128"} <= set(m["icons"])
    for size, rel in icons.items():
        data = (EXT / rel).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", rel
        width, height = struct.unpack(">II", data[16:24])  # IHDR follows the signature and chunk header
        assert (width, height) == (int(size), int(size)), rel
