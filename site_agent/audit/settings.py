"""``[audit]``: the privacy audit's policy and the canaries planted to test it."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from protocol.base import ProtocolModel
from site_agent.audit.policy import AuditPolicy
from site_agent.canaries.settings import CanarySettings

DEFAULT_CHUNK_DOCUMENTS = 5_000
"""Synthetic notes measured at a time: about 0.2 GB of working memory for notes of ~420 words
(benchmarks/audit_scale.py), small beside the real side's indexes; smaller chunks were no
slower there, and 200 chunks for a million notes keep the per-chunk overheads negligible."""


class AuditSettings(ProtocolModel):
    """The privacy audit: its policy (``[audit.policy]``) and canaries (``[audit.canaries]``)."""

    policy: AuditPolicy = Field(
        default_factory=AuditPolicy,
        description="what is measured, which documents are dropped and which rules must hold",
    )
    canaries: CanarySettings = Field(
        default_factory=CanarySettings,
        description="[audit.canaries]: identifier and membership canaries (an integer, as in "
        "earlier configs, means identifiers = N)",
    )
    chunk_documents: int = Field(
        DEFAULT_CHUNK_DOCUMENTS,
        ge=1,
        description="synthetic notes measured at a time: the audit's memory grows with it "
        "(and with the real corpus), not with the synthetic corpus; results do not depend on it",
    )

    @model_validator(mode="before")
    @classmethod
    def _canaries_integer(cls, data: Any) -> Any:
        """``canaries = 8`` (earlier configs) is ``[audit.canaries] identifiers = 8``."""
        if isinstance(data, dict) and type(data.get("canaries")) is int:
            return {**data, "canaries": {"identifiers": data["canaries"]}}
        return data
