"""Bootstrap over documents: a fast matrix path checked against a plain resampling loop."""

from __future__ import annotations

import numpy as np
import pytest

import shared.metrics.bootstrap as bootstrap
from shared.metrics.bootstrap import (
    BootstrapSettings,
    bootstrap_intervals,
    resampled_sums,
    safe_divide,
)

RNG = np.random.default_rng(7)
TP = RNG.integers(0, 10, size=80)
PRED = TP + RNG.integers(0, 4, size=80)
GOLD = TP + RNG.integers(0, 5, size=80)
COLUMNS = {"tp": TP, "pred": PRED, "gold": GOLD}
STATS = {
    "precision": lambda c: safe_divide(c["tp"], c["pred"]),
    "f1": lambda c: safe_divide(2 * c["tp"], c["pred"] + c["gold"]),
}


def test_sums_equal_a_plain_resampling_loop() -> None:
    counts = np.stack([TP, PRED, GOLD], axis=1)
    picks = np.random.default_rng(3).integers(0, len(TP), size=(50, len(TP)))
    oracle = np.array([counts[row].sum(axis=0) for row in picks])
    assert np.array_equal(resampled_sums(counts, 50, seed=3), oracle)


def test_blocks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = np.stack([TP, PRED], axis=1)
    whole = resampled_sums(counts, 50, seed=11)
    monkeypatch.setattr(bootstrap, "BLOCK_CELLS", 7 * len(TP))  # blocks of 7 resamples
    assert np.array_equal(resampled_sums(counts, 50, seed=11), whole)


def test_seeded_intervals_are_deterministic_and_contain_the_estimate() -> None:
    settings = BootstrapSettings(n_resamples=400, seed=5)
    first = bootstrap_intervals(COLUMNS, STATS, settings)
    assert first == bootstrap_intervals(COLUMNS, STATS, settings)
    assert first != bootstrap_intervals(COLUMNS, STATS, BootstrapSettings(n_resamples=400, seed=6))
    for name, ci in first.items():
        assert ci.low <= ci.estimate <= ci.high, name
        assert ci.low < ci.high
    assert first["precision"].estimate == pytest.approx(TP.sum() / PRED.sum())


def test_wider_confidence_gives_a_wider_interval() -> None:
    narrow = bootstrap_intervals(COLUMNS, STATS, BootstrapSettings(n_resamples=300, confidence=0.5))
    wide = bootstrap_intervals(COLUMNS, STATS, BootstrapSettings(n_resamples=300, confidence=0.99))
    assert wide["f1"].high - wide["f1"].low > narrow["f1"].high - narrow["f1"].low


def test_no_documents_gives_no_intervals() -> None:
    empty = {k: np.zeros(0, dtype=np.int64) for k in COLUMNS}
    assert bootstrap_intervals(empty, STATS, BootstrapSettings()) == {}


def test_settings_validate_their_fields() -> None:
    with pytest.raises(ValueError, match="n_resamples"):
        BootstrapSettings(n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        BootstrapSettings(confidence=1.5)


def test_resamples_where_a_metric_is_undefined_are_left_out() -> None:
    # one document of five holds the only span: resamples that miss it have no F1 at all
    columns = {"tp": np.array([0, 0, 0, 0, 1]), "pred": np.array([0, 0, 0, 0, 1])}
    columns["gold"] = columns["pred"]
    ci = bootstrap_intervals(columns, STATS, BootstrapSettings(n_resamples=200, seed=2))["f1"]
    assert (ci.estimate, ci.low, ci.high) == (1.0, 1.0, 1.0)
    # P(resample misses document 5) = 0.8**5, about 0.33 of 200
    assert 40 < ci.n_undefined < 95
