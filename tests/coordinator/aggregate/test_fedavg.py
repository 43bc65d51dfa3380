"""FedAvg: the example-weighted mean, checked by hand; replies that do not fit are caught."""

from __future__ import annotations

import numpy as np
import pytest
from flwr.app import Array, ArrayRecord

from coordinator.aggregate.fedavg import fits, weighted_average


def record(**arrays: np.ndarray) -> ArrayRecord:
    return ArrayRecord({k: Array.from_numpy_ndarray(v) for k, v in arrays.items()})


def test_weighted_mean_matches_hand_computation() -> None:
    a = record(w=np.array([1.0, 2.0], dtype=np.float32), step=np.array([3]))
    b = record(w=np.array([4.0, 8.0], dtype=np.float32), step=np.array([9]))
    out = weighted_average([(a, 1), (b, 2)])
    np.testing.assert_allclose(out["w"].numpy(), [(1 + 2 * 4) / 3, (2 + 2 * 8) / 3], rtol=1e-6)
    assert out["w"].numpy().dtype == np.float32
    assert out["step"].numpy().tolist() == [3]  # integer buffers are not averaged


def test_nothing_to_average_is_an_error() -> None:
    with pytest.raises(ValueError, match="nothing to average"):
        weighted_average([(record(w=np.zeros(2)), 0)])


def test_fits_checks_names_shapes_and_dtypes() -> None:
    ref = record(w=np.zeros((2, 2), dtype=np.float32))
    assert fits(record(w=np.ones((2, 2), dtype=np.float32)), ref)
    assert not fits(record(w=np.ones((2, 3), dtype=np.float32)), ref)
    assert not fits(record(w=np.ones((2, 2), dtype=np.float64)), ref)
    assert not fits(record(v=np.ones((2, 2), dtype=np.float32)), ref)
