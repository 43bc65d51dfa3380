"""Mean ± SD and the bootstrap CI of the mean over repeats, against a slow reference."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from shared.metrics.repeats import summarise_repeats


def slow_interval(values: list[float], n: int, seed: int) -> tuple[float, float]:
    """One resample at a time, the mean by hand, the 2.5th/97.5th percentiles."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(values), size=(n, len(values)))
    means = sorted(sum(values[i] for i in row) / len(values) for row in picks)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


@pytest.mark.parametrize("values", [[0.97, 0.975, 0.98], [0.1, 0.5, 0.3, 0.9, 0.2], [0.0, 1.0]])
def test_mean_sd_and_interval_match_the_reference(values: list[float]) -> None:
    summary = summarise_repeats(values, n_resamples=500, seed=4)
    assert summary.mean == pytest.approx(statistics.fmean(values))
    assert summary.sd == pytest.approx(statistics.stdev(values))  # sample SD, ddof=1
    assert (summary.low, summary.high) == pytest.approx(slow_interval(values, 500, 4))
    assert min(values) <= summary.low <= summary.mean <= summary.high <= max(values)


def test_one_run_has_no_spread_and_none_is_an_error() -> None:
    one = summarise_repeats([0.42])
    assert (one.n, one.mean, one.sd, one.low, one.high) == (1, 0.42, 0.0, 0.42, 0.42)
    with pytest.raises(ValueError, match="fix"):
        summarise_repeats([])
