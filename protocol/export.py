"""What a site sends out: a signed manifest over the audited artifacts of one export bundle."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field

from protocol.base import SCHEMA_VERSION, ProtocolModel

ArtifactKind = Literal["synthetic_corpus", "encoder_weights", "audit_report", "site_report"]


class ArtifactEntry(ProtocolModel):
    """One file in the bundle, named relative to the bundle folder, with its content hash."""

    name: str
    kind: ArtifactKind
    sha256: str
    size_bytes: int


class AuditRecord(ProtocolModel):
    """The audit that cleared the synthetic corpus of this bundle.

    ``real_corpus_sha256`` is the content digest of the site's real training text the audit
    compared against (``AuditReport.real_corpus_sha256``, re-derived by the export gate).
    """

    report_sha256: str
    corpus_sha256: str
    real_corpus_sha256: str = ""
    passed: bool
    rules_failed: tuple[str, ...] = ()


class ExportManifest(ProtocolModel):
    """``manifest.json`` of an export bundle; ``manifest.json.sig`` holds its Ed25519 signature."""

    schema_version: str = SCHEMA_VERSION
    site_id: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    tool_version: str
    config_digest: str
    base_models: dict[str, str] = Field(default_factory=dict)
    labels: tuple[str, ...] = ()
    n_documents: int = 0
    artifacts: tuple[ArtifactEntry, ...]
    audit: AuditRecord
    trained_on_corpus_sha256: str = ""  # file SHA-256 the encoder/site report were trained on
    signer_key_id: str = ""
