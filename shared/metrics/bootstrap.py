"""Seeded percentile-bootstrap confidence intervals over documents.

Every metric here is a function of per-document counts summed over the corpus (true
positives, predicted and gold spans, leaked documents ...). A resample of documents with
replacement is therefore a vector of multiplicities, and the summed counts of all resamples
are one matrix product: ``multiplicities (R x D) @ counts (D x K)``. Resamples are drawn in
blocks so that memory stays bounded on large corpora.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from protocol.evaluation import ConfidenceInterval

Statistic = Callable[[Mapping[str, np.ndarray]], np.ndarray]
"""Maps summed count columns (each shape (R,)) to metric values (shape (R,)); NaN where the
metric is undefined (a zero denominator, e.g. a resample without any gold span)."""

BLOCK_CELLS = 4_000_000


class BootstrapSettings(BaseModel):
    """How many document resamples to draw, from which seed, for which coverage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_resamples: int = Field(default=1000, ge=1)
    seed: int = 0
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)


def resampled_sums(counts: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Column sums of ``counts`` (documents x K) over ``n_resamples`` document resamples."""
    n_docs = counts.shape[0]
    rng = np.random.default_rng(seed)
    block = max(1, min(n_resamples, BLOCK_CELLS // max(n_docs, 1)))
    sums = []
    for done in range(0, n_resamples, block):
        size = min(block, n_resamples - done)
        picks = rng.integers(0, n_docs, size=(size, n_docs))
        flat = (picks + np.arange(size)[:, None] * n_docs).ravel()
        multiplicity = np.bincount(flat, minlength=size * n_docs).reshape(size, n_docs)
        sums.append(multiplicity @ counts)
    return np.concatenate(sums, axis=0)


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central ``confidence`` share of the bootstrap distribution."""
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_intervals(
    columns: Mapping[str, np.ndarray],
    statistics: Mapping[str, Statistic],
    settings: BootstrapSettings,
) -> dict[str, ConfidenceInterval]:
    """A confidence interval for each statistic; empty when there are no documents.

    Resamples where a statistic is undefined are left out of its interval and counted in
    ``n_undefined``; the estimate itself follows the point-estimate convention (0.0).

    ``columns`` holds one per-document count vector per name (all the same length).
    """
    names = list(columns)
    if not names or len(columns[names[0]]) == 0:
        return {}
    matrix = np.stack([np.asarray(columns[n], dtype=np.float64) for n in names], axis=1)
    full = {n: matrix[:, k].sum(keepdims=True) for k, n in enumerate(names)}
    sums = resampled_sums(matrix, settings.n_resamples, settings.seed)
    resampled = {n: sums[:, k] for k, n in enumerate(names)}
    intervals = {}
    for name, statistic in statistics.items():
        estimate = float(np.nan_to_num(statistic(full)[0], nan=0.0))
        values = statistic(resampled)
        defined = values[~np.isnan(values)]
        low, high = (
            percentile_interval(defined, settings.confidence)
            if len(defined)
            else (estimate, estimate)
        )
        intervals[name] = ConfidenceInterval(
            estimate=estimate,
            low=low,
            high=high,
            confidence=settings.confidence,
            n_resamples=settings.n_resamples,
            n_undefined=len(values) - len(defined),
            seed=settings.seed,
        )
    return intervals


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Elementwise ratio, NaN where the denominator is zero (the metric is undefined there)."""
    out = np.full(np.shape(numerator), np.nan, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
