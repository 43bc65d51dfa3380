"""``[audit]``: the privacy audit's policy and the canaries planted to test it."""

from __future__ import annotations

from pydantic import Field

from protocol.base import ProtocolModel
from site_agent.audit.policy import AuditPolicy


class AuditSettings(ProtocolModel):
    """The privacy audit: its policy (``[audit.policy]``) and canaries.

    ``canaries`` unique fake identifiers are planted as PII in the generator's training text;
    the audit then checks that none of them comes back in the synthetic corpus.
    """

    policy: AuditPolicy = Field(
        default_factory=AuditPolicy,
        description="what is measured, which documents are dropped and which rules must hold",
    )
    canaries: int = Field(0, ge=0, description="fake identifiers planted to test the audit")
