"""The annotator quality gate: refuse to go on with a machine annotator that misses too much.

A failing gate explains itself: the message carries a one-line diagnosis (``diagnosis.py``)
with the setting to change, and lists per-label validation recall and the B/I/O confusion.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from protocol.annotator import AnnotatorMetrics, AnnotatorRecord
from shared.errors import QualityGateError
from site_agent.annotator.diagnosis import diagnose

# Where an operator sets the threshold: fix texts must name the real key (see the tests).
GATE_KEY = "[annotator] min_validation_recall"
GATE_WHERE = "in site.toml (`--min-recall` for `site-agent annotate train`)"


def gate_recall(metrics: AnnotatorMetrics, excluded: Collection[str] = ()) -> float:
    """Token recall over the labels the gate judges (all but ``excluded``)."""
    if not excluded or not metrics.labels:
        return metrics.recall
    kept = [s for label, s in metrics.labels.items() if label not in excluded]
    support = sum(s.support for s in kept)
    return sum(s.found for s in kept) / support if support else metrics.recall


def label_lines(
    metrics: AnnotatorMetrics, mentions: Mapping[str, int], excluded: Collection[str] = ()
) -> list[str]:
    """One line per label: validation recall, words, training mentions, whether gated."""
    lines = []
    for label, score in sorted(metrics.labels.items()):
        if not score.support:
            continue
        note = "  (rare: not gated)" if label in excluded else ""
        trained = f", {mentions[label]} training mentions" if label in mentions else ""
        lines.append(f"{label}: recall {score.recall:.2f} of {score.support} words{trained}{note}")
    return lines


def confusion_line(metrics: AnnotatorMetrics) -> str:
    """Gold prefix -> predicted prefix word counts, e.g. ``B->O 120`` (empty cells left out)."""
    cells = [f"{g}->{p} {n}" for g, row in metrics.confusion.items() for p, n in row.items() if n]
    return "B/I/O confusion (gold->predicted words): " + ", ".join(cells)


def check_annotator_quality(
    metrics: AnnotatorMetrics | Mapping[str, float] | None,
    min_recall: float,
    record: AnnotatorRecord | None = None,
    rare: Collection[str] = (),
    exclude_rare: bool = True,
) -> None:
    """Raise :class:`QualityGateError` when validation recall is below ``min_recall``.

    Recall is the token-level recall (words inside gold entities that were found with the right
    label) over every label, or all but the ``rare`` ones with ``exclude_rare``. Synthetic notes
    annotated by a low-recall model would carry unlabelled PII, so the pipeline stops here
    rather than exporting them. A missing validation score only passes when the gate is off
    (``min_recall <= 0``). ``record`` (the model's ``annotator.json``) lets the message say
    why: PHI density, sampling, steps, stall restarts.
    """
    if min_recall <= 0:
        return
    excluded = tuple(sorted(rare)) if exclude_rare else ()
    if metrics is None:
        raise QualityGateError(
            f"the annotator quality gate needs validation metrics (required recall "
            f"{min_recall}) but the annotator was trained without a validation corpus; fix: "
            f"give it a validation split, or switch the gate off with {GATE_KEY} = 0 {GATE_WHERE}"
        )
    if isinstance(metrics, AnnotatorMetrics):
        recall: float | None = gate_recall(metrics, excluded)
    else:
        recall = metrics.get("recall")
    if recall is None:
        raise QualityGateError(
            f"the annotator metrics have no 'recall' entry (found {sorted(metrics)}); fix: pass "
            "the metrics recorded in annotator.json"
        )
    if recall >= min_recall:
        return
    skipped = f" (rare labels not gated: {', '.join(sorted(excluded))})" if excluded else ""
    head = (
        f"machine annotator recall {recall:.3f} is below the required {min_recall:.3f} on "
        f"the validation split{skipped}; synthetic notes annotated with it would keep "
        "unlabelled PII"
    )
    if not isinstance(metrics, AnnotatorMetrics) or not metrics.labels:
        raise QualityGateError(
            f"{head}; fix: train longer or on more gold data, choose a stronger base model, or "
            f"lower {GATE_KEY} {GATE_WHERE}"
        )
    diagnosis = diagnose(metrics, record, tuple(sorted(rare)))
    mentions = record.train_mentions if record else {}
    raise QualityGateError(
        f"{head}\ndiagnosis: {diagnosis.finding}\nfix: {diagnosis.fix}; or lower {GATE_KEY} "
        f"{GATE_WHERE}",
        problems=[*label_lines(metrics, mentions, excluded), confusion_line(metrics)],
    )
