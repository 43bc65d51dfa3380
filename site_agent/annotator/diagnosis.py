"""Why an annotator failed its quality gate, in one line, and the setting to change.

Rules are tried in order (first match wins), each a small function over the validation
metrics and the record of how the model was trained: a model that predicts only ``O``, one
that misses mostly rare labels, one that finds entities but cuts them wrong, and the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.annotator import AnnotatorMetrics, AnnotatorRecord, TrainingRecipe

TRAINING = "[annotator.training]"


@dataclass(frozen=True)
class Diagnosis:
    """What went wrong (``finding``) and what to change (``fix``)."""

    finding: str
    fix: str


Rule = Callable[[AnnotatorMetrics, AnnotatorRecord | None, tuple[str, ...]], Diagnosis | None]


def corpus_line(recipe: TrainingRecipe | None, restarts: int = 0) -> str:
    """PHI density, sampling, loss weight and steps of a run, for a diagnosis."""
    if recipe is None:
        return "training recipe not recorded"
    sampling = (
        f"sparse-PHI sampling was on ({recipe.phi_free_per_phi:g} PHI-free chunk per PHI chunk)"
        if recipe.sparse
        else "sparse-PHI sampling was off"
    )
    line = (
        f"PHI density {recipe.phi_word_density:.1%} of words, "
        f"{recipe.documents_without_phi:.0%} of notes without PHI; {sampling}; "
        f"entity weight {recipe.entity_weight:.2g}; {recipe.steps} optimiser steps planned"
    )
    return line + (f"; {restarts} stall restart(s)" if restarts else "")


def _only_outside(
    metrics: AnnotatorMetrics, record: AnnotatorRecord | None, rare: tuple[str, ...]
) -> Diagnosis | None:
    if sum(score.predicted for score in metrics.labels.values()) > 0 or not metrics.labels:
        return None
    recipe = record.recipe if record else None
    finding = f"predicts only O: {corpus_line(recipe, record.restarts if record else 0)}"
    if recipe is not None and not recipe.sparse:
        fix = f"set {TRAINING} phi_free_per_phi = 1 (down-sample PHI-free chunks)"
    else:
        steps = recipe.steps if recipe else 0
        fix = (
            f"raise {TRAINING} min_steps (planned {steps}) or entity_weight, "
            "or try learning_rate = 3e-4"
        )
    return Diagnosis(finding, fix)


def _missed(metrics: AnnotatorMetrics) -> dict[str, int]:
    return {label: s.support - s.found for label, s in metrics.labels.items() if s.support}


def _rare_misses(
    metrics: AnnotatorMetrics, record: AnnotatorRecord | None, rare: tuple[str, ...]
) -> Diagnosis | None:
    missed = _missed(metrics)
    in_rare = sum(missed.get(label, 0) for label in rare)
    if not rare or in_rare * 2 < sum(missed.values()):
        return None
    return Diagnosis(
        f"most missed words belong to labels with too few training mentions ({', '.join(rare)})",
        'leave them out of the gate with [annotator] rare_labels = "exclude", map them to a '
        "more frequent label in the corpus, or add gold notes that hold them",
    )


def _boundaries(
    metrics: AnnotatorMetrics, record: AnnotatorRecord | None, rare: tuple[str, ...]
) -> Diagnosis | None:
    c = metrics.confusion
    if not c:
        return None
    swapped = c["B"]["I"] + c["I"]["B"]
    missed = c["B"]["O"] + c["I"]["O"]
    if swapped <= missed:
        return None
    return Diagnosis(
        f"finds entities but cuts them wrong: {swapped} words with B/I swapped, {missed} missed",
        f'set {TRAINING} decoding = "viterbi" and raise min_steps',
    )


def _low_recall(
    metrics: AnnotatorMetrics, record: AnnotatorRecord | None, rare: tuple[str, ...]
) -> Diagnosis:
    worst = sorted(
        ((s.recall, label) for label, s in metrics.labels.items() if s.support), key=lambda x: x
    )[:3]
    named = ", ".join(f"{label} {recall:.2f}" for recall, label in worst) or "no label scored"
    recipe = record.recipe if record else None
    return Diagnosis(
        f"misses too much (lowest label recall: {named}); {corpus_line(recipe)}",
        f"raise {TRAINING} min_steps or entity_weight, or train on more gold notes",
    )


RULES: tuple[Rule, ...] = (_only_outside, _rare_misses, _boundaries)


def diagnose(
    metrics: AnnotatorMetrics, record: AnnotatorRecord | None, rare: tuple[str, ...] = ()
) -> Diagnosis:
    """The first rule that explains the metrics, else a low-recall summary."""
    for rule in RULES:
        found = rule(metrics, record, rare)
        if found is not None:
            return found
    return _low_recall(metrics, record, rare)


def training_notes(record: AnnotatorRecord, name: str) -> list[str]:
    """Lines for the site report and the screen: stall restarts and a sparse-PHI recipe."""
    notes = []
    if record.restarts:
        notes.append(
            f"{name}: stalled on predicting only O and was restarted {record.restarts} time(s) "
            f"with the next seed; training took {record.restarts + 1} runs "
            f"({record.timings.get('train_seconds', 0.0):.0f} s of training in the kept run)"
        )
    recipe = record.recipe
    if recipe is not None and recipe.sparse:
        notes.append(f"{name}: sparse PHI - {corpus_line(recipe)}")
    if record.stopped_early:
        planned = recipe.epochs if recipe else "?"
        notes.append(
            f"{name}: stopped early after {len(record.epochs)} of {planned} epochs "
            f"(validation F1 no longer improved; best epoch {record.best_epoch})"
        )
    return notes
