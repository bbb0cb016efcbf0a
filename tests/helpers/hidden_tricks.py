"""The fixture pages that hide text every way a security review found (each hidden string starts with HIDDEN) next
to text a reader does see (each starting with SHOWN): tests/fixtures/pages/hidden-tricks.html for the host's
outputs and both browsers' reader views, hostile-hidden.html for the reader against a hostile page. One check for
all of them."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURE_PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"
HIDDEN_TRICKS = FIXTURE_PAGES / "hidden-tricks.html"
HOSTILE_HIDDEN = FIXTURE_PAGES / "hostile-hidden.html"
# (SHOWN strings, HIDDEN elements) of the pages whose tests count them: the page is what its tests say.
COUNTS = {HIDDEN_TRICKS.name: (14, 16)}


def shown_strings(page: Path = HIDDEN_TRICKS) -> list[str]:
    source = page.read_text(encoding="utf-8")
    shown = [" ".join(m.split()) for m in re.findall(r"SHOWN[^<]*", source)]
    if page.name in COUNTS:
        assert (len(shown), len(re.findall(r">HIDDEN", source))) == COUNTS[page.name]
    return shown


def check_hidden(text: str, page: Path = HIDDEN_TRICKS) -> None:
    """Every SHOWN string of ``page`` is in ``text`` (whitespace collapsed), no HIDDEN one."""
    flat = " ".join(text.split())
    assert [s for s in shown_strings(page) if s not in flat] == [], flat
    assert "HIDDEN" not in flat, [m for m in re.findall(r"HIDDEN[\w ]*", flat)]
