"""The documentation holds together: code comments point at docs pages by path and those pages exist (never at a
README section by title, which nothing checks), every page is in the site's nav, the contracts are included rather
than copied, the README stays a short tour with the two set-up commands, and the evaluation page keeps the markers
that ``centrum eval --update-readme docs/evaluation.md`` writes between. ``mkdocs build --strict`` (tox) checks the
links inside the site."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from centrum.evaluation.report import README_END, README_START, update_readme

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
DOC_PATH = re.compile(r"\bdocs/[\w./-]*\w\.md\b")
# A pointer at a README section: README "Title", README section/rule/table, "see (the) README", "(README", or
# README ending a line (the title on the next).
README_POINTER = re.compile(
    r"README(?:'s)?\s+(?:[\"“']|section|rule|table|block)|(?:see|in|documented in) (?:the )?README\b(?!\.md|_)"
    r"|\(README\b(?!\.md|_)|\bREADME\s*$"  # the last: a title on the next comment line
)


def _code_files() -> list[Path]:
    files = sorted((REPO / "host" / "centrum").rglob("*.py")) + sorted((REPO / "extension").rglob("*.js"))
    return [f for f in files if "node_modules" not in f.parts]


def _nav_pages() -> list[str]:
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r":\s*(\S+\.md)\s*$", nav, flags=re.M)


def _sh_block_after(text: str, heading: str) -> str:
    start = text.index(heading)
    m = re.search(r"```sh\n(.*?)```", text[start:], flags=re.S)
    assert m, heading
    return m.group(1)


def test_code_points_at_docs_pages_that_exist() -> None:
    pointers = {}
    for f in _code_files():
        for path in DOC_PATH.findall(f.read_text(encoding="utf-8")):
            pointers.setdefault(path, []).append(f.relative_to(REPO).as_posix())
    assert pointers, "no code comment points at a docs page"
    missing = {p: where for p, where in pointers.items() if not (REPO / p).is_file()}
    assert not missing, f"code points at docs pages that do not exist: {missing}"
    nav = set(_nav_pages())
    outside = {p for p in pointers if p.removeprefix("docs/") not in nav}
    assert not outside, f"docs pages pointed at from code but missing from mkdocs.yml's nav: {outside}"


def test_no_comment_points_at_a_readme_section() -> None:
    found = [f"{f.relative_to(REPO)}:{n}: {line.strip()}"
             for f in _code_files()
             for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
             if README_POINTER.search(line)]
    assert not found, "point at a docs page by path (docs/....md) instead:\n" + "\n".join(found)


@pytest.mark.parametrize("line, pointer", [
    ('per option, and timings) are in README "HTML zoning".', True),
    ("measured on dev pages, see README.", True),
    ("else ``unstyled`` (README rule).", True),
    ("Approximation (documented in the README): A_l(e)", True),
    ("# in place: the caller's README block names it too", True),
    ("# this (the block filter's rule, README", True),
    ('README_START = "<!-- centrum-eval:start -->"', False),
    ('out.file("README.md", text)', False),
    ("also matches its README: files are skipped.", False),
    ('(see docs/algorithms/dana.md)', False),
])
def test_readme_pointer_pattern(line: str, pointer: bool) -> None:
    assert bool(README_POINTER.search(line)) is pointer


def test_every_docs_page_is_in_the_nav_and_exists() -> None:
    nav = _nav_pages()
    assert len(nav) == len(set(nav)), "a page is listed twice"
    missing = [p for p in nav if not (DOCS / p).is_file()]
    assert not missing, f"nav lists pages that do not exist: {missing}"
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == set(nav), f"pages outside the nav: {pages - set(nav)}"


@pytest.mark.parametrize("page, contract", [("protocol.md", "host/PROTOCOL.md"), ("security.md", "SECURITY.md")])
def test_contracts_are_included_not_copied(page: str, contract: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    assert f'--8<-- "{contract}"' in text
    assert (REPO / contract).is_file()
    assert len(text.splitlines()) < 5, f"docs/{page} should only include {contract}, not copy it"
    assert "check_paths: true" in (REPO / "mkdocs.yml").read_text(encoding="utf-8")


def test_readme_is_a_short_tour_with_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    commands = _sh_block_after(readme, "## Two commands")
    # One block, the same on the install page; command 1 runs the main job on the bundled sample page.
    assert commands == _sh_block_after((DOCS / "install.md").read_text(encoding="utf-8"), "## Two commands")
    lines = [line for line in commands.splitlines() if line and not line.startswith("#")]
    assert len(lines) == 2
    assert lines[0].endswith("centrum extract tests/fixtures/sample/article.html")
    assert lines[1] == "bash .ci/run"
    for path in ("tests/fixtures/sample/article.html", ".ci/run", ".ci/apt-install", "host/constraints.txt"):
        assert (REPO / path).is_file(), path


def test_readme_links_resolve() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    targets = {t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t}
    assert "docs/evaluation.md" in targets and "CHANGELOG.md" in targets and "CONTRIBUTING.md" in targets
    missing = sorted(t for t in targets if not (REPO / t).exists())
    assert not missing, missing


def test_evaluation_page_keeps_the_generated_table_markers(tmp_path: Path) -> None:
    page = DOCS / "evaluation.md"
    text = page.read_text(encoding="utf-8")
    assert text.count(README_START) == 1 and text.count(README_END) == 1
    assert text.index(README_START) < text.index(README_END)
    copy = tmp_path / "evaluation.md"
    shutil.copyfile(page, copy)
    assert update_readme(copy, "| extractor | mean |\n|---|---|\n| ensemble | 0.5 |\n")
    after = copy.read_text(encoding="utf-8")
    assert after[:after.index(README_START)] == text[:text.index(README_START)]
    assert after[after.index(README_END):] == text[text.index(README_END):]
    assert "| ensemble | 0.5 |" in after


def test_the_docs_extra_is_pinned() -> None:
    host = REPO / "host"
    extras = tomllib.loads((host / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    pins = {line.split("==")[0].lower(): line.split("==")[1]
            for line in (host / "constraints.txt").read_text(encoding="utf-8").splitlines()
            if "==" in line and not line.startswith("#")}
    names = {re.split(r"[<>=\[ ]", req)[0].lower() for req in extras["docs"]}
    assert {"mkdocs", "mkdocs-material", "pymdown-extensions"} <= names
    assert names <= set(pins), f"unpinned: {names - set(pins)}"
    # The corpus extra builds MkDocs sites too: one pin serves both.
    corpus = {re.split(r"[<>=\[ ]", req)[0].lower() for req in extras["corpus"]}
    assert {"mkdocs", "mkdocs-material"} <= corpus
