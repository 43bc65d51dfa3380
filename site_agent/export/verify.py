"""Verify an export bundle folder with the one bundle verifier (``shared.bundle_verify``).

The site runs this on its own outbox (``build_bundle`` does before it moves a bundle into the
outbox, ``pack_bundle`` before it sends one); the coordinator runs the same checks on the
bytes it receives.
"""

from __future__ import annotations

from pathlib import Path

from protocol.export import ExportManifest
from shared.bundle_folder import read_bundle_folder
from shared.bundle_verify import BundleRejected, VerifiedContents, verify_bundle_bytes
from shared.errors import VerificationError
from shared.signing import load_public_key


def verify_bundle_folder(
    bundle_dir: Path, public_key_path: Path, site_id: str | None = None
) -> VerifiedContents:
    """Everything the bundle holds, parsed, once every check passed."""
    public = load_public_key(public_key_path)
    try:
        return verify_bundle_bytes(read_bundle_folder(bundle_dir), public, site_id)
    except BundleRejected as rejected:
        raise VerificationError(
            f"{bundle_dir}: bundle does not verify ({rejected.reason}): {rejected.detail}; "
            "fix: rebuild it with `site-agent synthesize --from export`",
            problems=[f"{rejected.reason}: {rejected.detail}"],
        ) from rejected


def verify_bundle(bundle_dir: Path, public_key_path: Path) -> ExportManifest:
    """The bundle's manifest, once signature, signer, hashes and audit record all check out."""
    return verify_bundle_folder(bundle_dir, public_key_path).manifest
