"""AUC, TPR at a fixed FPR and exposure against brute-force definitions and scikit-learn."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score, roc_curve

from site_agent.audit.membership_metrics import (
    auc,
    auc_rows,
    exposure,
    separation,
    tpr_at_fpr,
    tpr_at_fpr_rows,
)

scores = st.lists(st.integers(-5, 5).map(float), min_size=1, max_size=30)


def pairwise_auc(members: list[float], non_members: list[float]) -> float:
    """Every (member, non-member) pair: 1 if the member scores higher, 1/2 on a tie."""
    wins = sum(
        1.0 if m > n else 0.5 if m == n else 0.0 for m, n in itertools.product(members, non_members)
    )
    return wins / (len(members) * len(non_members))


def brute_tpr(members: list[float], non_members: list[float], fpr: float) -> float:
    """Try every threshold ("score > t is a member"); keep the best TPR with FPR <= fpr."""
    best = 0.0
    for t in [*members, *non_members, -np.inf]:
        false_rate = sum(n > t for n in non_members) / len(non_members)
        if false_rate <= fpr + 1e-12:
            best = max(best, sum(m > t for m in members) / len(members))
    return best


@settings(max_examples=200, deadline=None)
@given(scores, scores)
def test_auc_is_the_pairwise_win_rate(members: list[float], non_members: list[float]) -> None:
    assert auc(np.array(members), np.array(non_members)) == pytest.approx(
        pairwise_auc(members, non_members)
    )


@settings(max_examples=100, deadline=None)
@given(scores, scores)
def test_auc_agrees_with_sklearn(members: list[float], non_members: list[float]) -> None:
    labels = [1] * len(members) + [0] * len(non_members)
    expected = roc_auc_score(labels, members + non_members)
    assert auc(np.array(members), np.array(non_members)) == pytest.approx(expected)


@settings(max_examples=200, deadline=None)
@given(scores, scores, st.sampled_from([0.0, 0.01, 0.1, 0.25, 0.5, 1.0]))
def test_tpr_at_fpr_is_the_best_allowed_threshold(
    members: list[float], non_members: list[float], fpr: float
) -> None:
    assert tpr_at_fpr(np.array(members), np.array(non_members), fpr) == pytest.approx(
        brute_tpr(members, non_members, fpr)
    )


@settings(max_examples=100, deadline=None)
@given(scores, scores)
def test_tpr_at_fpr_lies_on_sklearns_roc_curve(
    members: list[float], non_members: list[float]
) -> None:
    labels = [1] * len(members) + [0] * len(non_members)
    false_rates, true_rates, _ = roc_curve(labels, members + non_members, drop_intermediate=False)
    for fpr in (0.01, 0.2, 0.5):
        # sklearn calls score >= t a member; the best point with FPR <= fpr that no tie straddles
        allowed = [t for f, t in zip(false_rates, true_rates, strict=True) if f <= fpr + 1e-12]
        assert tpr_at_fpr(np.array(members), np.array(non_members), fpr) == pytest.approx(
            max(allowed)
        )


def test_row_versions_equal_the_single_ones() -> None:
    rng = np.random.default_rng(3)
    members, non_members = rng.normal(0.3, 1, (7, 40)), rng.normal(0, 1, (7, 50))
    assert auc_rows(members, non_members) == pytest.approx(
        [auc(m, n) for m, n in zip(members, non_members, strict=True)]
    )
    assert tpr_at_fpr_rows(members, non_members, 0.1) == pytest.approx(
        [tpr_at_fpr(m, n, 0.1) for m, n in zip(members, non_members, strict=True)]
    )


@settings(max_examples=200, deadline=None)
@given(scores, st.lists(st.integers(-5, 5).map(float), min_size=1, max_size=40))
def test_exposure_is_log_rank_among_candidates(true: list[float], candidates: list[float]) -> None:
    got = exposure(np.array(true), np.array(candidates))
    for value, score in zip(got, true, strict=True):
        rank = 1 + sum(c > score for c in candidates) + sum(c == score for c in candidates) / 2
        assert value == pytest.approx(np.log2(len(candidates) + 1) - np.log2(rank))


def test_exposure_is_largest_for_a_secret_above_every_candidate() -> None:
    assert exposure(np.array([2000.0]), np.arange(1023.0))[0] == pytest.approx(10.0)


def test_separation_intervals_cover_the_estimate_and_follow_the_seed() -> None:
    rng = np.random.default_rng(0)
    members, non_members = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    first = separation(members, non_members, samples=300, confidence=0.95, seed=1)
    again = separation(members, non_members, samples=300, confidence=0.95, seed=1)
    assert first == again
    assert first.auc_ci[0] < first.auc < first.auc_ci[1]
    assert 0.7 < first.auc < 0.84  # the normal model's AUC is Phi(1 / sqrt 2) = 0.76
    low, high = first.tpr_ci["tpr_at_1pct_fpr"]
    assert low <= first.tpr["tpr_at_1pct_fpr"] <= high
