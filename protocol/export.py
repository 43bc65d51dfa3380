"""What a site sends out: a signed manifest over the audited artifacts of one export bundle.

Artifact names are checked here, in the type itself, so that no code path — the site's bundle
writer, the packer that reads a bundle folder, the coordinator that writes received files —
can hold a name that leaves the bundle folder: relative POSIX paths of plain segments
(letters, digits, ``.``, ``_``, ``-``; no segment starting with a dot, so no ``..`` and no
hidden files), no absolute path, backslash, NUL or other control character, bounded length
and depth, and no two names that differ only in case.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from protocol.base import SCHEMA_VERSION, ProtocolModel
from protocol.corpus import LabelName

ArtifactKind = Literal["synthetic_corpus", "encoder_weights", "audit_report", "site_report"]

MAX_NAME_LENGTH = 200
MAX_NAME_DEPTH = 4
MAX_ARTIFACTS = 256
MANIFEST = "manifest.json"  # a bundle's signed manifest
SIGNATURE = "manifest.json.sig"  # its Ed25519 signature, base64
RESERVED_NAMES = frozenset({MANIFEST, SIGNATURE})
SITE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_SEGMENT = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_SHA256 = r"^[0-9a-f]{64}$"


class UnsafeArtifactName(ValueError):
    """An artifact name that could leave the bundle folder or clash with another file."""


def check_artifact_name(name: str) -> str:
    """``name`` if it is a safe bundle-relative POSIX path; raises UnsafeArtifactName."""
    allowed = (
        "allowed: a relative POSIX path of at most "
        f"{MAX_NAME_DEPTH} segments and {MAX_NAME_LENGTH} characters, each segment made of "
        "letters, digits, '.', '_', '-' and not starting with '.'"
    )
    if not name:
        raise UnsafeArtifactName(f"empty artifact name; {allowed}")
    if len(name) > MAX_NAME_LENGTH:
        raise UnsafeArtifactName(f"artifact name of {len(name)} characters; {allowed}")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise UnsafeArtifactName(f"artifact name {name!r} holds a control character; {allowed}")
    if "\\" in name:
        raise UnsafeArtifactName(f"artifact name {name!r} holds a backslash; {allowed}")
    if name.startswith("/"):
        raise UnsafeArtifactName(f"artifact name {name!r} is absolute; {allowed}")
    segments = name.split("/")
    if len(segments) > MAX_NAME_DEPTH:
        raise UnsafeArtifactName(f"artifact name {name!r} is {len(segments)} deep; {allowed}")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment):
            raise UnsafeArtifactName(
                f"artifact name {name!r} has the segment {segment!r}; {allowed}"
            )
    if name in RESERVED_NAMES:
        raise UnsafeArtifactName(f"artifact name {name!r} is reserved for the manifest")
    return name


ArtifactName = Annotated[str, AfterValidator(check_artifact_name)]
Sha256Hex = Annotated[str, Field(pattern=_SHA256)]


class ArtifactEntry(ProtocolModel):
    """One file in the bundle, named relative to the bundle folder, with its content hash."""

    name: ArtifactName
    kind: ArtifactKind
    sha256: Sha256Hex
    size_bytes: int = Field(ge=0)


class AuditRecord(ProtocolModel):
    """The audit that cleared the synthetic corpus of this bundle.

    ``real_corpus_sha256`` is the content digest of the site's real training text the audit
    compared against (``AuditReport.real_corpus_sha256``, re-derived by the export gate).
    """

    report_sha256: Sha256Hex
    corpus_sha256: Sha256Hex
    real_corpus_sha256: str = ""
    passed: bool
    rules_failed: tuple[str, ...] = ()


class QualityOverride(ProtocolModel):
    """A degenerate synthetic corpus exported anyway: what the export checks found, and the
    site's reason for sending it (``[export] accept_degenerate``). Recorded in the signed
    manifest so that the coordinator and every reader of the bundle see it."""

    findings: tuple[str, ...] = Field(min_length=1)
    reason: str = Field(min_length=1)


REVIEWER_PATTERN = r"^[^\x00-\x1f\x7f]{1,120}$"


class ReleaseApproval(ProtocolModel):
    """Who approved the release of this bundle, when, and exactly what: ``approved_sha256``
    is :func:`bundle_content_sha256` of the artifacts the reviewer saw (``[export]
    require_approval``; written by ``site-agent approve``, signed with the manifest)."""

    reviewer: str = Field(pattern=REVIEWER_PATTERN)
    approved_at: datetime
    approved_sha256: Sha256Hex


def bundle_content_sha256(site_id: str, artifacts: tuple[ArtifactEntry, ...]) -> str:
    """The SHA-256 of what a bundle releases: its site and every artifact's name, kind, size
    and content hash, in name order (the manifest's other fields describe these files)."""
    listed = sorted((a.name, a.kind, a.size_bytes, a.sha256) for a in artifacts)
    text = json.dumps({"site_id": site_id, "artifacts": listed}, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ExportManifest(ProtocolModel):
    """``manifest.json`` of an export bundle; ``manifest.json.sig`` holds its Ed25519 signature."""

    schema_version: str = SCHEMA_VERSION
    site_id: str = Field(pattern=SITE_ID_PATTERN)
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    tool_version: str
    config_digest: str
    base_models: dict[str, str] = Field(default_factory=dict)
    labels: tuple[LabelName, ...] = ()
    n_documents: int = Field(default=0, ge=0)
    artifacts: tuple[ArtifactEntry, ...] = Field(max_length=MAX_ARTIFACTS)
    audit: AuditRecord
    trained_on_corpus_sha256: str = ""  # file SHA-256 the encoder/site report were trained on
    signer_key_id: str = ""
    quality_override: QualityOverride | None = None  # set only when a degenerate corpus left
    approval: ReleaseApproval | None = None  # set by `site-agent approve` (require_approval)

    @model_validator(mode="after")
    def _names_are_unique(self) -> ExportManifest:
        seen: dict[str, str] = {}
        for entry in self.artifacts:
            folded = entry.name.casefold()
            if folded in seen:
                raise ValueError(
                    f"artifact names {seen[folded]!r} and {entry.name!r} name the same file "
                    "(names must differ in more than case)"
                )
            seen[folded] = entry.name
            if any(other.startswith(folded + "/") for other in seen):
                raise ValueError(f"artifact {entry.name!r} is both a file and a folder")
            parents = ["/".join(folded.split("/")[:i]) for i in range(1, folded.count("/") + 1)]
            if any(p in seen for p in parents):
                raise ValueError(f"artifact {entry.name!r} lies under another artifact file")
        return self
