"""Check a received export bundle before anything is trained on it.

Order of checks: well-formed manifest -> schema version -> the sender is the site the manifest
names -> the site's key is registered -> the signature holds -> every artifact is present with
the listed hash -> the audit passed and covers exactly this corpus. The first failure rejects
the bundle with a named reason; the round goes on without it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from flwr.app import ArrayRecord
from pydantic import ValidationError

from coordinator.transport import record_to_safetensors_bytes
from protocol import SCHEMA_VERSION, Corpus, Document
from protocol.export import ExportManifest
from protocol.registry import SiteRegistry
from protocol.rounds import AcceptedBundle, ExclusionReason
from shared.errors import VerificationError
from shared.signing import verify


@dataclass
class ReceivedBundle:
    """What a site sent in the collect phase, as bytes and arrays."""

    manifest_bytes: bytes
    signature: str
    files: dict[str, bytes] = field(default_factory=dict)
    weights: dict[str, tuple[ArrayRecord, bytes]] = field(default_factory=dict)


@dataclass
class VerifiedBundle:
    """A bundle that passed every check, with its corpus parsed."""

    manifest: ExportManifest
    accepted: AcceptedBundle
    corpus: Corpus | None
    weights: dict[str, tuple[ArrayRecord, bytes]]
    files: dict[str, bytes] = field(default_factory=dict)


class BundleRejected(VerificationError):
    """A bundle failed a check; ``reason`` names which."""

    def __init__(self, reason: ExclusionReason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: ExclusionReason = reason
        self.detail = detail


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parse_manifest(bundle: ReceivedBundle) -> ExportManifest:
    try:
        raw = json.loads(bundle.manifest_bytes)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleRejected("malformed_bundle", "manifest.json is not JSON") from exc
    if isinstance(raw, dict) and raw.get("schema_version") != SCHEMA_VERSION:
        raise BundleRejected(
            "schema_version",
            f"manifest schema {raw.get('schema_version')!r}, coordinator reads {SCHEMA_VERSION!r}",
        )
    try:
        return ExportManifest.model_validate(raw)
    except ValidationError as exc:
        raise BundleRejected(
            "malformed_bundle", f"manifest.json: {exc.error_count()} errors"
        ) from exc


def _check_signer(manifest: ExportManifest, bundle: ReceivedBundle, registry: SiteRegistry) -> str:
    keys = registry.sites.get(manifest.site_id)
    if keys is None:
        raise BundleRejected("unknown_site_key", f"site {manifest.site_id!r} is not registered")
    if manifest.signer_key_id and manifest.signer_key_id != keys.signing_key_id:
        raise BundleRejected(
            "unknown_site_key",
            f"signed with key {manifest.signer_key_id}, registered key is {keys.signing_key_id}",
        )
    public = serialization.load_pem_public_key(keys.signing_public_key_pem.encode())
    assert isinstance(public, Ed25519PublicKey)
    try:
        verify(bundle.manifest_bytes, bundle.signature, public)
    except VerificationError as exc:
        raise BundleRejected("bad_signature", "manifest signature does not verify") from exc
    return keys.signing_key_id


def _artifact_bytes(name: str, bundle: ReceivedBundle) -> bytes:
    if name in bundle.weights:
        record, header = bundle.weights[name]
        return record_to_safetensors_bytes(record, header)
    if name in bundle.files:
        return bundle.files[name]
    raise BundleRejected("missing_artifact", f"artifact {name!r} listed but not sent")


def _check_artifacts(manifest: ExportManifest, bundle: ReceivedBundle) -> dict[str, bytes]:
    contents: dict[str, bytes] = {}
    for entry in manifest.artifacts:
        data = _artifact_bytes(entry.name, bundle)
        if _sha(data) != entry.sha256 or len(data) != entry.size_bytes:
            raise BundleRejected("hash_mismatch", f"artifact {entry.name!r} content changed")
        contents[entry.name] = data
    return contents


def _check_audit(manifest: ExportManifest, contents: dict[str, bytes]) -> None:
    audit = manifest.audit
    if not audit.passed:
        failed = ", ".join(audit.rules_failed) or "unspecified rule"
        raise BundleRejected("audit_failed", f"privacy audit failed: {failed}")
    corpora = [a for a in manifest.artifacts if a.kind == "synthetic_corpus"]
    if any(a.sha256 != audit.corpus_sha256 for a in corpora):
        raise BundleRejected("audit_failed", "audit does not cover the exported corpus")
    for entry in manifest.artifacts:
        if entry.kind != "audit_report":
            continue
        if entry.sha256 != audit.report_sha256:
            raise BundleRejected("audit_failed", "audit report is not the one the manifest cites")
        report = json.loads(contents[entry.name])
        if not report.get("passed", False):
            raise BundleRejected("audit_failed", "audit report says the audit failed")


def parse_corpus_bytes(data: bytes) -> Corpus:
    """A JSONL corpus from bytes (each line validated as a Document)."""
    lines = [line for line in data.decode("utf-8").splitlines() if line.strip()]
    return Corpus(documents=tuple(Document.model_validate_json(line) for line in lines))


def verify_received_bundle(
    bundle: ReceivedBundle, sender_site_id: str, registry: SiteRegistry
) -> VerifiedBundle:
    """Every check, in order; raises :class:`BundleRejected` naming the first that fails."""
    manifest = _parse_manifest(bundle)
    if manifest.site_id != sender_site_id:
        raise BundleRejected(
            "site_mismatch", f"site {sender_site_id!r} sent a bundle of {manifest.site_id!r}"
        )
    key_id = _check_signer(manifest, bundle, registry)
    contents = _check_artifacts(manifest, bundle)
    _check_audit(manifest, contents)
    corpus_entry = next((a for a in manifest.artifacts if a.kind == "synthetic_corpus"), None)
    try:
        corpus = parse_corpus_bytes(contents[corpus_entry.name]) if corpus_entry else None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BundleRejected("malformed_bundle", "synthetic corpus does not validate") from exc
    accepted = AcceptedBundle(
        site_id=manifest.site_id,
        manifest_sha256=_sha(bundle.manifest_bytes),
        signer_key_id=key_id,
        artifacts={a.name: a.sha256 for a in manifest.artifacts},
        n_documents=len(corpus) if corpus else 0,
        labels=corpus.labels if corpus else manifest.labels,
        audit_passed=manifest.audit.passed,
        audit_rules_failed=manifest.audit.rules_failed,
        created_at=manifest.created_at,
    )
    weights = {
        a.name: bundle.weights[a.name] for a in manifest.artifacts if a.name in bundle.weights
    }
    encoder_files = {
        a.name: contents[a.name]
        for a in manifest.artifacts
        if a.kind == "encoder_weights" and a.name not in weights
    }
    return VerifiedBundle(manifest, accepted, corpus, weights, encoder_files)
