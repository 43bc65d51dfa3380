"""Verify an export bundle: signature, signer, every hash and size, nothing unlisted.

The coordinator calls :func:`verify_bundle` on every bundle it collects; a site can call it
on its own outbox before sending.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from protocol.export import ExportManifest
from shared.errors import VerificationError
from shared.provenance import sha256_file
from shared.signing import key_id, load_public_key, verify
from shared.validation_messages import validation_lines
from site_agent.export.bundle import MANIFEST, SIGNATURE


def _read_manifest(bundle_dir: Path) -> tuple[bytes, str]:
    manifest_path, signature_path = bundle_dir / MANIFEST, bundle_dir / SIGNATURE
    for path in (manifest_path, signature_path):
        if not path.is_file():
            raise VerificationError(
                f"{path}: missing; fix: a bundle holds {MANIFEST} and {SIGNATURE} "
                "written by `site-agent synthesize`"
            )
    return manifest_path.read_bytes(), signature_path.read_text(encoding="ascii").strip()


def _safe_name(bundle_dir: Path, name: str) -> Path:
    parts = PurePosixPath(name).parts
    if PurePosixPath(name).is_absolute() or ".." in parts or not parts:
        raise VerificationError(f"{bundle_dir}: artifact name {name!r} escapes the bundle")
    return bundle_dir.joinpath(*parts)


def _check_artifacts(bundle_dir: Path, manifest: ExportManifest) -> None:
    problems: list[str] = []
    listed = {MANIFEST, SIGNATURE}
    for entry in manifest.artifacts:
        path = _safe_name(bundle_dir, entry.name)
        listed.add(PurePosixPath(entry.name).as_posix())
        if not path.is_file():
            problems.append(f"{entry.name}: listed in the manifest but missing")
        elif path.stat().st_size != entry.size_bytes or sha256_file(path) != entry.sha256:
            problems.append(f"{entry.name}: content differs from the signed hash")
    present = {p.relative_to(bundle_dir).as_posix() for p in bundle_dir.rglob("*") if p.is_file()}
    problems.extend(f"{name}: present but not in the manifest" for name in sorted(present - listed))
    corpora = [e for e in manifest.artifacts if e.kind == "synthetic_corpus"]
    if len(corpora) != 1:
        problems.append(f"expected exactly one synthetic corpus, found {len(corpora)}")
    elif corpora[0].sha256 != manifest.audit.corpus_sha256:
        problems.append("the synthetic corpus is not the one the audit record covers")
    if not manifest.audit.passed:
        problems.append(f"the audit record says failed: {list(manifest.audit.rules_failed)}")
    if problems:
        raise VerificationError(f"{bundle_dir}: bundle does not verify", problems=problems)


def verify_bundle(bundle_dir: Path, public_key_path: Path) -> ExportManifest:
    """The bundle's manifest, once signature, signer, hashes and audit record all check out."""
    data, signature = _read_manifest(bundle_dir)
    public = load_public_key(public_key_path)
    verify(data, signature, public)
    try:
        manifest = ExportManifest.model_validate_json(data)
    except ValidationError as exc:
        raise VerificationError(
            f"{bundle_dir / MANIFEST}: not a valid manifest", problems=validation_lines(exc)
        ) from exc
    if manifest.signer_key_id and manifest.signer_key_id != key_id(public):
        raise VerificationError(
            f"{bundle_dir}: manifest names signer {manifest.signer_key_id} but was verified "
            f"with key {key_id(public)}; fix: use the site's registered public key"
        )
    _check_artifacts(bundle_dir, manifest)
    return manifest
