"""Reading host/PROTOCOL.md's sections and tables (the protocol-doc and campaign tests compare them with the code)."""

from __future__ import annotations

from pathlib import Path

PROTOCOL = Path(__file__).resolve().parents[2] / "host" / "PROTOCOL.md"


def section(title: str) -> str:
    text = PROTOCOL.read_text(encoding="utf-8")
    start = text.index(f"\n### {title}\n")
    end = text.find("\n#", start + 1)
    return text[start:end if end >= 0 else len(text)]


def table_rows(text: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|")]
    return rows[2:]  # header and rule
