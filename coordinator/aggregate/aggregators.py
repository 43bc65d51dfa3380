"""How a FedAvg round combines the sites' updates into the next global model.

One registry entry per rule (``fedavg-aggregator`` in the run config):

- ``weighted-mean``: FedAvg proper, each float tensor the mean of the updates weighted by the
  sites' (capped) example counts. Efficient with honest sites; one site's share of the result
  is its share of the weights.
- ``median``: the coordinate-wise median of the updates, weights ignored. While most sites are
  honest, every coordinate of the result lies within the range of honest values, whatever the
  others send.
- ``trimmed-mean``: the coordinate-wise mean after dropping the highest and lowest values of
  each coordinate (one on each side per five updates, at least one once there are three),
  weights ignored.

Integer buffers are never averaged: they are taken from the first update.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from flwr.app import Array, ArrayRecord

from coordinator.aggregate.weighted_mean import weighted_mean
from shared.registry import Registry

Combine = Callable[[Sequence[np.ndarray], Sequence[float]], np.ndarray]


@dataclass(frozen=True)
class Aggregator:
    """One rule: ``combine`` maps the sites' arrays of one tensor and their weights to one
    array (float64); ``uses_weights`` says whether example counts matter to it."""

    combine: Combine
    uses_weights: bool
    summary: str


AGGREGATORS: Registry[Aggregator] = Registry(
    "FedAvg aggregator", fix="set fedavg-aggregator to one of them"
)


def _weighted_mean(arrays: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    return weighted_mean(list(zip(arrays, weights, strict=True)), np.dtype(np.float64))


def _median(arrays: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    return np.median(np.stack([a.astype(np.float64) for a in arrays]), axis=0)


def trimmed_count(n: int) -> int:
    """Values dropped on each side of a coordinate among ``n`` updates."""
    return max(1, n // 5) if n >= 3 else 0


def _trimmed_mean(arrays: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    stacked = np.sort(np.stack([a.astype(np.float64) for a in arrays]), axis=0)
    cut = trimmed_count(len(arrays))
    return stacked[cut : len(arrays) - cut].mean(axis=0)


AGGREGATORS.add("weighted-mean", Aggregator(_weighted_mean, True, "example-weighted mean (FedAvg)"))
AGGREGATORS.add("median", Aggregator(_median, False, "coordinate-wise median"))
AGGREGATORS.add("trimmed-mean", Aggregator(_trimmed_mean, False, "coordinate-wise trimmed mean"))


def aggregate(
    name: str, updates: Sequence[tuple[ArrayRecord, float]], setting: str = ""
) -> ArrayRecord:
    """The updates combined by the aggregator ``name``, each tensor in its own dtype."""
    rule = AGGREGATORS.get(name, setting=setting)
    weights = [w for _, w in updates]
    if not updates or (rule.uses_weights and sum(weights) <= 0):
        raise ValueError("nothing to average: no update with training examples")
    first = updates[0][0]
    combined = ArrayRecord()
    for key in first:
        arrays = [record[key].numpy() for record, _ in updates]
        if not np.issubdtype(arrays[0].dtype, np.floating):
            combined[key] = Array.from_numpy_ndarray(arrays[0])
            continue
        result = rule.combine(arrays, weights).astype(arrays[0].dtype)
        combined[key] = Array.from_numpy_ndarray(np.ascontiguousarray(result))
    return combined
