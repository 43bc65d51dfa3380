"""The privacy audit's verdict, as the export gate and the coordinator read it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from protocol.base import SCHEMA_VERSION, ProtocolModel


class RuleResult(ProtocolModel):
    """One policy rule: the measured value, the threshold, and whether it held."""

    name: str
    measured: float
    threshold: float
    comparison: Literal["<=", "<", ">=", ">", "=="] = "<="
    passed: bool
    explanation: str = ""


class AuditReport(ProtocolModel):
    """``audit.json``: every figure, the thresholds, and pass/fail per rule.

    ``audited_corpus_sha256`` is the SHA-256 of the corpus file the verdict covers (the
    filtered corpus the audit wrote); the export gate refuses any other file.
    """

    schema_version: str = SCHEMA_VERSION
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    tool_version: str
    config_digest: str
    real_corpus_sha256: str
    input_corpus_sha256: str
    audited_corpus_sha256: str
    n_input_documents: int
    n_kept_documents: int
    dropped_by_reason: dict[str, int] = Field(default_factory=dict)
    measures: dict[str, Any] = Field(default_factory=dict)
    rules: tuple[RuleResult, ...] = ()
    passed: bool

    @property
    def failed_rules(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rules if not r.passed)
