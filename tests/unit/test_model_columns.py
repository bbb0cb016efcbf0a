"""Which base algorithms a model runs, read from its feature names alone, and so whether the default reads the page
source (the host's ping answers ``needs_source`` from it before the models are loaded)."""

from __future__ import annotations

from centrum import algorithms
from centrum.algorithms import ensemble as E
from centrum.algorithms.model_columns import NOT_RUN, default_reads_source, needs_source, proposers_of_names


def test_the_default_models_headers_say_what_their_trees_say() -> None:
    models = (E.load_model(), E.load_block_model())
    assert proposers_of_names(*(m.feature_names for m in models)) == E.proposers_of(*models)
    reads = any(algorithms.REGISTRY[a].needs_source for a in E.proposers_of(*models))
    assert default_reads_source() is reads
    assert needs_source("ensemble") is reads


def test_a_model_trained_without_the_dana_family_reads_no_source() -> None:
    names = E.F.feature_names()
    dana = ("dana", "danag", "addanag")
    trained = E.trained_names(names, tuple(a for a in algorithms.BASE_ALGORITHMS if a not in dana))
    assert any(n.startswith(NOT_RUN) for n in trained)
    proposers = proposers_of_names(trained, E.trained_names(E.B.feature_names(), proposers_of_names(trained)))
    assert set(proposers) == set(algorithms.BASE_ALGORITHMS) - set(dana)
    assert not any(algorithms.REGISTRY[a].needs_source for a in proposers)
    # A model from before `--without` (no column marked) runs every base algorithm, DANA's readers of the source too.
    assert proposers_of_names(names) == algorithms.BASE_ALGORITHMS


def test_other_algorithms_answer_from_the_registry() -> None:
    assert needs_source("source") and needs_source("dana")
    assert not needs_source("r4") and not needs_source("semantic")


def test_an_install_without_its_weights_collects_the_source(monkeypatch) -> None:
    from centrum.algorithms import model_columns

    def missing(name: str) -> list[str]:
        raise FileNotFoundError(name)

    monkeypatch.setattr(model_columns, "_shipped_feature_names", missing)
    model_columns.default_reads_source.cache_clear()
    try:
        assert model_columns.default_reads_source() is True
    finally:
        model_columns.default_reads_source.cache_clear()
