"""Build the signed export bundle ``<work_dir>/outbox/<bundle-id>/``.

What may leave: the audited synthetic corpus, the audit report (real document ids replaced by
keyed hashes), optionally the encoder trained on synthetic data only (with its model card
``encoder/README.md``: numbers and label names, ``site_agent/export/card.py``) and a
numbers-only site report. What may not: real text, gold spans,
gold-trained weights, the surrogate map. ``build_bundle`` is three steps:
``judge_export`` (the gate in ``gate.py``, then the degenerate-corpus check of
``quality.py``), ``assemble`` (what may leave, copied into a temporary folder) and
``sign_bundle`` (manifest, signature, and the one bundle verifier re-hashing every artifact
against the signed manifest and its audit record); only then is the folder moved into the
outbox.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
)
from pydantic import ValidationError

from protocol import Corpus
from protocol.audit import AUDIT_JSON, AuditReport
from protocol.export import (
    MANIFEST,
    SIGNATURE,
    ArtifactEntry,
    ArtifactKind,
    AuditRecord,
    ExportManifest,
)
from shared.atomic import atomic_directory, atomic_write_bytes, atomic_write_text
from shared.bundle_folder import read_bundle_folder
from shared.bundle_verify import (
    ENCODER_CARD,
    ENCODER_SUFFIXES,
    BundleRejected,
    verify_bundle_bytes,
)
from shared.errors import ExportRefusedError
from shared.model_card import render_model_card
from shared.provenance import sha256_bytes, sha256_file, sha256_tree, tool_version
from shared.signing import derived_secret, key_id, load_private_key, sign
from site_agent.export.card import CardFacts, encoder_card
from site_agent.export.gate import AuditBinding, require_passing_audit
from site_agent.export.quality import QualityOverride, check_quality
from site_agent.export.redact import redact_real_ids
from site_agent.export.settings import ExportSettings
from site_agent.train_synthetic.report import SiteReport

CORPUS_NAME = "synthetic.jsonl"
REPORT_NAME = "site_report.json"
REAL_ID_PURPOSE = "deid-synth real-id key"  # keyed hashes of real document ids
SIGNER_PUBLIC_KEY = "signer.pub.pem"  # beside the bundles: what the site verifies them with
ENCODER_DIR = "encoder"
TRAINED_ON = "trained_on.json"  # {"trained_on_corpus_sha256": ...}; checked, not shipped
ENCODER_EXCLUDED = (
    "trainer_state.json",
    "training_args.json",
    "eval_results.json",
    TRAINED_ON,
)
TRAINED_ON_KEY = "trained_on_corpus_sha256"


@dataclass(frozen=True)
class BundleRequest:
    """Everything the export needs; ``gold_annotator_sha256`` guards against a mix-up.

    ``binding`` names this site's own real training text, synthetic corpus and audit policy;
    the gate checks the audit report against them (there is no export without it).
    ``quality`` holds the floors below which the corpus counts as degenerate (refused unless
    it names a reason to accept it); ``quality_report_path`` is the site report to read the
    synthetic encoder's F1 from when the bundle does not carry one.
    """

    site_id: str
    corpus_path: Path
    audit_report_path: Path | None
    signing_key_path: Path
    outbox: Path
    config_digest: str
    base_models: dict[str, str]
    binding: AuditBinding
    synthetic_encoder_dir: Path | None = None
    site_report_path: Path | None = None
    gold_annotator_sha256: str | None = None
    quality: ExportSettings = field(default_factory=ExportSettings)
    quality_report_path: Path | None = None
    card: CardFacts = field(default_factory=CardFacts)


def _encoder_files(encoder_dir: Path) -> list[Path]:
    files = [
        p
        for p in sorted(encoder_dir.rglob("*"))
        if p.is_file() and p.suffix in ENCODER_SUFFIXES and p.name not in ENCODER_EXCLUDED
    ]
    if not any(p.suffix == ".safetensors" for p in files):
        raise ExportRefusedError(
            f"{encoder_dir}: no .safetensors weights; fix: save the synthetic encoder with "
            "safe_serialization (the only weight format that may be exported)"
        )
    return files


def _check_encoder(request: BundleRequest) -> None:
    encoder = request.synthetic_encoder_dir
    if encoder is None:
        return
    if request.gold_annotator_sha256 and sha256_tree(encoder) == request.gold_annotator_sha256:
        raise ExportRefusedError(
            f"{encoder}: these are the gold-trained annotator's weights, which never leave "
            "the site; fix: export the encoder trained on the synthetic corpus"
        )


def write_trained_on(encoder_dir: Path, corpus_sha256: str) -> None:
    """Stamp into an encoder folder the SHA-256 of the corpus file it was trained on."""
    atomic_write_text(encoder_dir / TRAINED_ON, json.dumps({TRAINED_ON_KEY: corpus_sha256}))


def _named_corpus(path: Path) -> str:
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get(TRAINED_ON_KEY, "")
    except (OSError, ValueError, AttributeError):
        value = ""
    return value if isinstance(value, str) else ""


def trained_on(request: BundleRequest, audited_sha256: str) -> str:
    """The corpus hash the exported encoder and site report name; refuse unless it is the
    audited corpus (what trained on anything else must not leave with this audit)."""
    named = {}
    if request.synthetic_encoder_dir is not None:
        named[request.synthetic_encoder_dir / TRAINED_ON] = "encoder"
    if request.site_report_path is not None:
        named[request.site_report_path] = "site report"
    for path, what in named.items():
        found = _named_corpus(path)
        if found != audited_sha256:
            raise ExportRefusedError(
                f"export refused by rule 'trained_on_audited_corpus': the {what} ({path}) "
                f"names training corpus {found[:16] or 'none'}…, the audit cleared "
                f"{audited_sha256[:16]}…; fix: re-run train-synthetic on the audited corpus "
                "(site-agent synthesize --from train-synthetic)"
            )
    return audited_sha256 if named else ""


def _copy(source: Path, bundle: Path, name: str, kind: ArtifactKind) -> ArtifactEntry:
    target = bundle / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return ArtifactEntry(
        name=name, kind=kind, sha256=sha256_file(target), size_bytes=target.stat().st_size
    )


def _write(data: bytes, bundle: Path, name: str, kind: ArtifactKind) -> ArtifactEntry:
    atomic_write_bytes(bundle / name, data)
    return ArtifactEntry(name=name, kind=kind, sha256=sha256_bytes(data), size_bytes=len(data))


def _bundle_id(site_id: str, corpus_sha: str, now: datetime) -> str:
    return f"{site_id}-{now:%Y%m%dT%H%M%SZ}-{corpus_sha[:8]}"


def _read_corpus(corpus_path: Path) -> Corpus:
    from shared.corpus_io import read_corpus

    return read_corpus(corpus_path, "jsonl")


def _site_report(path: Path | None) -> SiteReport | None:
    """The shipped site report, when it is one train-synthetic wrote (the verifier only asks
    for a JSON object naming the corpus)."""
    if path is None:
        return None
    try:
        return SiteReport.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError:
        return None


def _card(
    request: BundleRequest,
    report: AuditReport,
    labels: tuple[str, ...],
    n_documents: int,
    shipped_audit_sha256: str,
) -> str:
    """The encoder's README.md, from the records this manifest binds. Its evaluation comes
    from the site report only when the bundle ships that report (what the site chose not to
    send stays out of the card too)."""
    site_report = _site_report(request.site_report_path)
    provenance = (
        ("toolkit", tool_version()),
        ("site config digest", request.config_digest),
        *((f"base model ({role})", label) for role, label in sorted(request.base_models.items())),
        ("audited synthetic corpus SHA-256", report.audited_corpus_sha256),
        ("audit report SHA-256 (as shipped)", shipped_audit_sha256),
        ("bundle", "the SHA-256 of the bundle's signed manifest.json, which lists this card"),
    )
    card = encoder_card(
        site_id=request.site_id,
        labels=labels,
        n_documents=n_documents,
        base_models=request.base_models,
        audit=report,
        site_report=site_report,
        provenance=provenance,
        facts=request.card,
    )
    return render_model_card(card)


@dataclass(frozen=True)
class Cleared:
    """What the checks before anything is written found: the audit report the gate passed,
    the corpus, the training corpus the encoder names, and any quality override."""

    report: AuditReport
    corpus: Corpus
    trained_on_sha256: str
    quality_override: QualityOverride | None


def judge_export(request: BundleRequest) -> Cleared:
    """The checks before anything is written: the export gate, the encoder, what it was
    trained on, the quality of the corpus (each refusal an ExportRefusedError)."""
    report = require_passing_audit(request.corpus_path, request.audit_report_path, request.binding)
    _check_encoder(request)
    trained_on_sha = trained_on(request, report.audited_corpus_sha256)
    corpus = _read_corpus(request.corpus_path)
    override = check_quality(
        corpus, request.quality_report_path or request.site_report_path, request.quality
    )
    return Cleared(report, corpus, trained_on_sha, override)


def assemble(
    request: BundleRequest, cleared: Cleared, key: Ed25519PrivateKey, folder: Path
) -> list[ArtifactEntry]:
    """Copy what may leave into ``folder``: the corpus, the audit report with real ids
    redacted, the site report, the encoder and its card; the entries, in manifest order."""
    assert request.audit_report_path is not None  # the gate refused otherwise
    redacted = redact_real_ids(
        request.audit_report_path.read_bytes(), derived_secret(key, REAL_ID_PURPOSE)
    )
    entries = [
        _copy(request.corpus_path, folder, CORPUS_NAME, "synthetic_corpus"),
        _write(redacted, folder, AUDIT_JSON, "audit_report"),
    ]  # fmt: skip
    if request.site_report_path is not None:
        entries.append(_copy(request.site_report_path, folder, REPORT_NAME, "site_report"))
    if request.synthetic_encoder_dir is not None:
        root = request.synthetic_encoder_dir
        entries.extend(
            _copy(p, folder, f"{ENCODER_DIR}/{p.relative_to(root).as_posix()}", "encoder_weights")
            for p in _encoder_files(root)
        )
        corpus = cleared.corpus
        card = _card(request, cleared.report, corpus.labels, len(corpus), entries[1].sha256)
        entries.append(_write(card.encode("utf-8"), folder, ENCODER_CARD, "encoder_weights"))
    return entries


def sign_bundle(
    folder: Path, manifest: ExportManifest, key: Ed25519PrivateKey, site_id: str
) -> None:
    """Write the manifest and its signature into ``folder``, then run the one bundle verifier
    on the finished folder."""
    data = manifest.model_dump_json(indent=2).encode("utf-8")
    atomic_write_bytes(folder / MANIFEST, data)
    atomic_write_text(folder / SIGNATURE, sign(data, key) + "\n")
    _verify_before_release(folder, key, site_id)


def build_bundle(request: BundleRequest) -> tuple[Path, ExportManifest]:
    """Judge, assemble, sign: return the bundle folder and its manifest. Nothing reaches the
    outbox unless every check passed and the signed folder verifies."""
    cleared = judge_export(request)
    report = cleared.report
    key = load_private_key(request.signing_key_path)
    now = datetime.now(UTC)
    bundle_dir = request.outbox / _bundle_id(request.site_id, report.audited_corpus_sha256, now)
    with atomic_directory(bundle_dir) as tmp:
        entries = assemble(request, cleared, key, tmp)
        manifest = ExportManifest(
            site_id=request.site_id,
            created_at=now,
            tool_version=tool_version(),
            config_digest=request.config_digest,
            base_models=request.base_models,
            labels=cleared.corpus.labels,
            n_documents=len(cleared.corpus),
            artifacts=tuple(entries),
            audit=AuditRecord(
                report_sha256=entries[1].sha256,
                corpus_sha256=report.audited_corpus_sha256,
                real_corpus_sha256=report.real_corpus_sha256,
                passed=report.passed,
                rules_failed=report.failed_rules,
            ),
            trained_on_corpus_sha256=cleared.trained_on_sha256,
            signer_key_id=key_id(key.public_key()),
            quality_override=cleared.quality_override,
        )
        sign_bundle(tmp, manifest, key, request.site_id)
    atomic_write_bytes(request.outbox / SIGNER_PUBLIC_KEY, public_pem(key))
    return bundle_dir, manifest


def public_pem(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)


def _verify_before_release(bundle: Path, key: Ed25519PrivateKey, site_id: str) -> None:
    """The one bundle verifier, run on the finished folder before it moves into the outbox."""
    try:
        verify_bundle_bytes(read_bundle_folder(bundle), key.public_key(), site_id)
    except BundleRejected as rejected:
        raise ExportRefusedError(
            f"the bundle built for {site_id} does not verify ({rejected.reason}: "
            f"{rejected.detail}); nothing was exported. fix: re-run the audit and export stages"
        ) from rejected
