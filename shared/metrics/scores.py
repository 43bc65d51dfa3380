"""Precision, recall and F1 from match counts, shared by every matching criterion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from protocol.evaluation import MatchScores, Scores


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, or 0.0 when the denominator is zero (nothing to score)."""
    return float(numerator) / float(denominator) if denominator else 0.0


def scores(true_positives: int, predicted: int, support: int) -> Scores:
    """Scores of one label or of the micro total; undefined ratios are 0.0 (seqeval default)."""
    precision = ratio(true_positives, predicted)
    recall = ratio(true_positives, support)
    return Scores(
        precision=precision,
        recall=recall,
        f1=ratio(2 * true_positives, predicted + support),
        true_positives=int(true_positives),
        predicted=int(predicted),
        support=int(support),
    )


def match_scores(
    criterion: str,
    labels: Sequence[str],
    true_positives: np.ndarray,
    predicted: np.ndarray,
    support: np.ndarray,
) -> MatchScores:
    """Per-label, micro and macro scores from per-label count vectors (aligned with labels)."""
    per_label = {
        label: scores(int(true_positives[k]), int(predicted[k]), int(support[k]))
        for k, label in enumerate(labels)
        if predicted[k] or support[k]
    }
    micro = scores(int(true_positives.sum()), int(predicted.sum()), int(support.sum()))
    return MatchScores(
        criterion=criterion, micro=micro, macro=macro_average(per_label, micro), per_label=per_label
    )


def macro_average(per_label: dict[str, Scores], micro: Scores) -> Scores:
    """Unweighted mean of the per-label ratios; counts are the micro totals."""
    n = len(per_label)
    values = per_label.values()
    return Scores(
        precision=ratio(sum(s.precision for s in values), n),
        recall=ratio(sum(s.recall for s in values), n),
        f1=ratio(sum(s.f1 for s in values), n),
        true_positives=micro.true_positives,
        predicted=micro.predicted,
        support=micro.support,
    )
