"""The foundation metrics of one model on one test split, reduced to what a site may send back.

A site scores every model of the cross-site round with this; the result (``ModelMetrics``)
holds aggregate figures and bootstrap intervals only, never text.
"""

from __future__ import annotations

import math

from protocol import Corpus, LabelMapping
from protocol.rounds import Estimate, ModelMetrics
from shared.metrics import BootstrapSettings, evaluate


def _estimate(value: float, interval: object) -> Estimate:
    low = getattr(interval, "low", value)
    high = getattr(interval, "high", value)
    clean = [v if math.isfinite(v) else value for v in (low, high)]
    return Estimate(value=value, low=clean[0], high=clean[1])


def evaluate_predictions(
    gold: Corpus, pred: Corpus, mapping: LabelMapping | None, n_bootstrap: int, seed: int
) -> ModelMetrics:
    """Token F1, span-overlap F1 and document leakage (with intervals), recall per label."""
    bootstrap = BootstrapSettings(n_resamples=n_bootstrap, seed=seed) if n_bootstrap else None
    report = evaluate(gold, pred, mapping, bootstrap)
    ci = report.confidence_intervals
    return ModelMetrics(
        token_f1=_estimate(report.token.micro.f1, ci.get("token.micro.f1")),
        span_overlap_f1=_estimate(report.overlap.micro.f1, ci.get("overlap.micro.f1")),
        document_leakage=_estimate(report.leakage.leakage_rate, ci.get("leakage.rate")),
        label_recall={label: s.recall for label, s in sorted(report.overlap.per_label.items())},
        n_documents=report.n_documents,
    )
