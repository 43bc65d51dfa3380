"""The release approval of ``[export] require_approval``: the signed bundle waits in the export
stage's folder until a named reviewer approves it, then moves into the outbox with the approval
inside its signed manifest.

``approve_bundle`` checks the waiting bundle with the one bundle verifier (it must be this
site's, signed with its key, and unchanged since it was built), records who approved it, when
and exactly which files (``protocol.export.bundle_content_sha256``), signs the manifest again
and verifies the result before anything reaches the outbox. The coordinator's verifier checks
the same record (``shared.bundle_verify.check_approval``) and its report shows it.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from protocol.export import (
    MANIFEST,
    SIGNATURE,
    ExportManifest,
    ReleaseApproval,
    bundle_content_sha256,
)
from shared.atomic import atomic_directory, atomic_write_bytes, atomic_write_text
from shared.bundle_folder import read_bundle_folder
from shared.bundle_verify import BundleRejected, verify_bundle_bytes
from shared.errors import ToolkitError, UsageError, VerificationError
from shared.signing import load_private_key, sign
from site_agent.export.bundle import SIGNER_PUBLIC_KEY, public_pem

AWAITING_APPROVAL = "awaiting-approval"
"""The folder, inside the export stage's, where a bundle waits for its approval."""


class ApprovalPending(ToolkitError):
    """The bundle is signed but waits for a reviewer's approval before it may leave."""

    exit_code = 7


def approved_copy(outbox: Path, bundle_dir: Path) -> Path:
    """Where the approved copy of a waiting bundle goes (the outbox, same bundle id)."""
    return outbox / bundle_dir.name


def waiting_bundle(bundle_dir: Path | None, outbox: Path) -> Path | None:
    """``bundle_dir`` when it is a bundle waiting for approval that has no approved copy in
    ``outbox`` yet; None otherwise."""
    if bundle_dir is None or bundle_dir.parent.name != AWAITING_APPROVAL:
        return None
    return None if approved_copy(outbox, bundle_dir).exists() else bundle_dir


def waiting_message(bundle_dir: Path, work_dir: Path) -> str:
    """What the operator is told while a bundle waits."""
    return (
        f"the bundle {bundle_dir.name} is signed and waits for its release approval in "
        f"{bundle_dir}; nothing is in the outbox until it is approved. fix: have the privacy "
        f"officer read `site-agent review --work-dir {work_dir}`, then run "
        f"`site-agent approve {bundle_dir} --by NAME --site-config SITE_TOML`"
    )


def _approval(reviewer: str, manifest: ExportManifest, now: datetime) -> ReleaseApproval:
    try:
        return ReleaseApproval(
            reviewer=reviewer,
            approved_at=now,
            approved_sha256=bundle_content_sha256(manifest.site_id, manifest.artifacts),
        )
    except ValidationError as exc:
        raise UsageError(
            f"--by {reviewer!r} is not a reviewer name (1 to 120 characters, no control "
            f"characters): {exc.errors()[0]['msg']}; fix: give the approver's name"
        ) from exc


def approve_bundle(
    bundle_dir: Path, reviewer: str, signing_key: Path, outbox: Path, now: datetime | None = None
) -> tuple[Path, ExportManifest]:
    """Record ``reviewer``'s approval of the waiting bundle in its signed manifest and put the
    approved bundle in ``outbox``; returns where it is and its manifest."""
    key = load_private_key(signing_key)
    try:
        contents = verify_bundle_bytes(read_bundle_folder(bundle_dir), key.public_key())
    except BundleRejected as rejected:
        raise VerificationError(
            f"{bundle_dir}: the waiting bundle does not verify with {signing_key} "
            f"({rejected.reason}: {rejected.detail}); nothing was approved. fix: re-run the "
            "export (site-agent synthesize --from export) and review the new bundle"
        ) from rejected
    manifest = contents.manifest
    if manifest.approval is not None:
        raise UsageError(
            f"{bundle_dir} was already approved by {manifest.approval.reviewer} at "
            f"{manifest.approval.approved_at:%Y-%m-%d %H:%M} UTC; fix: send that bundle"
        )
    target = approved_copy(outbox, bundle_dir)
    if target.exists():
        raise UsageError(f"{target} already exists; fix: remove it to approve again")
    approval = _approval(reviewer, manifest, now or datetime.now(UTC))
    approved = manifest.model_copy(update={"approval": approval})
    data = approved.model_dump_json(indent=2).encode("utf-8")
    with atomic_directory(target) as tmp:
        for entry in manifest.artifacts:
            (tmp / entry.name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bundle_dir / entry.name, tmp / entry.name)
        atomic_write_bytes(tmp / MANIFEST, data)
        atomic_write_text(tmp / SIGNATURE, sign(data, key) + "\n")
        try:
            verify_bundle_bytes(read_bundle_folder(tmp), key.public_key(), manifest.site_id)
        except BundleRejected as rejected:
            raise VerificationError(
                f"the approved copy of {bundle_dir.name} does not verify ({rejected.reason}: "
                f"{rejected.detail}); nothing reached the outbox. fix: approve it again"
            ) from rejected
    atomic_write_bytes(outbox / SIGNER_PUBLIC_KEY, public_pem(key))
    return target, approved
