"""What a site agrees to do for a coordinator: ``[federation.evaluation]`` and
``[federation.limits]`` of site.toml (leaf settings types; pydantic only).

The coordinator is not trusted with the test split. Scoring a model on it is a query about
private notes, so the evaluation policy says how many queries a run may make, which figures
come back and how coarse they are; the limits bound every number a coordinator message makes
the site act on. Both are safe by default; ``docs/federation.md`` states the guarantee.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from protocol.base import ProtocolModel
from site_agent.federation.zcdp import epsilon_of, gaussian_sd, rho_of

NOISY_FIGURES = 3  # token F1, span-overlap F1, document leakage (noisy_figures.py)


class EvaluationPolicy(ProtocolModel):
    """``[federation.evaluation]``: what the site returns when the coordinator asks it to score
    models on its held-out test split.

    With ``mechanism = "gaussian"`` (the default) every figure returned is a note-averaged
    figure with Gaussian noise, and each model scored spends ``1 / lifetime_models`` of the
    test split's lifetime (``epsilon``, ``delta``) differential-privacy budget, kept in the
    ``ledger`` across runs and coordinators (``accountant.py``); per-label recall is not
    returned. ``mechanism = "none"`` returns exact figures, rounded only (no guarantee; for
    made-up demo splits). Either way nothing is scored when the split has fewer than
    ``min_support`` gold spans or documents, at most ``max_models_per_run`` models (the site's
    own annotator included) are scored per federation run, every figure is rounded to
    ``grid`` for presentation, and each model is logged with its hash and the figures
    returned. See docs/federation.md for the guarantee this gives.
    """

    mechanism: Literal["gaussian", "none"] = Field(
        "gaussian",
        description="gaussian: differentially private figures under a lifetime budget; none: "
        "exact figures, rounded only (no guarantee; made-up demo splits)",
    )
    epsilon: float = Field(
        8.0, gt=0, le=100, description="the test split's lifetime privacy budget (epsilon)"
    )
    delta: float = Field(
        1e-6, gt=0, lt=0.01, description="the test split's lifetime privacy budget (delta)"
    )
    lifetime_models: int = Field(
        48,
        ge=1,
        le=100_000,
        description="models the lifetime budget pays for; each one scored spends an equal "
        "share (fewer: less noise per figure, fewer models)",
    )
    ledger: str = Field(
        "federation/privacy-ledger.json",
        description="the privacy accountant's spend per test split, under the work dir "
        "(deleting it resets the budget)",
    )

    max_models_per_run: int = Field(
        24, ge=0, le=1000, description="models scored per federation run (the baseline counts)"
    )
    min_support: int = Field(
        50,
        ge=0,
        description="gold mentions a label (and spans and documents the split) needs before "
        "its figure is returned (0: every label, even one no gold span has)",
    )
    grid: float = Field(
        0.01,
        ge=0.0,
        le=1.0,
        description="every returned figure is rounded to a multiple of this (presentation "
        "only; 0: full precision)",
    )
    intervals: bool = Field(
        False,
        description="return bootstrap intervals (rounded too); off: low = high = the value, "
        "since a resample can repeat one note and its one mention",
    )
    log: str = Field(
        "federation/evaluation-log.jsonl",
        description="the site's log of every model scored (hash, figures), under the work dir",
    )

    def figures_per_model(self, n_labels: int) -> int:
        """How many numbers one scored model returns at most (value, low, high of three
        estimates when intervals are on, else the three values; one recall per label)."""
        return (9 if self.intervals else 3) + n_labels

    def grid_points(self) -> float:
        """How many values one returned figure can take (infinite at full precision)."""
        return math.floor(1 / self.grid) + 1 if self.grid > 0 else math.inf

    def bound(self, n_labels: int, n_documents: int = 0) -> str:
        """The guarantee this policy gives, in words (printed in the site's log and sent in
        every cross-site reply); ``n_documents``: the test split's notes (sets the noise)."""
        if self.mechanism == "gaussian":
            return self._dp_guarantee(n_documents)
        return "NO differential privacy (mechanism = none): " + self._rounding_bound(n_labels)

    def rho(self) -> float:
        """The lifetime budget in zCDP."""
        return rho_of(self.epsilon, self.delta)

    def rho_per_model(self) -> float:
        """What one scored model spends: an equal share of the lifetime budget."""
        return self.rho() / self.lifetime_models

    def noise_sd(self, n_documents: int) -> float:
        """The noise on each figure: sensitivity ``1 / n_documents`` (one note changes a
        note-averaged figure by at most that), the model's spend split evenly over its
        figures."""
        return gaussian_sd(1 / max(n_documents, 1), self.rho_per_model() / NOISY_FIGURES)

    def _dp_guarantee(self, n_documents: int) -> str:
        rho = self.rho()
        per_model = epsilon_of(self.rho_per_model(), self.delta)
        sd = self.noise_sd(n_documents) if n_documents else math.nan
        return (
            f"evaluation guarantee: ({self.epsilon:g}, {self.delta:g})-differential privacy "
            "for every note of the test split over the split's whole life (all runs and "
            f"coordinators together; zCDP rho = {rho:.4g}): {self.lifetime_models} models in "
            f"all, each spending an equal share (epsilon {per_model:.3g} alone), at most "
            f"{self.max_models_per_run} per run; each model returns note-averaged token F1, "
            f"span F1 and leakage with Gaussian noise of sd {sd:.3g} ({n_documents} notes), "
            f"rounded to {self.grid:g} for presentation only; no per-label recall"
        )

    def _rounding_bound(self, n_labels: int) -> str:
        points = self.grid_points()
        if math.isinf(points):
            bits = "unbounded (grid 0: full precision)"
        else:
            total = self.max_models_per_run * self.figures_per_model(n_labels)
            bits = f"at most {total * math.log2(points):.0f} bits"
        one_mention = min(1.0, 2 / (self.min_support + 1))
        labels = (
            "a single-mention label is never returned"
            if self.min_support >= 2
            else "a single-mention label IS returned"
        )
        hidden = self.grid > 0 and one_mention < self.grid / 2
        single = (
            "hidden from one query: one mention moves a figure by at most "
            f"{one_mention:.3f} < grid/2 = {self.grid / 2:.3f} (a coordinator that first moves "
            "a figure next to a rounding boundary still reads it)"
            if hidden
            else f"NOT hidden: one mention moves a figure by up to {one_mention:.3f} and the "
            f"grid is {self.grid}"
        )
        return (
            f"evaluation bound per run: {self.max_models_per_run} models x "
            f"{self.figures_per_model(n_labels)} figures on a grid of {self.grid}: {bits} about "
            f"the test split; per-label recall only for labels with >= {self.min_support} "
            f"mentions ({labels}); a single mention is {single}"
        )


class InstructionLimits(ProtocolModel):
    """``[federation.limits]``: the largest values a coordinator message may make the site act
    on; a message beyond one is refused with the code ``<field>_exceeded`` and a line in the
    site's log."""

    max_models: int = Field(16, ge=1, description="models in one cross-site message")
    max_model_mb: float = Field(
        2048.0, gt=0, description="one received model's weights and files, in MiB"
    )
    max_bootstrap: int = Field(1000, ge=0, description="bootstrap resamples per scored model")
    max_labels: int = Field(256, ge=1, description="labels in one instruction")
    max_local_epochs: int = Field(20, ge=1, description="FedAvg: local epochs per round")
    max_batch_size: int = Field(256, ge=1, description="FedAvg: batch size")
    max_learning_rate: float = Field(0.01, gt=0, description="FedAvg: learning rate")
