"""``[audit]``: the privacy audit's policy and the canaries planted to test it."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from protocol.base import ProtocolModel
from site_agent.audit.policy import AuditPolicy
from site_agent.canaries.settings import CanarySettings


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

    @model_validator(mode="before")
    @classmethod
    def _canaries_integer(cls, data: Any) -> Any:
        """``canaries = 8`` (earlier configs) is ``[audit.canaries] identifiers = 8``."""
        if isinstance(data, dict) and type(data.get("canaries")) is int:
            return {**data, "canaries": {"identifiers": data["canaries"]}}
        return data
