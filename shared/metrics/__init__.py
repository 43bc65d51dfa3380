"""Predicted vs gold PII spans: token, span and leakage metrics, with bootstrap intervals.

``evaluate(gold, pred)`` is the one entry point the CLI, the annotator gate and the
coordinator's cross-site evaluation call. No ML framework is imported here.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from protocol import Corpus, LabelMapping
from protocol.evaluation import EvaluationReport
from shared.metrics.bootstrap import BootstrapSettings, Statistic, bootstrap_intervals, safe_divide
from shared.metrics.diagnostics import corpus_diagnostics
from shared.metrics.leakage import LeakageCounts, count_leakage, leakage_metrics
from shared.metrics.pairing import evaluation_labels, map_labels, pair_documents
from shared.metrics.spans import SpanCounts, count_spans, span_scores
from shared.metrics.tokens import TokenCounts, token_scores
from shared.provenance import config_digest, make_provenance


def _prf_statistics(prefix: str) -> dict[str, Statistic]:
    tp, pred, gold = f"{prefix}.tp", f"{prefix}.pred", f"{prefix}.gold"
    return {
        f"{prefix}.micro.precision": lambda c: safe_divide(c[tp], c[pred]),
        f"{prefix}.micro.recall": lambda c: safe_divide(c[tp], c[gold]),
        f"{prefix}.micro.f1": lambda c: safe_divide(2 * c[tp], c[pred] + c[gold]),
    }


def _count_columns(
    tokens: TokenCounts, spans: SpanCounts, leakage: LeakageCounts
) -> dict[str, np.ndarray]:
    """Per-document count vectors that every bootstrapped metric is a function of."""
    pred, gold = spans.predicted.sum(axis=1), spans.gold.sum(axis=1)
    return {
        "token.tp": tokens.true_positives.sum(axis=1),
        "token.pred": tokens.predicted.sum(axis=1),
        "token.gold": tokens.gold.sum(axis=1),
        "exact.tp": spans.exact.sum(axis=1),
        "exact.pred": pred,
        "exact.gold": gold,
        "overlap.tp": spans.overlap.sum(axis=1),
        "overlap.pred": pred,
        "overlap.gold": gold,
        "docs": np.ones(len(leakage.has_pii), dtype=np.int64),
        "pii_docs": leakage.has_pii,
        "leaked": leakage.leaked,
        "agnostic_leaked": leakage.unredacted_leaked,
    }


def _statistics() -> dict[str, Statistic]:
    stats: dict[str, Statistic] = {}
    for prefix in ("token", "exact", "overlap"):
        stats.update(_prf_statistics(prefix))
    stats["leakage.rate"] = lambda c: safe_divide(c["leaked"], c["docs"])
    stats["leakage.rate_pii"] = lambda c: safe_divide(c["leaked"], c["pii_docs"])
    stats["leakage.label_agnostic_rate"] = lambda c: safe_divide(c["agnostic_leaked"], c["docs"])
    return stats


def document_counts(gold: Corpus, pred: Corpus) -> dict[str, np.ndarray]:
    """Per-document count vectors (token and span true positives, predicted, gold; leaked
    documents), in the order of ``gold``: every corpus figure is a function of them."""
    pairs = pair_documents(gold, pred)
    labels = evaluation_labels(pairs)
    _, token_counts = token_scores(pairs, labels)
    span_counts = count_spans(pairs, labels)
    return _count_columns(token_counts, span_counts, count_leakage(pairs, span_counts))


def evaluate(
    gold: Corpus,
    pred: Corpus,
    mapping: LabelMapping | None = None,
    bootstrap: BootstrapSettings | None = None,
    *,
    language: str | None = None,
    person_labels: Iterable[str] | None = None,
) -> EvaluationReport:
    """Every metric of ``pred`` against ``gold``; ``bootstrap=None`` skips the intervals.

    With a mapping, gold and predicted labels are first mapped onto its coarse scheme.
    """
    if mapping is not None:
        gold, pred = map_labels(gold, mapping), map_labels(pred, mapping)
    pairs = pair_documents(gold, pred)
    labels = evaluation_labels(pairs)
    token, token_counts = token_scores(pairs, labels)
    span_counts = count_spans(pairs, labels)
    exact, overlap = span_scores(span_counts)
    leakage_counts = count_leakage(pairs, span_counts)
    intervals = {}
    if bootstrap is not None:
        columns = _count_columns(token_counts, span_counts, leakage_counts)
        intervals = bootstrap_intervals(columns, _statistics(), bootstrap)
    persons = tuple(person_labels) if person_labels is not None else None
    gold_diagnostics = corpus_diagnostics(gold, person_labels=persons, language=language)
    settings = {
        "mapping": mapping.model_dump(mode="json") if mapping else None,
        "bootstrap": bootstrap.model_dump() if bootstrap else None,
        "language": gold_diagnostics.language,
        "person_labels": list(persons) if persons is not None else None,
    }
    return EvaluationReport(
        n_documents=len(pairs),
        labels=labels,
        label_mapping=mapping.name if mapping else None,
        token=token,
        exact=exact,
        overlap=overlap,
        leakage=leakage_metrics(leakage_counts),
        confidence_intervals=intervals,
        gold_diagnostics=gold_diagnostics,
        pred_diagnostics=corpus_diagnostics(pred, person_labels=persons, diversity=False),
        provenance=make_provenance(
            config_digest=config_digest(settings),
            parents=tuple(
                p for p in (gold.provenance.source_sha256, pred.provenance.source_sha256) if p
            ),
        ),
    )


__all__ = ["BootstrapSettings", "EvaluationReport", "document_counts", "evaluate"]
