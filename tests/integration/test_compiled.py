"""Models compiled by lleaves (centrum.algorithms._compiled, the ``fast`` extra) give LightGBM's doubles: the default
block filter and source-only stages on real rows and on rows at their thresholds with NaN, 0 and sub-kZeroThreshold
values, and models with the split kinds the shipped ones lack. A Boosted predicts with its compiled file once the
process asked for fast predictors and the file exists (and again after a compilation ends); files outside a folder
that is the user's alone are not loaded; ``centrum models compile`` compiles each default once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest
from helpers.model_rows import SPLIT_KINDS, edge_rows, golden_rows, source_rows, split_kind_model

from centrum.algorithms import _compiled, compile_defaults, source
from centrum.algorithms import ensemble as E
from centrum.algorithms._trees import Trees
from centrum.algorithms.ensemble import model as M
from centrum.cli import main as cli_main


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A ``$CENTRUM_CACHE`` where ``centrum models compile`` compiled the defaults (seconds a model: once a module)."""
    root = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CENTRUM_CACHE", str(root))
        assert cli_main(["models", "compile"]) == 0
        yield root


def exact(text: str, X: np.ndarray) -> None:
    predict = _compiled.load(text)
    assert predict is not None
    booster = lgb.Booster(model_str=text)
    assert np.array_equal(predict(X), booster.predict(X, num_threads=1))


def test_the_defaults_compiled_give_lightgbms_doubles(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(cache))
    texts = compile_defaults.default_texts()
    assert set(texts) == {E.Config().block_weights, source.Config().weights, source.Config().context_weights}
    assert compile_defaults.missing() == []
    assert (cache / "compiled").stat().st_mode & 0o777 == 0o700
    _, blocks = golden_rows()
    for name, text in texts.items():
        trees = Trees.parse(text)
        k = len(trees.feature_names)
        real = blocks if name == E.Config().block_weights else source_rows(name == source.Config().context_weights)
        exact(text, np.concatenate([real[:, :k], edge_rows(trees, 300)]))
    capsys.readouterr()
    assert cli_main(["models", "compile"]) == 0  # the second time nothing is compiled again
    assert capsys.readouterr().out.count("already compiled") == 3


@pytest.mark.parametrize("params", SPLIT_KINDS)
def test_split_kinds_the_shipped_models_lack_compile_exactly(params: dict, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(tmp_path))
    text, X = split_kind_model(params)
    assert _compiled.load(text) is None  # not compiled yet
    _compiled.compile_text(text)
    exact(text, np.concatenate([X, edge_rows(Trees.parse(text), 300, seed=2)]))


def test_boosted_uses_its_compiled_file_once_asked_and_once_compiled(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(tmp_path))
    monkeypatch.setattr(M, "_FAST", False)
    text = source.load_model(source.Config().context_weights, context=True).text
    model = M.Boosted.from_string(text, list(Trees.parse(text).feature_names))
    X = source_rows(True)
    _compiled.compile_text(text)
    assert model.compiled() is None  # the process has not asked for fast predictors
    M.native_predictor()
    assert model.compiled() is not None
    assert np.array_equal(model.predict(X), model.trees.predict(X))

    other = source.load_model(source.Config().weights).text
    first = M.Boosted.from_string(other, list(Trees.parse(other).feature_names))
    assert first.compiled() is None  # looked up: not compiled
    _compiled.compile_text(other)
    assert first.compiled() is None  # not looked up again until a compilation has ended
    _compiled.reload()
    assert first.compiled() is not None


def test_compiled_files_in_a_folder_others_can_open_are_not_loaded(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(tmp_path))
    text = source.load_model(source.Config().context_weights, context=True).text
    _compiled.compile_text(text)
    assert _compiled.load(text) is not None
    os.chmod(tmp_path / "compiled", 0o755)
    assert _compiled.load(text) is None
    _compiled.compile_text(text)  # compiling closes the folder again (it is ours)
    assert _compiled.load(text) is not None


def test_background_compilation_is_off_when_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(tmp_path))
    monkeypatch.setenv("CENTRUM_COMPILE", "off")
    assert compile_defaults.missing() and compile_defaults.start() is None  # nothing started, nothing to wait for


def test_rows_of_another_width_are_refused_before_the_compiled_code_reads_them(cache: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(cache))
    text = E.load_block_model().text
    predict = _compiled.load(text)
    assert predict is not None
    width = len(Trees.parse(text).feature_names)
    with pytest.raises(ValueError, match=f"rows of {width} features"):
        predict(np.zeros((3, width - 1)))


def test_without_a_linker_compile_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CENTRUM_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert cli_main(["models", "compile"]) == 1
    out = capsys.readouterr().out
    assert out.count("not compiled: no linker found (cc or ld)") == 3, out
    assert compile_defaults.missing() and not list((tmp_path / "compiled").glob("*.so"))
