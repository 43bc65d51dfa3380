"""Safetensors checked by the format: every inconsistency a hand-made header can hold."""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import load, save

from shared.limits import LimitExceeded
from shared.safetensors_check import UnsafeWeights, check_safetensors


def raw(header: dict[str, Any], data: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def tensor(dtype: str, shape: list[Any], start: int, end: int) -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data_offsets": [start, end]}


BAD: list[tuple[str, bytes]] = [
    ("gap between tensors", raw({"a": tensor("F32", [1], 0, 4), "b": tensor("F32", [1], 8, 12)},
                                b"\0" * 12)),
    ("overlapping tensors", raw({"a": tensor("F32", [2], 0, 8), "b": tensor("F32", [2], 4, 12)},
                                b"\0" * 12)),
    ("bytes after the last tensor", raw({"a": tensor("F32", [1], 0, 4)}, b"\0" * 8)),
    ("size not dtype x shape", raw({"a": tensor("F32", [3], 0, 8)}, b"\0" * 8)),
    ("40 TB declared", raw({"a": tensor("F32", [10**13], 0, 4 * 10**13)}, b"\0" * 8)),
    ("unknown dtype", raw({"a": tensor("F128", [1], 0, 16)}, b"\0" * 16)),
    ("float in a shape", raw({"a": tensor("F32", [1.5], 0, 4)}, b"\0" * 4)),
    ("negative offset", raw({"a": tensor("F32", [1], -4, 0)}, b"")),
    ("boolean as an integer", raw({"a": tensor("F32", [True], 0, 4)}, b"\0" * 4)),
    ("extra entry key", raw({"a": {**tensor("F32", [1], 0, 4), "x": 1}}, b"\0" * 4)),
    ("header longer than the file", struct.pack("<Q", 10**6) + b"{}"),
    ("pickle bytes", b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94."),
    ("shorter than 8 bytes", b"\x01\x02"),
    ("NaN in F32", save({"a": np.array([1.0, np.nan], dtype=np.float32)})),
    ("inf in F16", save({"a": np.array([np.inf], dtype=np.float16)})),
    ("NaN in BF16", raw({"a": tensor("BF16", [1], 0, 2)}, struct.pack("<H", 0x7FC0))),
    ("-inf in F64", save({"a": np.array([-np.inf])})),
]  # fmt: skip


@pytest.mark.parametrize(("case", "data"), BAD, ids=[c[0] for c in BAD])
def test_inconsistent_or_non_finite_files_are_refused(case: str, data: bytes) -> None:
    with pytest.raises(UnsafeWeights):
        check_safetensors(data)


def test_a_nested_header_is_refused_before_it_is_parsed() -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(LimitExceeded):
        check_safetensors(struct.pack("<Q", len(nested)) + nested)


def test_files_the_library_writes_pass_and_agree_with_its_reader() -> None:
    arrays = {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3),
        "ids": np.arange(4, dtype=np.int64),
        "half": np.ones(3, dtype=np.float16),
        "empty": np.zeros((0, 4), dtype=np.float32),
    }
    data = save(arrays, metadata={"format": "pt"})
    entries = check_safetensors(data)
    assert {e.name: e.shape for e in entries} == {k: v.shape for k, v in arrays.items()}
    assert set(load(data)) == set(arrays)
