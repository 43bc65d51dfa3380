"""Moving models and bundle files through Flower records without losing a byte.

Weights travel as ``ArrayRecord`` (Flower streams large arrays in chunks); small files
(configs, tokenizer, JSONL, manifest) as bytes in a ``ConfigRecord``. A safetensors file is
sent as its header plus its arrays, so the receiver can rebuild the exact file and check the
SHA-256 the signed manifest lists for it.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord
from flwr.app.typing import ConfigRecordValues

from shared.contained import PathEscapeError, write_contained

WEIGHTS_FILE = "model.safetensors"


def safetensors_to_record(path: Path) -> tuple[ArrayRecord, bytes]:
    """Split a safetensors file into its arrays (file order) and its raw header."""
    return safetensors_bytes_to_record(path.read_bytes())


def safetensors_bytes_to_record(data: bytes) -> tuple[ArrayRecord, bytes]:
    """Split safetensors bytes into their arrays (file order) and the raw header."""
    from safetensors.numpy import load

    (length,) = struct.unpack("<Q", data[:8])
    header = data[8 : 8 + length]
    arrays = load(data)
    record = ArrayRecord()
    for name in _tensor_order(header):
        record[name] = Array.from_numpy_ndarray(np.ascontiguousarray(arrays[name]))
    return record, header


def _tensor_order(header: bytes) -> list[str]:
    table = json.loads(header)
    names = [k for k in table if k != "__metadata__"]
    return sorted(names, key=lambda k: table[k]["data_offsets"][0])


def record_to_safetensors_bytes(record: ArrayRecord, header: bytes) -> bytes:
    """Rebuild the exact safetensors file from its header and arrays."""
    parts = [struct.pack("<Q", len(header)), header]
    for name in _tensor_order(header):
        array = record[name].numpy()
        parts.append(np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes())
    return b"".join(parts)


def pack_model_dir(model_dir: Path) -> tuple[ArrayRecord, ConfigRecord]:
    """A saved model folder as (weights, other files); every file is kept."""
    weights, header = safetensors_to_record(model_dir / WEIGHTS_FILE)
    files: dict[str, ConfigRecordValues] = {"__header__": header}
    for item in sorted(model_dir.iterdir()):
        if item.is_file() and item.name != WEIGHTS_FILE:
            files[item.name] = item.read_bytes()
    return weights, ConfigRecord(files)


def unpack_model_dir(weights: ArrayRecord, files: ConfigRecord, out_dir: Path) -> Path:
    """Write a model folder packed by :func:`pack_model_dir`."""
    header = files["__header__"]
    if not isinstance(header, bytes):
        raise ValueError("packed model has no safetensors header")
    for name, content in files.items():
        if name == "__header__":
            continue
        if not isinstance(content, bytes) or "/" in name:
            raise ValueError(f"packed model file {name!r} is not a plain file")
        try:
            write_contained(out_dir, name, content)
        except PathEscapeError as exc:
            raise ValueError(f"packed model file {name!r} is not a plain file") from exc
    write_contained(out_dir, WEIGHTS_FILE, record_to_safetensors_bytes(weights, header))
    return out_dir


def unchanged_arrays(new: ArrayRecord, old: ArrayRecord) -> tuple[str, ...]:
    """Names of the arrays of ``new`` that are byte for byte those of ``old`` (same shape and
    dtype): what a FedAvg reply need not send back."""
    same = []
    for name in new:
        if name not in old:
            continue
        a, b = new[name], old[name]
        if a.shape == b.shape and a.dtype == b.dtype and a.data == b.data:
            same.append(name)
    return tuple(same)


def without(record: ArrayRecord, names: tuple[str, ...]) -> ArrayRecord:
    """``record`` less the arrays ``names``, in its order."""
    dropped = set(names)
    return ArrayRecord({k: record[k] for k in record if k not in dropped})


def with_unchanged(
    sent: ArrayRecord, reference: ArrayRecord, unchanged: tuple[str, ...]
) -> ArrayRecord | None:
    """The whole model a FedAvg reply stands for: the arrays it ``sent`` and, for each name
    it lists as ``unchanged``, the ``reference`` (global) array, in the reference's order.
    None when the names do not add up to exactly the reference's arrays (a name listed twice,
    one not in the reference, one also sent, or one neither sent nor listed)."""
    listed = set(unchanged)
    names = set(reference.keys())
    if len(listed) != len(unchanged) or not listed <= names or listed & set(sent.keys()):
        return None
    if set(sent.keys()) | listed != names:
        return None
    return ArrayRecord({k: reference[k] if k in listed else sent[k] for k in reference})
