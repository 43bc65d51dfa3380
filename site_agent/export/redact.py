"""Real document ids never leave the site, not even inside the audit report.

The audit lists its riskiest synthetic/real pairs by document id so that the site can look
at them; an id may itself be an identifier (a record number in a file name). The bundled copy
of the report replaces every ``real_id`` with a keyed hash: stable for the site, which holds
the key, meaningless to anyone else.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

_REAL_ID_KEY = re.compile(r"(^|_)real_ids?$")


def pseudonymous_id(real_id: str, secret: bytes) -> str:
    return "real-" + hmac.new(secret, real_id.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def _redact(value: Any, secret: bytes, under_real_key: bool = False) -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, secret, bool(_REAL_ID_KEY.search(str(k)))) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, secret, under_real_key) for v in value]
    if under_real_key and isinstance(value, str):
        return pseudonymous_id(value, secret)
    return value


def redact_real_ids(report_json: bytes, secret: bytes) -> bytes:
    """The report with every ``real_id`` / ``real_ids`` value replaced by a keyed hash."""
    redacted = _redact(json.loads(report_json), secret)
    return json.dumps(redacted, indent=2, ensure_ascii=False).encode("utf-8")
