"""LightGBM model files as named ensemble models: `centrum models install` takes them, the ensemble runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.records import synthetic_records

from centrum.algorithms import ensemble as Ens
from centrum.algorithms.ensemble import model as M
from centrum.core.config import ConfigError
from centrum.training import learner as T


def test_model_files_prefer_lightgbm_and_ignore_other_files() -> None:
    files = Ens.model_files(["a.json", "a.lgb.txt", "b.json", "c.lgb.txt", "notes.txt", ".hidden.json", "x.tmp"])
    assert files == {"a": "a.lgb.txt", "b": "b.json", "c": "c.lgb.txt"}


def test_installed_lightgbm_model_is_used_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trained = tmp_path / "mine.lgb.txt"
    T.fit(synthetic_records(), T.FitOptions(lgb_rounds=20, lgb_min_leaf=5)).save(trained)
    home = tmp_path / "home"
    env = {**os.environ, "CENTRUM_HOME": str(home)}

    def models(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "centrum.cli", "models", *args], capture_output=True, text=True,
                              env=env, timeout=60)

    done = models("install", str(trained))
    assert done.returncode == 0 and "weights=mine" in done.stdout, done.stderr
    assert (home / "models" / "mine.lgb.txt").read_bytes() == trained.read_bytes()
    assert "mine\tinstalled" in models("list").stdout
    monkeypatch.setenv("CENTRUM_HOME", str(home))
    model = Ens.load_model("mine")
    assert isinstance(model, M.Boosted) and model.feature_names == T.F.feature_names()
    with pytest.raises(ConfigError, match="block filter"):
        Ens.load_block_model("mine")  # a candidate scorer is not a block filter
    bad = tmp_path / "bad.lgb.txt"
    bad.write_text("tree\nnot a model\n", encoding="utf-8")
    refused = models("install", str(bad))
    assert refused.returncode == 2 and "not a LightGBM model" in refused.stderr
    assert models("remove", "mine").returncode == 0 and not (home / "models" / "mine.lgb.txt").exists()
