"""The recipe follows the corpus's PHI statistics: sparse PHI turns on sampling and weights."""

from __future__ import annotations

import math

import pytest

from ner.recipe import (
    MAX_ENTITY_WEIGHT,
    TARGET_ENTITY_SHARE,
    corpus_recipe,
    phi_statistics,
)
from protocol import Corpus, Document, Span
from protocol.annotator import AnnotatorSettings

FILLER = "el paciente refiere dolor abdominal desde hace tres días sin fiebre"  # 11 words


def _phi_note(doc_id: str) -> Document:
    text = f"Paciente Ana García ingresa. {FILLER}"
    return Document(id=doc_id, text=text, spans=(Span(start=9, end=19, label="NAME"),))


def _free_note(doc_id: str) -> Document:
    return Document(id=doc_id, text=FILLER, spans=())


def corpus(phi: int, free: int) -> Corpus:
    docs = [_phi_note(f"p{i}") for i in range(phi)] + [_free_note(f"f{i}") for i in range(free)]
    return Corpus(documents=tuple(docs), labels=("NAME",))


def test_statistics_count_words_chunks_and_mentions_by_hand() -> None:
    stats = phi_statistics(corpus(2, 3), chunk_words=128)
    # a PHI note: "Paciente Ana García ingresa ." + 11 filler words = 16 words, 2 inside NAME
    assert (stats.documents, stats.documents_with_phi) == (5, 2)
    assert (stats.words, stats.phi_words) == (2 * 16 + 3 * 11, 4)
    assert (stats.chunks, stats.phi_chunks, stats.phi_chunk_words) == (5, 2, 32)
    assert stats.mentions == {"NAME": 2}
    assert stats.documents_without_phi == pytest.approx(0.6)
    assert stats.mean_phi_free_chunk_words == pytest.approx(11)


def test_dense_corpus_keeps_every_chunk_and_an_unweighted_loss() -> None:
    recipe = corpus_recipe(corpus(8, 2), AnnotatorSettings(min_steps=0))
    assert not recipe.sparse and recipe.phi_free_per_phi is None
    assert recipe.chunks_per_epoch == 10 and recipe.entity_weight == 1.0
    assert recipe.epochs == AnnotatorSettings().epochs


def test_sparse_corpus_samples_phi_free_chunks_and_weighs_entities() -> None:
    recipe = corpus_recipe(corpus(2, 40), AnnotatorSettings(min_steps=0))
    assert recipe.sparse and recipe.phi_free_per_phi == 1.0
    assert recipe.chunks_per_epoch == 4  # 2 PHI chunks + 2 PHI-free chunks drawn per epoch
    # what one epoch sees: 4 NAME words among 32 + 2 * 11 words
    share = 4 / (32 + 22)
    assert share >= TARGET_ENTITY_SHARE  # 7.4%: sampling alone brings it above the target
    assert recipe.entity_weight == 1.0
    assert any("sparse PHI" in reason for reason in recipe.reasons)


def test_entity_weight_rises_when_entity_words_stay_rare_in_an_epoch() -> None:
    settings = AnnotatorSettings(min_steps=0, phi_free_per_phi=8.0)
    recipe = corpus_recipe(corpus(2, 40), settings)
    share = 4 / (32 + 8 * 2 * 11)
    assert recipe.entity_weight == pytest.approx(
        min(MAX_ENTITY_WEIGHT, math.sqrt(TARGET_ENTITY_SHARE / share))
    )
    assert recipe.entity_weight > 1.0 and recipe.chunks_per_epoch == 2 + 16


def test_explicit_settings_win_over_the_statistics() -> None:
    settings = AnnotatorSettings(min_steps=0, phi_free_per_phi=0.5, entity_weight=2.0)
    recipe = corpus_recipe(corpus(4, 40), settings)
    assert recipe.phi_free_per_phi == 0.5 and recipe.chunks_per_epoch == 6
    assert recipe.entity_weight == 2.0


@pytest.mark.parametrize(
    ("min_steps", "max_epochs", "epochs"),
    [(0, 40, 6), (12, 40, 6), (30, 40, 15), (300, 40, 40)],
)
def test_a_small_corpus_gets_epochs_up_to_the_step_budget(
    min_steps: int, max_epochs: int, epochs: int
) -> None:
    # 10 chunks, batch 8: 2 optimiser steps per epoch
    settings = AnnotatorSettings(batch_size=8, min_steps=min_steps, max_epochs=max_epochs)
    recipe = corpus_recipe(corpus(8, 2), settings)
    assert recipe.epochs == epochs and recipe.steps == 2 * epochs
    assert recipe.patience == max(3, -(-epochs // 4))


def test_max_steps_cuts_the_budget_and_says_so() -> None:
    # 10 chunks, batch 8: 2 steps per epoch; min_steps would ask for 10 epochs
    settings = AnnotatorSettings(batch_size=8, min_steps=20, max_steps=5)
    recipe = corpus_recipe(corpus(8, 2), settings)
    assert recipe.steps == 5 and recipe.epochs == 3
    assert any("max_steps = 5" in reason for reason in recipe.reasons)
    assert corpus_recipe(corpus(8, 2), settings.model_copy(update={"max_steps": 99})).steps == 20
