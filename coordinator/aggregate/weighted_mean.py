"""The one weighted average of the coordinator: FedAvg rounds and the exported-encoder start.

Both weigh a site's tensor by its number of examples (documents); both average in float64 and
store the result in the model's own dtype.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def weighted_mean(
    weighted: Sequence[tuple[np.ndarray, float]], dtype: np.dtype | None = None
) -> np.ndarray:
    """Mean of the arrays, each weighted by its count, in ``dtype`` (default: the first array's)."""
    total = sum(n for _, n in weighted)
    if not weighted or total <= 0:
        raise ValueError("nothing to average: no array with a positive weight")
    mean = sum(array.astype(np.float64) * (n / total) for array, n in weighted)
    return np.asarray(mean).astype(dtype if dtype is not None else weighted[0][0].dtype)
