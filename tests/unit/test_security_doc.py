"""SECURITY.md is a contract: every statement in it names the test that shows it, and every named test exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SECURITY = REPO / "SECURITY.md"
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


# What the model does not promise: said plainly, with nothing to prove.
NOT_PROMISED = "## Known limits of this model"


def statements() -> list[str]:
    """The bullet points of SECURITY.md (its promises), each with its continuation lines."""
    items: list[str] = []
    text = SECURITY.read_text(encoding="utf-8")
    assert NOT_PROMISED in text
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line
        if section == NOT_PROMISED:
            continue
        if line.startswith("- "):
            items.append(line)
        elif items and line.startswith("  "):
            items[-1] += "\n" + line
        elif not line.strip() and items and not items[-1].endswith("\n\n"):
            items[-1] += "\n"
    return items


def test_every_statement_names_a_test() -> None:
    found = statements()
    assert len(found) >= 10
    unproven = [s.splitlines()[0] for s in found if not TEST_REF.search(s)]
    assert unproven == [], f"statements without a test: {unproven}"


def test_every_named_test_exists() -> None:
    refs = TEST_REF.findall(SECURITY.read_text(encoding="utf-8"))
    missing = []
    for path, name in refs:
        source = (REPO / path).read_text(encoding="utf-8") if (REPO / path).is_file() else ""
        if not re.search(rf"^(async )?def {name}\(", source, re.M):
            missing.append(f"{path}::{name}")
    assert missing == [], f"SECURITY.md names tests that do not exist: {missing}"
