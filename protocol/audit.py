"""The privacy audit's verdict, as the export gate and the coordinator read it.

Nothing here carries real text: figures, thresholds, document ids and hashes only, so the
report can leave the site inside the export bundle. Canary records (``canaries.json``,
``membership_canaries.private.json``) hold fake identifiers and random secrets, and stay on
the site: whoever holds them can tell which canaries were planted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from protocol.base import SCHEMA_VERSION, ProtocolModel

Comparison = Literal["<=", "<", ">=", ">", "=="]
AUDIT_JSON = "audit.json"  # the report's file name, in the audit's folder and in a bundle


class RuleResult(ProtocolModel):
    """One policy rule: the measured value, the threshold, and whether it held."""

    name: str
    measured: float | None
    threshold: float
    comparison: Comparison = "<="
    passed: bool
    explanation: str = ""
    metric: str = ""


class DroppedDocument(ProtocolModel):
    """A synthetic document the audit dropped, and every filter that marked it (policy order:
    the first reason is the one that dropped it). Synthetic ids only, never text."""

    id: str
    reasons: tuple[str, ...]


class AuditReport(ProtocolModel):
    """``audit.json``: every figure, the thresholds, and pass/fail per rule.

    ``audited_corpus_sha256`` is the SHA-256 of the corpus file the verdict covers (the
    filtered corpus the audit wrote); the export gate refuses any other file.
    ``real_corpus_sha256`` and ``input_corpus_sha256`` are content digests of the corpora
    the audit was given (``site_agent.privacy.digest.corpus_sha256``: id, text and spans).
    ``measures`` holds each measure's figures before and after filtering
    (``{"<measure>": {"before": {...}, "after": {...}}}``). ``dropped_documents`` lists
    every dropped synthetic document with its reasons, in input order.
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
    flagged_by_reason: dict[str, int] = Field(default_factory=dict)
    dropped_documents: tuple[DroppedDocument, ...] = ()
    measures: dict[str, Any] = Field(default_factory=dict)
    rules: tuple[RuleResult, ...] = ()
    skipped_rules: tuple[str, ...] = ()
    policy_name: str = "default"
    policy: dict[str, Any] = Field(default_factory=dict)
    audited_corpus_file: str = ""
    timings_s: dict[str, float] = Field(default_factory=dict)
    passed: bool

    @property
    def failed_rules(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rules if not r.passed)


CanaryKind = Literal["name", "id", "phone", "date"]


class Canary(ProtocolModel):
    """A unique fake identifier planted as a gold PII span in a copy of the training corpus."""

    value: str = Field(min_length=1)
    kind: CanaryKind
    label: str
    document_id: str
    start: int
    end: int


class CanarySet(ProtocolModel):
    """``canaries.json``: what was planted where, and in which corpus copy (by hash)."""

    schema_version: str = SCHEMA_VERSION
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    tool_version: str
    seed: int
    locale: str
    source_corpus_sha256: str
    planted_corpus_sha256: str
    canaries: tuple[Canary, ...]


class MembershipCanary(ProtocolModel):
    """One membership canary: a short note ending in a surrogate name and a random secret.

    ``member`` canaries are planted in the generator's adaptation text under ``id``; the
    others are made the same way and never written anywhere else.
    """

    id: str = Field(min_length=1)
    member: bool
    identifier: str = Field(min_length=1)
    secret: str = Field(min_length=1)
    text: str = Field(min_length=1)


class MembershipCanarySet(ProtocolModel):
    """``membership_canaries.private.json``: every canary, its membership, and how it was made.

    ``vocabulary`` is the word list the secrets were drawn from (``secret_words`` words each),
    so the audit can draw random candidate secrets of the same kind (exposure).
    """

    schema_version: str = SCHEMA_VERSION
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    tool_version: str
    seed: int
    secret_words: int = Field(ge=1)
    vocabulary: tuple[str, ...]
    source_corpus_sha256: str
    planted_corpus_sha256: str
    canaries: tuple[MembershipCanary, ...]

    @property
    def members(self) -> tuple[MembershipCanary, ...]:
        return tuple(c for c in self.canaries if c.member)

    @property
    def non_members(self) -> tuple[MembershipCanary, ...]:
        return tuple(c for c in self.canaries if not c.member)
