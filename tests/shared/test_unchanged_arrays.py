"""A FedAvg reply without the tensors the site left unchanged, and the whole model rebuilt from
it at the coordinator (shared/transport.py)."""

from __future__ import annotations

import numpy as np
from flwr.app import Array, ArrayRecord
from hypothesis import given
from hypothesis import strategies as st

from shared.transport import unchanged_arrays, with_unchanged, without


def record(**arrays: np.ndarray) -> ArrayRecord:
    return ArrayRecord({k: Array.from_numpy_ndarray(v) for k, v in arrays.items()})


GLOBAL = record(
    embeddings=np.arange(12, dtype=np.float32).reshape(3, 4),
    dense=np.ones((4, 2), dtype=np.float32),
    bias=np.zeros(2, dtype=np.float32),
    step=np.array([7], dtype=np.int64),
)


def trained(**changes: np.ndarray) -> ArrayRecord:
    arrays = {k: GLOBAL[k].numpy().copy() for k in GLOBAL}
    return record(**{**arrays, **changes})


def test_only_byte_identical_arrays_are_unchanged() -> None:
    new = trained(
        dense=np.full((4, 2), 1.5, dtype=np.float32),
        bias=np.zeros(2, dtype=np.float64),  # same values, other dtype: changed
    )
    assert unchanged_arrays(new, GLOBAL) == ("embeddings", "step")
    one_bit = trained(embeddings=np.nextafter(GLOBAL["embeddings"].numpy(), 100))
    assert "embeddings" not in unchanged_arrays(one_bit, GLOBAL)


def test_the_reply_rebuilds_the_trained_model_in_the_global_order() -> None:
    new = trained(dense=np.full((4, 2), 2.0, dtype=np.float32))
    unchanged = unchanged_arrays(new, GLOBAL)
    sent = without(new, unchanged)
    assert list(sent.keys()) == ["dense"]
    whole = with_unchanged(sent, GLOBAL, unchanged)
    assert whole is not None and list(whole.keys()) == list(GLOBAL.keys())
    for name in GLOBAL:
        np.testing.assert_array_equal(whole[name].numpy(), new[name].numpy())


def test_names_that_do_not_add_up_to_the_global_model_do_not_fit() -> None:
    new = trained(dense=np.full((4, 2), 2.0, dtype=np.float32))
    sent = without(new, ("embeddings", "bias", "step"))
    assert with_unchanged(sent, GLOBAL, ("embeddings", "bias")) is None  # step neither
    assert with_unchanged(sent, GLOBAL, ("embeddings", "bias", "step", "step")) is None
    assert with_unchanged(sent, GLOBAL, ("embeddings", "bias", "step", "other")) is None
    assert with_unchanged(sent, GLOBAL, ("embeddings", "bias", "step", "dense")) is None
    assert with_unchanged(new, GLOBAL, ()) is not None  # an old site sends everything


@given(st.lists(st.booleans(), min_size=4, max_size=4))
def test_any_split_of_changed_and_unchanged_round_trips(changed: list[bool]) -> None:
    names = list(GLOBAL.keys())
    changes = {
        n: GLOBAL[n].numpy() + np.ones_like(GLOBAL[n].numpy())
        for n, c in zip(names, changed, strict=True)
        if c
    }
    new = trained(**changes)
    unchanged = unchanged_arrays(new, GLOBAL)
    assert set(unchanged) == {n for n, c in zip(names, changed, strict=True) if not c}
    whole = with_unchanged(without(new, unchanged), GLOBAL, unchanged)
    assert whole is not None
    for name in names:
        np.testing.assert_array_equal(whole[name].numpy(), new[name].numpy())
