"""Check a received export bundle before anything is trained on it.

The checks themselves are the one bundle verifier in ``shared.bundle_verify`` (the site runs
the same before it sends). Here: the sender must be a registered site, its bundle is rebuilt
into bytes (weights arrive as arrays plus the safetensors header), verified with that site's
registered key, and summarised for the report (a :class:`VerifiedBundle`). The first failure
rejects the bundle with a named reason; the round goes on without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from flwr.app import ArrayRecord

from coordinator.verified_bundle import VerifiedBundle
from protocol.export import ExportManifest
from protocol.registry import SiteRegistry
from protocol.rounds import AcceptedBundle
from shared.bundle_verify import (
    BundleBytes,
    BundleRejected,
    parse_corpus_bytes,
    parse_manifest,
    verify_bundle_bytes,
)
from shared.transport import record_to_safetensors_bytes

__all__ = [
    "BundleRejected",
    "ReceivedBundle",
    "parse_corpus_bytes",
    "verify_received_bundle",
]


@dataclass
class ReceivedBundle:
    """What a site sent in the collect phase, as bytes and arrays."""

    manifest_bytes: bytes
    signature: str
    files: dict[str, bytes] = field(default_factory=dict)
    weights: dict[str, tuple[ArrayRecord, bytes]] = field(default_factory=dict)


def _registered_key(site_id: str, registry: SiteRegistry) -> Ed25519PublicKey:
    keys = registry.sites.get(site_id)
    if keys is None:
        raise BundleRejected("unknown_site_key", f"site {site_id!r} is not registered")
    public = serialization.load_pem_public_key(keys.signing_public_key_pem.encode())
    if not isinstance(public, Ed25519PublicKey):
        raise BundleRejected("unknown_site_key", f"site {site_id!r}: registered key is not Ed25519")
    return public


def _as_bytes(bundle: ReceivedBundle) -> BundleBytes:
    artifacts = dict(bundle.files)
    for name, (record, header) in bundle.weights.items():
        if name in artifacts:
            raise BundleRejected("malformed_bundle", f"artifact {name!r} sent twice")
        try:
            artifacts[name] = record_to_safetensors_bytes(record, header)
        except (ValueError, KeyError, TypeError) as exc:
            raise BundleRejected("malformed_bundle", f"weights {name!r} do not rebuild") from exc
    return BundleBytes(bundle.manifest_bytes, bundle.signature, artifacts)


def verify_received_bundle(
    bundle: ReceivedBundle, sender_site_id: str, registry: SiteRegistry
) -> VerifiedBundle:
    """Every check, in order; raises :class:`BundleRejected` naming the first that fails."""
    try:  # a readable manifest of another site is named as such; all else is the verifier's
        claimed: ExportManifest | None = parse_manifest(bundle.manifest_bytes)
    except BundleRejected:
        claimed = None
    if claimed is not None and claimed.site_id != sender_site_id:
        raise BundleRejected(
            "site_mismatch", f"site {sender_site_id!r} sent a bundle of {claimed.site_id!r}"
        )
    public = _registered_key(sender_site_id, registry)
    contents = verify_bundle_bytes(_as_bytes(bundle), public, sender_site_id)
    manifest = contents.manifest
    accepted = AcceptedBundle(
        site_id=manifest.site_id,
        manifest_sha256=contents.manifest_sha256,
        signer_key_id=contents.signer_key_id,
        artifacts={a.name: a.sha256 for a in manifest.artifacts},
        n_documents=len(contents.corpus),
        labels=contents.corpus.labels,
        audit_passed=manifest.audit.passed,
        audit_rules_failed=manifest.audit.rules_failed,
        quality_override=manifest.quality_override,
        created_at=manifest.created_at,
    )
    weights = {
        a.name: bundle.weights[a.name] for a in manifest.artifacts if a.name in bundle.weights
    }
    encoder_files = {
        a.name: bundle.files[a.name]
        for a in manifest.artifacts
        if a.kind == "encoder_weights" and a.name in bundle.files
    }
    return VerifiedBundle(
        manifest, accepted, contents.corpus, weights, encoder_files, audit=contents.audit
    )
