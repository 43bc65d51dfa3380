"""Span-level exact-match and overlap-match scores (seed paper 002, section 2.6).

* Exact match: a predicted span counts only if a gold span has the same label and the same
  boundaries.
* Overlap match: label-consistent greedy matching by maximum intersection. Every (gold, pred)
  pair with the same label and a non-empty character intersection is a candidate; candidates
  are taken in order of decreasing intersection (ties: earlier gold, then earlier prediction)
  and each span is matched at most once. A matched pair is a true positive for precision and
  for recall alike, so one prediction that covers two gold spans recovers only one of them.

Counts are kept per document and label so that the bootstrap can resample documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from protocol import Span
from protocol.evaluation import MatchScores
from shared.metrics.pairing import DocumentPair
from shared.metrics.scores import match_scores


def intersection(a: Span, b: Span) -> int:
    """Number of characters two spans share (0 if disjoint)."""
    return max(0, min(a.end, b.end) - max(a.start, b.start))


def overlapping_pairs(gold: Sequence[Span], pred: Sequence[Span]) -> list[tuple[int, int, int]]:
    """``(gold_index, pred_index, intersection)`` for every overlapping pair, any label.

    Both sequences must be sorted by start (``Document`` keeps them so); a sweep skips the
    predictions that end before the current gold span starts.
    """
    pairs: list[tuple[int, int, int]] = []
    first = 0
    for i, g in enumerate(gold):
        while first < len(pred) and pred[first].end <= g.start:
            first += 1
        j = first
        while j < len(pred) and pred[j].start < g.end:
            shared = intersection(g, pred[j])
            if shared > 0:
                pairs.append((i, j, shared))
            j += 1
    return pairs


def greedy_overlap_matching(gold: Sequence[Span], pred: Sequence[Span]) -> list[tuple[int, int]]:
    """One-to-one ``(gold_index, pred_index)`` matches, same label, largest intersection first."""
    candidates = [
        (i, j, shared)
        for i, j, shared in overlapping_pairs(gold, pred)
        if gold[i].label == pred[j].label
    ]
    candidates.sort(key=lambda c: (-c[2], c[0], c[1]))
    used_gold: set[int] = set()
    used_pred: set[int] = set()
    matches: list[tuple[int, int]] = []
    for i, j, _ in candidates:
        if i not in used_gold and j not in used_pred:
            used_gold.add(i)
            used_pred.add(j)
            matches.append((i, j))
    return sorted(matches)


def exact_matches(gold: Sequence[Span], pred: Sequence[Span]) -> set[tuple[int, int, str]]:
    """Gold spans that a prediction reproduces exactly (label and both boundaries)."""
    return {(s.start, s.end, s.label) for s in gold} & {(s.start, s.end, s.label) for s in pred}


@dataclass(frozen=True)
class SpanCounts:
    """Per-document, per-label counts; every array has shape (documents, labels)."""

    labels: tuple[str, ...]
    gold: np.ndarray
    predicted: np.ndarray
    exact: np.ndarray
    overlap: np.ndarray


def count_spans(pairs: Sequence[DocumentPair], labels: Sequence[str]) -> SpanCounts:
    """Gold, predicted, exact-matched and overlap-matched spans per document and label."""
    column = {label: k for k, label in enumerate(labels)}
    shape = (len(pairs), len(labels))
    gold, predicted, exact, overlap = (np.zeros(shape, dtype=np.int64) for _ in range(4))
    for row, pair in enumerate(pairs):
        g, p = pair.gold.spans, pair.predicted
        for span in g:
            gold[row, column[span.label]] += 1
        for span in p:
            predicted[row, column[span.label]] += 1
        for _, _, label in exact_matches(g, p):
            exact[row, column[label]] += 1
        for i, _ in greedy_overlap_matching(g, p):
            overlap[row, column[g[i].label]] += 1
    return SpanCounts(tuple(labels), gold, predicted, exact, overlap)


def span_scores(counts: SpanCounts) -> tuple[MatchScores, MatchScores]:
    """Exact-match and overlap-match scores over the whole corpus."""
    gold = counts.gold.sum(axis=0)
    predicted = counts.predicted.sum(axis=0)
    return (
        match_scores("exact", counts.labels, counts.exact.sum(axis=0), predicted, gold),
        match_scores("overlap", counts.labels, counts.overlap.sum(axis=0), predicted, gold),
    )
