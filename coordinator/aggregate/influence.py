"""What bounds one site's influence on a FedAvg round, judged against the other sites.

A site controls its update and, through its bundle, its document count. Two checks relative to
the round's other sites (not to the global model, whose norm an attacker can stay under):

1. **Weight cap.** A site's weight is its verified example count, at most
   ``fedavg-max-weight-ratio`` times the median count of the *other* sites of the round: a
   bundle of 100,000 documents weighs at most twice an honest site's 42 by default.
2. **Norm outliers.** For the whole model and for each float tensor, a site's step (the L2 norm
   of its update minus the global model) may be at most ``fedavg-max-norm-ratio`` times the
   median step of the round's updates. A rewrite of the classification head alone is far larger
   in that tensor than any honest site's local epoch. The median speaks for the honest majority,
   so the check needs three updates or more; with two there is no majority to compare with.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

import numpy as np
from flwr.app import ArrayRecord

WHOLE_MODEL = "the whole model"
MIN_UPDATES_FOR_MEDIAN = 3
# a tensor the honest majority barely moves: steps below this fraction of the median whole-model
# step are never called outliers (float noise is not an attack)
NEGLIGIBLE_STEP = 1e-3


def capped_weights(examples: Mapping[str, int], max_ratio: float) -> dict[str, float]:
    """Each site's weight: its example count, at most ``max_ratio`` times the median count of
    the other sites (a lone site keeps its count)."""
    weights = {}
    for site, count in examples.items():
        others = [n for other, n in examples.items() if other != site]
        cap = max_ratio * statistics.median(others) if others else float(count)
        weights[site] = float(min(count, cap))
    return weights


def step_norms(update: ArrayRecord, reference: ArrayRecord) -> dict[str, float]:
    """L2 norm of the step of every float tensor, and of the whole model (``WHOLE_MODEL``)."""
    steps: dict[str, float] = {}
    for key in reference:
        before = reference[key].numpy()
        if np.issubdtype(before.dtype, np.floating):
            diff = update[key].numpy().astype(np.float64) - before.astype(np.float64)
            steps[key] = float(np.sqrt(np.sum(diff * diff)))
    steps[WHOLE_MODEL] = float(np.sqrt(sum(s * s for s in steps.values())))
    return steps


def norm_outliers(steps: Mapping[str, Mapping[str, float]], max_ratio: float) -> dict[str, str]:
    """{site: why} for each site whose step, whole or in one tensor, is over ``max_ratio``
    times the round's median step there; empty below ``MIN_UPDATES_FOR_MEDIAN`` updates."""
    if len(steps) < MIN_UPDATES_FOR_MEDIAN:
        return {}
    keys = list(next(iter(steps.values())))
    medians = {key: statistics.median(s[key] for s in steps.values()) for key in keys}
    floor = NEGLIGIBLE_STEP * medians[WHOLE_MODEL]
    outliers: dict[str, str] = {}
    for site, site_steps in sorted(steps.items()):
        for key in [WHOLE_MODEL, *(k for k in keys if k != WHOLE_MODEL)]:
            step, median = site_steps[key], medians[key]
            if step > floor and step > max_ratio * median:
                what = key if key == WHOLE_MODEL else f"tensor {key!r}"
                outliers[site] = (
                    f"{what} moves by {step:.4g}, over {max_ratio} x the median step "
                    f"{median:.4g} of the round's {len(steps)} updates"
                )
                break
    return outliers
