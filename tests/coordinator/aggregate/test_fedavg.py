"""FedAvg: the aggregators and the influence caps checked by hand; replies that do not fit are
caught."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flwr.app import Array, ArrayRecord
from flwr.clientapp import ClientApp

from coordinator.aggregate.aggregators import aggregate
from coordinator.aggregate.fedavg import fits, weighted_average
from coordinator.aggregate.influence import capped_weights, norm_outliers, step_norms
from shared.errors import ConfigError


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


def test_robust_aggregators_match_hand_computation() -> None:
    ups = [record(w=np.array([v, -v], dtype=np.float32)) for v in (1.0, 2.0, 3.0, 100.0, 4.0)]
    weighted = [(u, 1.0) for u in ups]
    median = aggregate("median", weighted)["w"].numpy()
    np.testing.assert_allclose(median, [3.0, -3.0])
    trimmed = aggregate("trimmed-mean", weighted)["w"].numpy()  # 5 updates: one cut per side
    np.testing.assert_allclose(trimmed, [(2 + 3 + 4) / 3, -(2 + 3 + 4) / 3], rtol=1e-6)
    assert trimmed.dtype == np.float32
    with pytest.raises(ConfigError, match="allowed: \\['median', 'trimmed-mean', 'weighted-mean'"):
        aggregate("mean-of-my-choice", weighted)


def test_a_site_weight_is_capped_relative_to_the_others() -> None:
    assert capped_weights({"a": 42, "b": 40, "huge": 100_000}, 2.0) == {
        "a": 42.0,
        "b": 40.0,
        "huge": 2.0 * 41,  # twice the median of the other two
    }
    assert capped_weights({"alone": 7}, 2.0) == {"alone": 7.0}
    assert capped_weights({"a": 10, "b": 100}, 2.0) == {"a": 10.0, "b": 20.0}


def test_norm_outliers_are_judged_against_the_round_median() -> None:
    ref = record(body=np.zeros(4, dtype=np.float32), head=np.zeros(2, dtype=np.float32))

    def step(body: float, head: float) -> ArrayRecord:
        return record(body=np.full(4, body, np.float32), head=np.full(2, head, np.float32))

    honest = {s: step_norms(step(0.1 * (i + 1), 0.1), ref) for i, s in enumerate("abc")}
    assert norm_outliers(honest, 4.0) == {}
    head_only = {**honest, "x": step_norms(step(0.0, 0.5), ref)}  # small overall, 5x the head
    (why,) = norm_outliers(head_only, 4.0).values()
    assert list(norm_outliers(head_only, 4.0)) == ["x"] and "tensor 'head' moves by" in why
    assert norm_outliers({"a": honest["a"], "x": head_only["x"]}, 4.0) == {}  # no majority


def test_an_unknown_aggregator_stops_the_run_before_the_roll_call(tmp_path: Path) -> None:
    from coordinator.server_app import run_federation
    from coordinator.settings import FederationSettings
    from tests.coordinator.fake_grid import InProcessGrid
    from tests.coordinator.state import run_state

    defaults = run_state(tmp_path, {}).settings
    settings = FederationSettings.model_validate(
        {**defaults.model_dump(), "fedavg_aggregator": "krum"}
    )
    grid = InProcessGrid(ClientApp(), {})
    with pytest.raises(ConfigError, match=r"fedavg-aggregator = 'krum' is not a FedAvg aggreg"):
        run_federation(grid, settings)
    assert grid.sent == []
