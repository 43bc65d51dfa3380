"""Check a received export bundle before anything is trained on it.

The checks themselves are the one bundle verifier in ``shared.bundle_verify`` (the site runs
the same before it sends). Here: the manifest signature is checked first, with the sender's
registered key (a bundle that another registered site signed is named as such, still without
parsing it); then the bundle is rebuilt into bytes (weights arrive as arrays plus the
safetensors header, whose JSON is capped before it is read), verified with that key and this
run's nonce, and summarised for the report (a :class:`VerifiedBundle`). The first failure
rejects the bundle with a named reason; the round goes on without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from flwr.app import ArrayRecord

from coordinator.verified_bundle import VerifiedBundle
from protocol.registry import SiteRegistry
from protocol.rounds import AcceptedBundle
from shared.bundle_limits import DEFAULT_LIMITS, BundleLimits
from shared.bundle_verify import (
    BundleBytes,
    BundleRejected,
    check_signature,
    parse_corpus_bytes,
    parse_manifest,
    verify_bundle_bytes,
)
from shared.limits import LimitExceeded, check_json_text
from shared.safetensors_check import HEADER_LIMITS
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
    reply_signature: str | None = None  # the site's signature over this run's nonce


def _registered_key(site_id: str, registry: SiteRegistry) -> Ed25519PublicKey:
    keys = registry.sites.get(site_id)
    if keys is None:
        raise BundleRejected("unknown_site_key", f"site {site_id!r} is not registered")
    public = serialization.load_pem_public_key(keys.signing_public_key_pem.encode())
    if not isinstance(public, Ed25519PublicKey):
        raise BundleRejected("unknown_site_key", f"site {site_id!r}: registered key is not Ed25519")
    return public


def _signer_key(
    bundle: ReceivedBundle, sender: str, registry: SiteRegistry, limits: BundleLimits
) -> Ed25519PublicKey:
    """The sender's registered key, once the manifest signature verifies with it.

    Nothing unauthenticated is parsed: a bundle signed with another registered site's key is
    named ``site_mismatch`` (or ``unknown_site_key`` when it names the unregistered sender
    itself); else an unregistered sender is ``unknown_site_key`` and a signature that
    verifies with no key ``bad_signature``.
    """
    if len(bundle.manifest_bytes) > limits.max_manifest_bytes:
        raise BundleRejected("over_limit", f"manifest of {len(bundle.manifest_bytes)} bytes")
    registered = sender in registry.sites
    if registered:
        public = _registered_key(sender, registry)
        try:
            check_signature(bundle.manifest_bytes, bundle.signature, public)
            return public
        except BundleRejected:
            pass
    for other in sorted(set(registry.sites) - {sender}):
        try:
            check_signature(
                bundle.manifest_bytes, bundle.signature, _registered_key(other, registry)
            )
        except BundleRejected:
            continue
        # authenticated by ``other``'s key, so now safe to read (within the caps)
        if not registered and parse_manifest(bundle.manifest_bytes, limits).site_id == sender:
            raise BundleRejected(
                "unknown_site_key",
                f"site {sender!r} is not registered (its bundle is signed with the key "
                f"registered for {other!r})",
            )
        raise BundleRejected("site_mismatch", f"site {sender!r} sent a bundle of {other!r}")
    if not registered:
        raise BundleRejected("unknown_site_key", f"site {sender!r} is not registered")
    check_signature(bundle.manifest_bytes, bundle.signature, public)  # raises bad_signature
    return public


def _as_bytes(bundle: ReceivedBundle, limits: BundleLimits) -> BundleBytes:
    artifacts = dict(bundle.files)
    header_limits = HEADER_LIMITS.model_copy(update={"max_members": limits.max_json_members})
    for name, (record, header) in bundle.weights.items():
        if name in artifacts:
            raise BundleRejected("malformed_bundle", f"artifact {name!r} sent twice")
        try:
            check_json_text(header, header_limits, f"safetensors header of {name!r}")
            artifacts[name] = record_to_safetensors_bytes(record, header)
        except LimitExceeded as exc:
            raise BundleRejected("over_limit", str(exc)) from exc
        except Exception as exc:  # whatever hostile arrays and headers raise
            raise BundleRejected("malformed_bundle", f"weights {name!r} do not rebuild") from exc
    return BundleBytes(bundle.manifest_bytes, bundle.signature, artifacts, bundle.reply_signature)


def verify_received_bundle(
    bundle: ReceivedBundle,
    sender_site_id: str,
    registry: SiteRegistry,
    *,
    limits: BundleLimits = DEFAULT_LIMITS,
    nonce: str | None = None,
) -> VerifiedBundle:
    """Every check, in order; raises :class:`BundleRejected` naming the first that fails.

    ``nonce``: the collect phase's, which the reply must be signed over (None: not checked,
    for a bundle read from disk)."""
    public = _signer_key(bundle, sender_site_id, registry, limits)
    contents = verify_bundle_bytes(
        _as_bytes(bundle, limits), public, sender_site_id, limits=limits, nonce=nonce
    )
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
        approval=manifest.approval,
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
