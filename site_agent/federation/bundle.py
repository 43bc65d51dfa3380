"""The site's latest signed export bundle, found on disk, verified, packed into Flower records.

Nothing is sent that the one bundle verifier (``shared.bundle_verify``) has not passed with the
site's own public key: the packer reads the bundle folder as plain files (never following a
manifest name or a link out of it) and sends exactly the verified bytes.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from flwr.app import ConfigRecord, RecordDict
from flwr.app.typing import ConfigRecordValues

from protocol.export import MANIFEST, SIGNATURE, ExportManifest
from shared import wire
from shared.bundle_folder import read_bundle_folder
from shared.bundle_verify import (
    BundleBytes,
    BundleRejected,
    VerifiedContents,
    parse_manifest,
    verify_bundle_bytes,
)
from shared.errors import VerificationError
from shared.freshness import REPLY_SIGNATURE, sign_collect_reply
from shared.signing import load_private_key, load_public_key
from shared.transport import safetensors_bytes_to_record
from site_agent.export.bundle import SIGNER_PUBLIC_KEY
from site_agent.federation.layout import SiteFailure

log = logging.getLogger(__name__)


def is_partial(folder: Path) -> bool:
    """A folder an export is building or replacing (``.<id>.*.tmp``, ``.<id>.old``), or any
    hidden or ``.tmp`` folder: never a bundle to send."""
    return folder.name.startswith(".") or folder.name.endswith(".tmp")


def latest_bundle(export_dir: Path) -> Path:
    """The bundle folder whose manifest is newest (``export_dir`` itself may be one); hidden
    and ``.tmp`` folders (an interrupted export's) are never picked."""
    candidates = [p.parent for p in export_dir.glob("*/" + MANIFEST) if not is_partial(p.parent)]
    if (export_dir / MANIFEST).exists():
        candidates.append(export_dir)
    if not candidates:
        raise SiteFailure("no_export_bundle")

    def created(folder: Path) -> str:
        try:
            raw = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            return str(raw["created_at"])
        except (OSError, ValueError, KeyError, TypeError):
            return ""

    return max(candidates, key=created)


def read_manifest(bundle_dir: Path) -> ExportManifest:
    try:
        return parse_manifest((bundle_dir / MANIFEST).read_bytes())
    except (OSError, BundleRejected) as exc:
        raise SiteFailure("no_export_bundle") from exc


def signer_public_key(bundle_dir: Path, configured: Path | None = None) -> Path:
    """The site's signing public key: the configured one, else the one the export left."""
    for candidate in (configured, bundle_dir.parent / SIGNER_PUBLIC_KEY):
        if candidate is not None and candidate.is_file():
            return candidate
    raise SiteFailure("bundle_unverified")


def verified_bundle(
    bundle_dir: Path, public_key_path: Path | None = None
) -> tuple[BundleBytes, VerifiedContents]:
    """The bundle's bytes and parsed contents, once the one verifier passed them."""
    try:
        public = load_public_key(signer_public_key(bundle_dir, public_key_path))
        bundle = read_bundle_folder(bundle_dir)
        return bundle, verify_bundle_bytes(bundle, public)
    except (BundleRejected, VerificationError, OSError) as exc:
        log.error("the export bundle %s does not verify; nothing sent: %s", bundle_dir.name, exc)
        raise SiteFailure("bundle_unverified") from exc


def pack_bundle(
    bundle_dir: Path,
    public_key_path: Path | None = None,
    nonce: str | None = None,
    signing_key: Path | None = None,
) -> RecordDict:
    """Manifest, signature and artifacts once they verify; encoder weights as ArrayRecords.

    With the coordinator's ``nonce``, the site's ``signing_key`` also signs the nonce and the
    manifest's hash (``shared.freshness``), binding this reply to this run."""
    bundle, contents = verified_bundle(bundle_dir, public_key_path)
    files: dict[str, ConfigRecordValues] = {
        MANIFEST: bundle.manifest,
        SIGNATURE: bundle.signature,
    }
    if nonce is not None:
        if signing_key is None or not signing_key.is_file():
            log.error("no signing key to sign the collect nonce with; set signing-key")
            raise SiteFailure("signing_key_missing")
        key = load_private_key(signing_key)
        files[REPLY_SIGNATURE] = sign_collect_reply(nonce, bundle.manifest, key)
    content = RecordDict()
    for entry in contents.manifest.artifacts:
        data = bundle.artifacts[entry.name]
        if entry.kind == "encoder_weights" and entry.name.endswith(".safetensors"):
            record, header = safetensors_bytes_to_record(data)
            content[wire.WEIGHTS_PREFIX + entry.name] = record
            files[wire.HEADER_PREFIX + entry.name] = header
        else:
            files[wire.FILE_PREFIX + entry.name] = data
    content[wire.BUNDLE] = ConfigRecord(files)
    return content
