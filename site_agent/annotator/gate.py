"""The annotator quality gate: refuse to go on with a machine annotator that misses too much."""

from __future__ import annotations

from collections.abc import Mapping

from protocol.annotator import AnnotatorMetrics
from shared.errors import QualityGateError

# Where an operator sets the threshold: fix texts must name the real key (see the tests).
GATE_KEY = "[annotator] min_validation_recall"
GATE_WHERE = "in site.toml (`--min-recall` for `site-agent annotate train`)"


def check_annotator_quality(
    metrics: AnnotatorMetrics | Mapping[str, float] | None, min_recall: float
) -> None:
    """Raise :class:`QualityGateError` when validation recall is below ``min_recall``.

    Recall is the token-level recall (words inside gold entities that were found with the right
    label). Synthetic notes annotated by a low-recall model would carry unlabelled PII, so the
    pipeline stops here rather than exporting them. A missing validation score only passes
    when the gate is off (``min_recall <= 0``).
    """
    if min_recall <= 0:
        return
    if metrics is None:
        raise QualityGateError(
            f"the annotator quality gate needs validation metrics (required recall "
            f"{min_recall}) but the annotator was trained without a validation corpus; fix: "
            f"give it a validation split, or switch the gate off with {GATE_KEY} = 0 {GATE_WHERE}"
        )
    recall = metrics.recall if isinstance(metrics, AnnotatorMetrics) else metrics.get("recall")
    if recall is None:
        raise QualityGateError(
            f"the annotator metrics have no 'recall' entry (found {sorted(metrics)}); fix: pass "
            "the metrics recorded in annotator.json"
        )
    if recall < min_recall:
        raise QualityGateError(
            f"machine annotator recall {recall:.3f} is below the required {min_recall:.3f} on "
            "the validation split; synthetic notes annotated with it would keep unlabelled PII; "
            "fix: train longer or on more gold data, choose a stronger base model, or lower "
            f"{GATE_KEY} {GATE_WHERE}"
        )
