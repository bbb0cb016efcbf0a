"""Optional dependencies (host/pyproject.toml's extras): a missing one is a one-line error naming the extra to install
(centrum.core.extras.need), and the core runs the ensemble and the source-only extractor without LightGBM or scipy. A
missing package is simulated in a fresh interpreter by a meta-path finder that refuses to import it, as Python does
when the package is not installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
EXTRAS = tomllib.loads((REPO / "host" / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "optional-dependencies"]
# The module each extra provides that centrum imports.
MODULES = [("render", "playwright"), ("train", "lightgbm"), ("train", "pyarrow"), ("batch", "ray"),
           ("batch", "fastwarc"), ("batch", "pyarrow"), ("peers", "trafilatura"), ("plots", "matplotlib"),
           ("corpus", "sphinx"), ("docs", "mkdocs")]
BLOCKER = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Absent())
"""


def run_without(blocked: set[str], code: str) -> subprocess.CompletedProcess[str]:
    script = BLOCKER.format(blocked=blocked) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO)


def test_every_extra_of_the_issue_exists_and_the_core_is_light() -> None:
    assert {"render", "batch", "train", "peers", "corpus", "docs"} <= set(EXTRAS)
    core = tomllib.loads((REPO / "host" / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    names = {canonicalize_name(Requirement(r).name) for r in core}
    assert names == {"lxml", "selectolax", "numpy", "tqdm", "tld", "charset-normalizer"}


@pytest.mark.parametrize(("extra", "module"), MODULES)
def test_a_missing_extra_is_one_line_naming_it(extra: str, module: str) -> None:
    # The module is what the extra installs (its distribution is one of the extra's requirements).
    listed = {canonicalize_name(Requirement(r).name) for r in EXTRAS[extra]}
    assert {canonicalize_name(d) for d in packages_distributions()[module]} & listed, (module, extra)
    out = run_without({module}, f"""
        from centrum.core.extras import MissingExtra, need
        try:
            need({module!r}, {extra!r}, "this command")
        except MissingExtra as e:
            print(e)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"this command needs the {extra} extra: pip install 'centrum[{extra}]'\n"
    present = run_without(set(), "from centrum.core.extras import need; "
                          f"print(need({module!r}, {extra!r}, 'x').__name__)")
    assert present.stdout.strip() == module, present.stderr


def test_training_without_lightgbm_names_the_train_extra() -> None:
    out = run_without({"lightgbm"}, """
        import numpy as np
        from centrum.algorithms import ensemble as E
        from centrum.algorithms.ensemble import model as M
        from centrum.training import learner as T
        from centrum.training import source as training_source
        model = E.load_model()
        for call in (lambda: model.booster, lambda: M.average_boosters([]),
                     lambda: T.fit_lgb_blocks(np.zeros((4, 2)), np.zeros(4), np.ones(4), T.FitOptions()),
                     lambda: training_source.fit([], training_source.TrainOptions())):
            try:
                call()
            except ImportError as e:
                print(e)
    """)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 4 and all(line.endswith("needs the train extra: pip install 'centrum[train]'")
                                   for line in lines), lines


def test_the_ensemble_and_source_models_run_without_lightgbm_or_scipy() -> None:
    """A press's algorithms (the ensemble with its block filter and debugger contributions, the source-only
    extractor) on a golden page, in an interpreter where LightGBM and scipy cannot be imported."""
    out = run_without({"lightgbm", "scipy", "playwright", "pyarrow"}, """
        import sys
        sys.path.insert(0, "tests")
        from centrum import algorithms
        from centrum.algorithms import source
        from helpers import goldens
        from centrum.core.trace import wanting
        slug = goldens.slugs()[0]
        snap = goldens.load_snapshot(slug)
        with wanting(debug=True, text=True):
            r = algorithms.run("ensemble", snap)
        assert r.nodes == goldens.answer("ensemble", snap)["nodes"]
        assert r.candidates[0].features and r.debug["base"] != 0
        html = (goldens.PAGES / slug / "page.html").read_text(encoding="utf-8")
        assert source.answer(html).keep.any()
        print(sorted(m for m in ("lightgbm", "scipy", "playwright", "pyarrow") if m in sys.modules))
    """)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]"


def test_rendering_without_playwright_is_one_line_naming_the_render_extra() -> None:
    # What a core install prints for `centrum extract page.html` (which renders): the extra to install, exit 2, no
    # traceback; the parameters and the page were checked before, and --no-render still works.
    sample = str(REPO / "tests" / "fixtures" / "sample" / "article.html")
    out = run_without({"playwright"}, f"""
        import sys
        from centrum.cli import main
        sys.exit(main(["extract", {sample!r}, "-a", "semantic"]))
    """)
    assert out.returncode == 2, out.stderr
    assert out.stderr == ("centrum extract: rendering pages needs the render extra: pip install 'centrum[render]'\n")
    assert out.stdout == ""
