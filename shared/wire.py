"""How round payloads sit inside Flower messages: message types, record keys, one pack/unpack.

Both the ServerApp and the ClientApp use these, so a key is spelt in one place. A payload is a
protocol model (``protocol.rounds``) stored as JSON under one key; model folders and bundle
weights travel beside it as records named here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from flwr.app import ArrayRecord, ConfigRecord, RecordDict
from pydantic import BaseModel, ValidationError

from shared.transport import pack_model_dir, unpack_model_dir

ROLL_CALL = "query.roll_call"
COLLECT = "query.collect"
FEDAVG_TRAIN = "train.fedavg"
CROSS_SITE = "evaluate.cross_site"

PAYLOAD = "payload"
ERROR = "error"
MODEL_PREFIX = "model:"
MODEL_FILES_PREFIX = "files:"
GLOBAL_MODEL = "global"  # the FedAvg model, sent to the sites and trained back

# The collect reply: one ConfigRecord of files plus one ArrayRecord per safetensors artifact;
# the manifest and its signature under their file names (protocol.export MANIFEST, SIGNATURE).
BUNDLE = "bundle"
WEIGHTS_PREFIX = "weights:"
HEADER_PREFIX = "header:"
FILE_PREFIX = "file:"

M = TypeVar("M", bound=BaseModel)
Record = ArrayRecord | ConfigRecord


class WireError(ValueError):
    """A message that does not hold what its type promises (named in the message)."""


def pack(payload: BaseModel, records: Mapping[str, Record] | None = None) -> RecordDict:
    """``payload`` as JSON under ``PAYLOAD``, with ``records`` (weights, files) beside it."""
    content = RecordDict({PAYLOAD: ConfigRecord({"json": payload.model_dump_json()})})
    for key, record in (records or {}).items():
        content[key] = record
    return content


def unpack(content: RecordDict, cls: type[M]) -> M:
    """The payload of ``content`` as ``cls``; raises :class:`WireError` naming what is wrong."""
    record = content.config_records.get(PAYLOAD)
    raw = record.get("json") if record is not None else None
    if not isinstance(raw, str):
        raise WireError(f"no {cls.__name__} payload")
    try:
        return cls.model_validate_json(raw)
    except ValidationError as exc:
        raise WireError(f"invalid {cls.__name__}: {exc.error_count()} problem(s)") from exc


def model_records(name: str, model_dir: Path) -> dict[str, Record]:
    """A saved model folder as the two records sent under ``name``."""
    weights, files = pack_model_dir(model_dir)
    return {MODEL_PREFIX + name: weights, MODEL_FILES_PREFIX + name: files}


def model_weights(content: RecordDict, name: str) -> ArrayRecord | None:
    return content.array_records.get(MODEL_PREFIX + name)


def unpack_model(content: RecordDict, name: str, out_dir: Path) -> Path:
    """Write the model sent under ``name`` into ``out_dir``; raises :class:`WireError`."""
    weights = content.array_records.get(MODEL_PREFIX + name)
    files = content.config_records.get(MODEL_FILES_PREFIX + name)
    if weights is None or files is None:
        raise WireError(f"model {name!r} not sent")
    try:
        return unpack_model_dir(weights, files, out_dir)
    except (KeyError, ValueError) as exc:
        raise WireError(f"model {name!r} does not unpack: {exc}") from exc


def error_content(code: str) -> RecordDict:
    """The only thing a site sends when it fails: a code from ``SiteErrorCode``."""
    return RecordDict({ERROR: ConfigRecord({"code": code})})


def error_code(content: RecordDict) -> str | None:
    if ERROR not in content:
        return None
    code = content.config_records[ERROR].get("code")
    return str(code) if code is not None else "internal_error"
