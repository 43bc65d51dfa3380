"""One metric over repeated runs (seeds or re-splits): mean, sample SD, 95% bootstrap CI.

The seed papers report ``mean ± SD`` over five folds or seeds; the interval here is the
seeded percentile bootstrap of the mean over the repeats (resampling runs, not documents).
With one run the SD is 0 and the interval collapses onto the value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from shared.metrics.bootstrap import percentile_interval


class RepeatSummary(BaseModel):
    """``mean ± sd`` and a bootstrap interval of the mean over ``n`` repeats."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    mean: float
    sd: float
    low: float
    high: float
    values: tuple[float, ...]


def summarise_repeats(
    values: Sequence[float], n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> RepeatSummary:
    """Mean, sample SD (ddof=1; 0 for one value) and the percentile-bootstrap CI of the mean."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no values to summarise; fix: pass at least one run's figure")
    mean = float(data.mean())
    sd = float(data.std(ddof=1)) if data.size > 1 else 0.0
    if data.size == 1:
        low = high = mean
    else:
        rng = np.random.default_rng(seed)
        picks = rng.integers(0, data.size, size=(n_resamples, data.size))
        low, high = percentile_interval(data[picks].mean(axis=1), confidence)
    return RepeatSummary(
        n=int(data.size), mean=mean, sd=sd, low=low, high=high, values=tuple(data.tolist())
    )
