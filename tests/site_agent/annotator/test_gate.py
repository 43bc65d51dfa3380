"""The quality gate stops the pipeline when the annotator's recall is too low."""

from __future__ import annotations

import pytest

from protocol.annotator import AnnotatorMetrics
from shared.errors import QualityGateError
from site_agent.annotator.gate import check_annotator_quality


def _metrics(recall: float) -> AnnotatorMetrics:
    return AnnotatorMetrics(
        precision=0.9, recall=recall, f1=0.5, entity_precision=0.9, entity_recall=recall,
        entity_f1=0.5, support=10,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("metrics", "min_recall", "passes"),
    [
        (_metrics(0.80), 0.70, True),
        (_metrics(0.70), 0.70, True),
        (_metrics(0.69), 0.70, False),
        ({"recall": 0.9}, 0.95, False),
        ({"recall": 0.96}, 0.95, True),
        (None, 0.5, False),
        (None, 0.0, True),
        (_metrics(0.0), 0.0, True),
    ],
)
def test_gate(
    metrics: AnnotatorMetrics | dict[str, float] | None, min_recall: float, passes: bool
) -> None:
    if passes:
        check_annotator_quality(metrics, min_recall)
        return
    with pytest.raises(QualityGateError) as info:
        check_annotator_quality(metrics, min_recall)
    assert info.value.exit_code == 3
    assert "fix:" in str(info.value)


def test_gate_message_names_recall_and_threshold() -> None:
    with pytest.raises(QualityGateError, match=r"recall 0\.420 is below the required 0\.800"):
        check_annotator_quality(_metrics(0.42), 0.8)


def test_metrics_without_recall_are_rejected() -> None:
    with pytest.raises(QualityGateError, match="no 'recall' entry"):
        check_annotator_quality({"f1": 0.9}, 0.5)
