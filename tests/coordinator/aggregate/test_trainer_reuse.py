"""A stopped coordinator does not train again what it finished: a model already trained for
the same notes, base model and settings is reused; any change trains it again, and a training
stopped part-way resumes from its checkpoint folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ner.train
from coordinator.aggregate.trainer import NerSettings, train_annotator, training_key
from protocol import Corpus
from tests.template_sites import demo_corpus

SETTINGS = NerSettings(epochs=1, min_steps=1, batch_size=4, seed=0)


class Trained(Exception):
    """Raised by the stand-in trainer: the coordinator asked for a training."""


def _no_training(*args: Any, **kwargs: Any) -> None:
    raise Trained(kwargs or args)


def test_a_finished_model_is_reused_and_any_change_trains_again(
    base_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = demo_corpus("site-a", 6, 0, "r")
    out = tmp_path / "models" / "pooled"
    assert train_annotator(notes, None, base_model, SETTINGS, out) == out
    marker = out.with_name("pooled.trained-for.json")
    assert (out / "annotator.json").is_file() and marker.is_file()
    assert not out.with_name("pooled.checkpoint").exists()  # removed once the model is saved
    weights = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}

    monkeypatch.setattr(ner.train, "train_annotator", _no_training)
    assert train_annotator(notes, None, base_model, SETTINGS, out) == out  # nothing trained
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == weights

    first = notes.documents[0]
    edited = Corpus(
        documents=(first.model_copy(update={"text": first.text + " x"}), *notes.documents[1:])
    )
    other = SETTINGS.model_copy(update={"learning_rate": SETTINGS.learning_rate / 2})
    for corpus, settings in ((edited, SETTINGS), (notes, other)):
        with pytest.raises(Trained) as asked:
            train_annotator(corpus, None, base_model, settings, out)
        args = asked.value.args[0]
        assert args[-1] == out.with_name("pooled.checkpoint")  # a stopped run resumes there
        assert not marker.exists()  # the old key no longer vouches for the folder


def test_the_key_follows_the_notes_not_their_provenance(base_model: Path) -> None:
    notes = demo_corpus("site-b", 4, 0, "k")
    restamped = notes.model_copy(
        update={"provenance": notes.provenance.model_copy(update={"source": "elsewhere"})}
    )
    key = training_key(notes, None, base_model, SETTINGS)
    assert training_key(restamped, None, base_model, SETTINGS) == key
    assert training_key(notes, notes, base_model, SETTINGS) != key
    relabelled = notes.model_copy(update={"labels": (*notes.labels, "EXTRA")})
    assert training_key(relabelled, None, base_model, SETTINGS) != key
