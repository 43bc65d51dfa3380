"""How round payloads sit inside Flower messages: message types, record keys, JSON records.

Both the ServerApp and the ClientApp import these names, so a key is spelt in one place.
"""

from __future__ import annotations

from typing import TypeVar

from flwr.app import ConfigRecord, RecordDict
from pydantic import BaseModel

ROLL_CALL = "query.roll_call"
COLLECT = "query.collect"
FEDAVG_TRAIN = "train.fedavg"
CROSS_SITE = "evaluate.cross_site"

PAYLOAD = "payload"
ERROR = "error"
BUNDLE = "bundle"
WEIGHTS_PREFIX = "weights:"
HEADER_PREFIX = "header:"
FILE_PREFIX = "file:"
MODEL_PREFIX = "model:"
MODEL_FILES_PREFIX = "files:"
METRICS_PREFIX = "metrics:"
BASELINE = "__baseline__"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"
NUM_EXAMPLES = "num-examples"

M = TypeVar("M", bound=BaseModel)


def model_record(model: BaseModel) -> ConfigRecord:
    return ConfigRecord({"json": model.model_dump_json()})


def read_model_record(record: ConfigRecord, cls: type[M]) -> M:
    raw = record["json"]
    if not isinstance(raw, str):
        raise ValueError("payload record has no JSON")
    return cls.model_validate_json(raw)


def error_content(code: str) -> RecordDict:
    """The only thing a site sends when it fails: a code from ``SiteErrorCode``."""
    return RecordDict({ERROR: ConfigRecord({"code": code})})


def error_code(content: RecordDict) -> str | None:
    if ERROR not in content:
        return None
    code = content.config_records[ERROR].get("code")
    return str(code) if code is not None else "internal_error"
