"""A site's reply read as untrusted input: its JSON payload checked against the caps before
it is parsed, and whatever reading it raises turned into a named exclusion reason.

Every phase reads each site's reply through these, so that one site's reply, however it is
built, excludes that site and never ends the phase for the others.
"""

from __future__ import annotations

from typing import TypeVar

from flwr.app import RecordDict
from pydantic import BaseModel

from protocol.rounds import ExclusionReason
from shared import wire
from shared.bundle_limits import BundleLimits
from shared.bundle_verify import BundleRejected
from shared.limits import LimitExceeded, check_json_text

M = TypeVar("M", bound=BaseModel)


def unpack_reply(content: RecordDict, cls: type[M], limits: BundleLimits) -> M:
    """The payload of ``content`` as ``cls`` once its JSON is within the caps; raises
    :class:`LimitExceeded` or :class:`shared.wire.WireError`."""
    record = content.config_records.get(wire.PAYLOAD)
    raw = record.get("json") if record is not None else None
    if isinstance(raw, str):
        check_json_text(raw, limits.json_limits(limits.max_reply_bytes), cls.__name__)
    return wire.unpack(content, cls)


def refusal(exc: BaseException) -> tuple[ExclusionReason, str]:
    """The exclusion reason and detail for anything reading one site's reply raised."""
    if isinstance(exc, BundleRejected):
        return exc.reason, exc.detail
    if isinstance(exc, LimitExceeded):
        return "over_limit", str(exc)
    if isinstance(exc, wire.WireError):
        return "site_error", str(exc)
    return "invalid_reply", f"reading the reply raised {type(exc).__name__}"
