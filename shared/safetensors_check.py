"""Safetensors bytes checked as safetensors, before anything loads them.

A file named ``.safetensors`` may hold anything a site chose to sign: pickle bytes, a header
nested 100,000 deep, a tensor declared 40 TB long over a 100-byte buffer, or NaN weights that
FedAvg would average into every site's model. :func:`check_safetensors` reads the format by
its specification (an 8-byte little-endian header length, a JSON header, then the tensors'
bytes back to back) with the JSON caps of :mod:`shared.limits`, and raises
:class:`UnsafeWeights` naming the first tensor that does not fit. Nothing here imports an ML
library.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from shared.limits import JsonLimits, LimitExceeded, parse_json

# bytes per element of each dtype the format defines
DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip
# float dtypes: (unsigned view, mask of the exponent bits; all set means inf or NaN)
_NON_FINITE: dict[str, tuple[np.dtype[Any], int]] = {
    "F16": (np.dtype("<u2"), 0x7C00),
    "BF16": (np.dtype("<u2"), 0x7F80),
    "F32": (np.dtype("<u4"), 0x7F800000),
    "F64": (np.dtype("<u8"), 0x7FF0000000000000),
    "F8_E5M2": (np.dtype("u1"), 0x7C),
    "F8_E4M3": (np.dtype("u1"), 0x7F),  # E4M3 has NaN only (S.1111.111), no inf
}
HEADER_LIMITS = JsonLimits(max_bytes=16 * 1024 * 1024, max_depth=4, max_members=1_000_000)
MAX_TENSORS = 100_000
_NAME = re.compile(r"[\x20-\x7e]{1,300}")


class UnsafeWeights(ValueError):
    """Bytes that are not a consistent safetensors file, or weights that are not finite."""


@dataclass(frozen=True)
class TensorEntry:
    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int  # offsets into the data section
    end: int


def _entry(name: object, spec: object) -> TensorEntry:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UnsafeWeights(f"tensor name {str(name)[:40]!r} is not printable ASCII of 1-300")
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "data_offsets"}:
        raise UnsafeWeights(f"tensor {name!r}: entry is not {{dtype, shape, data_offsets}}")
    dtype, shape, offsets = spec["dtype"], spec["shape"], spec["data_offsets"]
    if dtype not in DTYPE_BYTES:
        raise UnsafeWeights(f"tensor {name!r}: dtype {str(dtype)[:20]!r} is not a safetensors one")
    ints = (*shape, *offsets) if isinstance(shape, list) and isinstance(offsets, list) else None
    if ints is None or len(offsets) != 2 or len(shape) > 8:
        raise UnsafeWeights(f"tensor {name!r}: shape or data_offsets is not a short integer list")
    if not all(type(v) is int and v >= 0 for v in ints):
        raise UnsafeWeights(f"tensor {name!r}: shape and offsets must be non-negative integers")
    start, end = offsets
    if end - start != math.prod(shape) * DTYPE_BYTES[dtype]:
        raise UnsafeWeights(
            f"tensor {name!r}: {end - start} bytes for {dtype} {shape} "
            f"(needs {math.prod(shape) * DTYPE_BYTES[dtype]})"
        )
    return TensorEntry(name, dtype, tuple(shape), start, end)


def read_header(
    data: bytes, limits: JsonLimits = HEADER_LIMITS, max_tensors: int = MAX_TENSORS
) -> tuple[int, list[TensorEntry]]:
    """The data section's offset and every tensor, in file order, once they are consistent:
    each size is its dtype times its shape, tensors lie back to back from offset 0 without
    overlap or gap, and the last one ends where the file ends."""
    if len(data) < 8:
        raise UnsafeWeights("shorter than the 8-byte header length")
    (length,) = struct.unpack("<Q", data[:8])
    if length > min(limits.max_bytes, len(data) - 8):
        raise UnsafeWeights(f"header length {length} exceeds the file or the cap")
    try:
        table = parse_json(data[8 : 8 + length], limits, "safetensors header")
    except LimitExceeded:
        raise
    except ValueError as exc:  # pickle bytes and anything else that is not a JSON header
        raise UnsafeWeights("the header is not JSON: not a safetensors file") from exc
    if not isinstance(table, dict):
        raise UnsafeWeights("the header is not a JSON object")
    metadata = table.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise UnsafeWeights("__metadata__ is not a map of strings")
    if len(table) > max_tensors:
        raise UnsafeWeights(f"{len(table)} tensors, over the cap of {max_tensors}")
    entries = sorted((_entry(n, s) for n, s in table.items()), key=lambda e: (e.start, e.end))
    position = 0
    for entry in entries:
        if entry.start != position:
            raise UnsafeWeights(f"tensor {entry.name!r} starts at {entry.start}, not {position}")
        position = entry.end
    if 8 + length + position != len(data):
        raise UnsafeWeights(
            f"the tensors end at byte {8 + length + position}, the file at {len(data)}"
        )
    return 8 + length, entries


def check_safetensors(
    data: bytes,
    limits: JsonLimits = HEADER_LIMITS,
    max_tensors: int = MAX_TENSORS,
    finite: bool = True,
) -> list[TensorEntry]:
    """Every tensor of ``data`` once the file is consistent and (``finite``) every float
    value is finite; raises :class:`UnsafeWeights` or :class:`LimitExceeded`."""
    base, entries = read_header(data, limits, max_tensors)
    if finite:
        for entry in entries:
            view = _NON_FINITE.get(entry.dtype)
            if view is None or entry.end == entry.start:
                continue
            unsigned, mask = view
            bits = np.frombuffer(data, unsigned, (entry.end - entry.start) // unsigned.itemsize,
                                 base + entry.start)  # fmt: skip
            if np.any((bits & mask) == mask):
                raise UnsafeWeights(f"tensor {entry.name!r} holds NaN or infinite values")
    return entries
