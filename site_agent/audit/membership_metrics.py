"""How well an attack score separates members from non-members: ROC AUC, TPR at a fixed low
FPR, their bootstrap confidence intervals, and the Secret Sharer's exposure.

Scores are "higher means more likely a member". Every function works on rows, so the bootstrap
evaluates all its resamples in one numpy call; ``tests/.../test_membership_metrics.py`` checks
each against a brute-force definition and against scikit-learn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata


def auc_rows(members: np.ndarray, non_members: np.ndarray) -> np.ndarray:
    """ROC AUC of each row: the chance that a random member outscores a random non-member
    (ties count one half), by the Mann-Whitney rank sum. Shapes (B, n1) and (B, n0)."""
    n1, n0 = members.shape[1], non_members.shape[1]
    ranks = rankdata(np.concatenate([members, non_members], axis=1), axis=1)
    member_ranks = ranks[:, :n1].sum(axis=1)
    return (member_ranks - n1 * (n1 + 1) / 2) / (n1 * n0)


def tpr_at_fpr_rows(members: np.ndarray, non_members: np.ndarray, fpr: float) -> np.ndarray:
    """The highest true-positive rate of any threshold whose false-positive rate is <= ``fpr``
    (a score above the threshold is called a member), per row."""
    allowed = int(np.floor(fpr * non_members.shape[1] + 1e-9))  # false positives allowed
    if allowed >= non_members.shape[1]:
        return np.ones(members.shape[0])
    ordered = -np.sort(-non_members, axis=1)
    threshold = ordered[:, allowed]  # the (allowed+1)-th highest non-member score
    return (members > threshold[:, None]).mean(axis=1)


def auc(members: np.ndarray, non_members: np.ndarray) -> float:
    return float(auc_rows(np.asarray(members)[None, :], np.asarray(non_members)[None, :])[0])


def tpr_at_fpr(members: np.ndarray, non_members: np.ndarray, fpr: float) -> float:
    rows = np.asarray(members)[None, :], np.asarray(non_members)[None, :]
    return float(tpr_at_fpr_rows(*rows, fpr)[0])


@dataclass(frozen=True)
class Separation:
    """One attack's figures with their bootstrap intervals."""

    auc: float
    auc_ci: tuple[float, float]
    tpr: dict[str, float]
    tpr_ci: dict[str, tuple[float, float]]

    def figures(self) -> dict[str, float]:
        out = {"auc": self.auc, "auc_ci_low": self.auc_ci[0], "auc_ci_high": self.auc_ci[1]}
        for name, value in self.tpr.items():
            out[name] = value
            out[f"{name}_ci_low"], out[f"{name}_ci_high"] = self.tpr_ci[name]
        return out


FPR_LEVELS = {"tpr_at_1pct_fpr": 0.01, "tpr_at_0_1pct_fpr": 0.001}


def separation(
    members: np.ndarray,
    non_members: np.ndarray,
    *,
    samples: int,
    confidence: float,
    seed: int,
) -> Separation:
    """AUC and TPR at 1% and 0.1% FPR, with percentile intervals from ``samples`` stratified
    bootstrap resamples (members and non-members resampled apart, with a fixed seed)."""
    members, non_members = np.asarray(members, float), np.asarray(non_members, float)
    rng = np.random.default_rng(seed)
    boot_m = members[rng.integers(0, len(members), (samples, len(members)))]
    boot_n = non_members[rng.integers(0, len(non_members), (samples, len(non_members)))]
    tail = (1 - confidence) / 2 * 100

    def interval(values: np.ndarray) -> tuple[float, float]:
        low, high = np.percentile(values, [tail, 100 - tail])
        return float(low), float(high)

    return Separation(
        auc=auc(members, non_members),
        auc_ci=interval(auc_rows(boot_m, boot_n)),
        tpr={k: tpr_at_fpr(members, non_members, f) for k, f in FPR_LEVELS.items()},
        tpr_ci={k: interval(tpr_at_fpr_rows(boot_m, boot_n, f)) for k, f in FPR_LEVELS.items()},
    )


def exposure(true_scores: np.ndarray, candidate_scores: np.ndarray) -> np.ndarray:
    """Secret Sharer exposure of each true secret among the same random candidates:
    log2(R + 1) - log2(rank), rank 1 = scored above every candidate (ties share the mid-rank).
    About 1.44 on average when the score knows nothing; log2(R + 1) at most."""
    ordered = np.sort(np.asarray(candidate_scores, float))
    scores = np.asarray(true_scores, float)
    above = len(ordered) - np.searchsorted(ordered, scores, side="right")
    tied = np.searchsorted(ordered, scores, side="right") - np.searchsorted(
        ordered, scores, side="left"
    )
    rank = 1 + above + tied / 2
    return np.log2(len(ordered) + 1) - np.log2(rank)
