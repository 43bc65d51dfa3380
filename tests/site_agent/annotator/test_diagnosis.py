"""A failing gate explains itself: per-label recall, B/I/O confusion, one-line diagnosis, fix."""

from __future__ import annotations

import pytest

from ner.recipe import corpus_recipe
from ner.scoring import score_tags
from protocol.annotator import AnnotatorMetrics, AnnotatorRecord, AnnotatorSettings
from shared.errors import QualityGateError
from site_agent.annotator.diagnosis import diagnose, training_notes
from site_agent.annotator.gate import check_annotator_quality, gate_recall
from tests.ner.test_recipe import corpus

GOLD = [["B-NAME", "I-NAME", "O", "B-DATE", "O", "B-FAX"]] * 4


def _metrics(pred: list[list[str]]) -> AnnotatorMetrics:
    return score_tags(GOLD, pred)


def _record(phi: int, free: int, settings: AnnotatorSettings, restarts: int = 0) -> AnnotatorRecord:
    return AnnotatorRecord(
        base_model="tiny", labels=("DATE", "FAX", "NAME"), tags=("O",), settings=settings,
        settings_digest="0" * 64, best_epoch=1, epochs=(), train_chunks=phi + free,
        restarts=restarts, recipe=corpus_recipe(corpus(phi, free), settings),
        train_mentions={"DATE": 300, "FAX": 3, "NAME": 400},
    )  # fmt: skip


def test_per_label_counts_and_confusion_by_hand() -> None:
    pred = [["B-NAME", "B-NAME", "O", "O", "B-DATE", "O"]] * 4
    metrics = _metrics(pred)
    name, date, fax = (metrics.labels[k] for k in ("NAME", "DATE", "FAX"))
    assert (name.support, name.found, name.predicted) == (8, 8, 8)
    assert (date.support, date.found, date.predicted) == (4, 0, 4)
    assert (fax.support, fax.found, fax.predicted) == (4, 0, 0)
    assert metrics.confusion["B"] == {"B": 4, "I": 0, "O": 8}
    assert metrics.confusion["I"] == {"B": 4, "I": 0, "O": 0}
    assert metrics.confusion["O"] == {"B": 4, "I": 0, "O": 4}


def test_only_o_with_sampling_off_names_density_and_the_setting() -> None:
    only_o = _metrics([["O"] * 6] * 4)
    settings = AnnotatorSettings(phi_free_per_phi=100.0, min_steps=0)  # sampling forced off
    record = _record(2, 60, settings)
    with pytest.raises(QualityGateError) as info:
        check_annotator_quality(only_o, 0.5, record)
    text = str(info.value)
    assert "recall 0.000" in text
    assert "diagnosis: predicts only O: PHI density" in text
    assert "sparse-PHI sampling was off" in text
    assert "fix: set [annotator.training] phi_free_per_phi = 1" in text
    assert "NAME: recall 0.00 of 8 words, 400 training mentions" in text
    assert "B/I/O confusion" in text and "B->O 12, I->O 4" in text


def test_only_o_with_sampling_on_points_at_the_step_budget() -> None:
    record = _record(2, 60, AnnotatorSettings(min_steps=0), restarts=1)
    found = diagnose(_metrics([["O"] * 6] * 4), record)
    assert "sparse-PHI sampling was on" in found.finding and "1 stall restart" in found.finding
    assert "min_steps" in found.fix


def test_rare_labels_leave_the_gate_by_policy_and_are_named() -> None:
    pred = [["B-NAME", "I-NAME", "O", "B-DATE", "O", "O"]] * 4  # all but the rare FAX found
    metrics = _metrics(pred)
    assert metrics.recall == pytest.approx(12 / 16)
    assert gate_recall(metrics, ("FAX",)) == 1.0
    record = _record(40, 10, AnnotatorSettings())
    check_annotator_quality(metrics, 0.9, record, rare=("FAX",))  # excluded: passes
    with pytest.raises(QualityGateError) as info:
        check_annotator_quality(metrics, 0.9, record, rare=("FAX",), exclude_rare=False)
    assert "FAX: recall 0.00 of 4 words, 3 training mentions" in str(info.value)


def test_misses_mostly_on_rare_labels_are_diagnosed_as_such() -> None:
    pred = [["B-NAME", "I-NAME", "O", "O", "O", "O"]] * 4
    found = diagnose(_metrics(pred), None, rare=("DATE", "FAX"))
    assert "too few training mentions (DATE, FAX)" in found.finding
    assert 'rare_labels = "exclude"' in found.fix


def test_training_notes_say_restarts_and_sparse_recipe() -> None:
    record = _record(2, 60, AnnotatorSettings(min_steps=0), restarts=1)
    notes = training_notes(record, "gold annotator")
    assert any("restarted 1 time(s)" in n for n in notes)
    assert any("sparse PHI" in n and "PHI density" in n for n in notes)
    assert training_notes(_record(40, 10, AnnotatorSettings()), "gold annotator") == []
