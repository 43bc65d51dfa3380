"""Document-level leakage: the share of documents that would leave with an identifier in it.

A document leaks when at least one of its gold spans is a false negative under the
label-consistent overlap matching of :mod:`shared.metrics.spans` (seed paper 002). The
label-agnostic variant is the redaction view: a gold span counts as hidden when any
prediction, whatever its label, overlaps it.

Documents without gold spans cannot leak. Rates are reported over all documents (the seed
paper's denominator, which depends on how many no-PII documents the corpus holds) and over the
PII-bearing documents only; an empty denominator gives 0.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from protocol.evaluation import LeakageMetrics
from shared.metrics.pairing import DocumentPair
from shared.metrics.scores import ratio
from shared.metrics.spans import SpanCounts, overlapping_pairs


def unredacted_spans(pair: DocumentPair) -> int:
    """Gold spans that no prediction of any label overlaps."""
    covered = {i for i, _, _ in overlapping_pairs(pair.gold.spans, pair.predicted)}
    return len(pair.gold.spans) - len(covered)


@dataclass(frozen=True)
class LeakageCounts:
    """Per-document vectors (shape: documents) from which every leakage rate is summed."""

    has_pii: np.ndarray
    missed: np.ndarray
    unredacted: np.ndarray

    @property
    def leaked(self) -> np.ndarray:
        return (self.missed > 0).astype(np.int64)

    @property
    def unredacted_leaked(self) -> np.ndarray:
        return (self.unredacted > 0).astype(np.int64)


def count_leakage(pairs: Sequence[DocumentPair], spans: SpanCounts) -> LeakageCounts:
    """Missed spans per document under both the matched and the label-agnostic view."""
    gold_per_doc = spans.gold.sum(axis=1)
    return LeakageCounts(
        has_pii=(gold_per_doc > 0).astype(np.int64),
        missed=gold_per_doc - spans.overlap.sum(axis=1),
        unredacted=np.array([unredacted_spans(p) for p in pairs], dtype=np.int64),
    )


def leaked_document_ids(pairs: Sequence[DocumentPair], counts: LeakageCounts) -> list[str]:
    """Ids of the leaking documents, for local error analysis (not put in reports)."""
    return [p.id for p, leaked in zip(pairs, counts.leaked, strict=True) if leaked]


def leakage_metrics(counts: LeakageCounts) -> LeakageMetrics:
    """Leakage rates over all documents and over PII-bearing documents."""
    n_docs = len(counts.has_pii)
    n_pii = int(counts.has_pii.sum())
    leaked = int(counts.leaked.sum())
    agnostic = int(counts.unredacted_leaked.sum())
    return LeakageMetrics(
        n_documents=n_docs,
        n_pii_documents=n_pii,
        leaked_documents=leaked,
        leakage_rate=ratio(leaked, n_docs),
        leakage_rate_pii=ratio(leaked, n_pii),
        missed_spans=int(counts.missed.sum()),
        label_agnostic_leaked_documents=agnostic,
        label_agnostic_leakage_rate=ratio(agnostic, n_docs),
        label_agnostic_leakage_rate_pii=ratio(agnostic, n_pii),
        label_agnostic_missed_spans=int(counts.unredacted.sum()),
    )
