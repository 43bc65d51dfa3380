"""What a site agrees to do for a coordinator: ``[federation.evaluation]`` and
``[federation.limits]`` of site.toml (leaf settings types; pydantic only).

The coordinator is not trusted with the test split. Scoring a model on it is a query about
private notes, so the evaluation policy says how many queries a run may make, which figures
come back and how coarse they are; the limits bound every number a coordinator message makes
the site act on. Both are safe by default; ``docs/federation.md`` states the guarantee.
"""

from __future__ import annotations

import math

from pydantic import Field

from protocol.base import ProtocolModel


class EvaluationPolicy(ProtocolModel):
    """``[federation.evaluation]``: what the site returns when the coordinator asks it to score
    models on its held-out test split.

    Every figure is rounded to a grid of ``grid`` (intervals collapse to the value unless
    ``intervals`` is on); a per-label recall is returned only for labels with at least
    ``min_support`` gold mentions, and nothing at all when the split has fewer than
    ``min_support`` gold spans or documents; at most ``max_models_per_run`` models (the site's
    own annotator included) are scored per federation run, each logged with its hash and the
    figures returned. See docs/federation.md for the bound this gives.
    """

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
        0.1,
        ge=0.0,
        le=1.0,
        description="every returned figure is rounded to a multiple of this (0: full precision)",
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

    def bound(self, n_labels: int) -> str:
        """The guarantee this policy gives for one run, in words (printed in the site's log)."""
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
            "hidden: one mention moves a figure by at most "
            f"{one_mention:.3f} < grid/2 = {self.grid / 2:.3f}, so a one-word tagger's figures "
            "round to the same value whether its word is a mention or not"
            if hidden
            else f"NOT hidden: one mention moves a figure by up to {one_mention:.3f} and the "
            f"grid is {self.grid} (need min_support > 4 / grid)"
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
