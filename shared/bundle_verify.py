"""The one export-bundle verifier, over bytes: the site runs it before it sends, the
coordinator on everything it receives.

A bundle is the manifest bytes, their signature and a map of artifact name -> bytes. How the
bytes were obtained (a bundle folder, Flower records) is the caller's business; what they must
satisfy is decided here only. Checks, in order, the first failure rejecting the bundle with a
named reason (``protocol.rounds.ExclusionReason``):

0. sizes and counts within the caps (``shared.bundle_limits``), before anything is parsed;
1. the Ed25519 signature over the exact manifest bytes holds with the site's key (nothing
   unauthenticated is parsed further); at the coordinator also the site's signature over this
   run's nonce (``shared.freshness``), so that an earlier reply cannot be sent again;
2. the manifest is JSON within the caps, of a schema version this toolkit reads, and a valid
   :class:`~protocol.export.ExportManifest` (whose type refuses unsafe artifact names);
3. it names the expected site, and its signer key id is the key it was verified with;
4. every listed artifact is present with its size and SHA-256, and nothing else is present;
5. the artifacts are what a bundle may hold: one synthetic corpus, one audit report, at most
   one site report, encoder files only under ``encoder/`` and only in safe formats (and its
   model card ``encoder/README.md``, UTF-8 text within the caps, never copied by the
   coordinator, which writes its own card); the weights are safetensors by the format
   (``shared.safetensors_check``: consistent offsets, finite values) and the configs name no
   code and a known model type (``shared.safe_models``);
6. the audit record and the audit report agree, passed, and cover exactly this corpus, and the
   report's verdict follows from its own rules;
7. the corpus parses line by line within the caps (its label count too: one bundle with more
   labels than a site's policy accepts in an instruction would deny every site), is not empty
   and has as many documents as the manifest says;
8. provenance agrees: the encoder and site report name the audited corpus, audit record and
   report name the same real text, and the audit's kept/dropped counts add up to the corpus;
9. a release approval, when the manifest carries one, names exactly these files
   (``protocol.export.bundle_content_sha256``); a tampered one already failed check 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from protocol import SCHEMA_VERSION, Corpus, Document
from protocol.audit import AuditReport
from protocol.export import (
    MANIFEST,
    ArtifactEntry,
    ArtifactKind,
    ExportManifest,
    bundle_content_sha256,
)
from protocol.rounds import ExclusionReason
from shared.bundle_limits import DEFAULT_LIMITS, BundleLimits
from shared.errors import VerificationError
from shared.freshness import reply_is_fresh
from shared.judge import report_verdict
from shared.limits import LimitExceeded, check_json_text, parse_json
from shared.provenance import sha256_bytes
from shared.safe_models import config_problem
from shared.safetensors_check import UnsafeWeights, check_safetensors
from shared.signing import key_id, verify

SUPPORTED_SCHEMA_VERSIONS = frozenset({SCHEMA_VERSION})
ENCODER_PREFIX = "encoder/"
# Weights only as safetensors; configs and tokenizers as JSON, text or SentencePiece models.
ENCODER_SUFFIXES = (".safetensors", ".json", ".txt", ".model")
ENCODER_CARD = ENCODER_PREFIX + "README.md"  # the encoder's model card (shared/model_card.py)
SINGLE_KINDS: dict[ArtifactKind, tuple[int, int]] = {
    "synthetic_corpus": (1, 1),
    "audit_report": (1, 1),
    "site_report": (0, 1),
}
MAX_SIGNATURE_CHARS = 200


class BundleRejected(VerificationError):
    """A bundle failed a check; ``reason`` names which, ``detail`` says what was found."""

    def __init__(self, reason: ExclusionReason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: ExclusionReason = reason
        self.detail = detail


@dataclass(frozen=True)
class BundleBytes:
    """A bundle as bytes: the manifest, its base64 signature, every artifact by name."""

    manifest: bytes
    signature: str
    artifacts: Mapping[str, bytes]
    reply_signature: str | None = None  # the site's signature over the run's nonce (collect)


@dataclass(frozen=True)
class VerifiedContents:
    """What a bundle that passed every check holds, parsed."""

    manifest: ExportManifest
    audit: AuditReport
    corpus: Corpus
    signer_key_id: str
    manifest_sha256: str


def parse_corpus_bytes(data: bytes, limits: BundleLimits = DEFAULT_LIMITS) -> Corpus:
    """A JSONL corpus from bytes, each line checked against the caps and validated as a
    Document; raises :class:`LimitExceeded` or ``ValueError``."""
    if len(data) > limits.max_corpus_bytes:
        raise LimitExceeded("the synthetic corpus", f"{limits.max_corpus_bytes} bytes",
                            f"{len(data)} bytes")  # fmt: skip
    lines = [line for line in data.split(b"\n") if line.strip()]
    if len(lines) > limits.max_documents:
        raise LimitExceeded("the synthetic corpus", f"{limits.max_documents} documents",
                            f"{len(lines)} lines")  # fmt: skip
    line_limits = limits.corpus_line()
    documents = []
    for number, line in enumerate(lines, 1):
        document = Document.model_validate_json(
            check_json_text(line, line_limits, f"corpus line {number}")
        )
        if len(document.text) > limits.max_document_chars:
            raise LimitExceeded(f"corpus line {number}", f"{limits.max_document_chars} characters",
                                f"{len(document.text)} characters")  # fmt: skip
        documents.append(document)
    corpus = Corpus(documents=tuple(documents))
    if len(corpus.labels) > limits.max_labels:
        raise LimitExceeded("the synthetic corpus", f"{limits.max_labels} labels",
                            f"{len(corpus.labels)} labels")  # fmt: skip
    return corpus


def parse_manifest(data: bytes, limits: BundleLimits = DEFAULT_LIMITS) -> ExportManifest:
    """The manifest, once it is JSON within the caps, of a known schema and a valid
    ExportManifest."""
    try:
        raw = parse_json(data, limits.json_limits(limits.max_manifest_bytes), MANIFEST)
    except LimitExceeded as exc:
        raise BundleRejected("over_limit", str(exc)) from exc
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise BundleRejected("malformed_bundle", f"{MANIFEST} is not JSON") from exc
    if not isinstance(raw, dict):
        raise BundleRejected("malformed_bundle", f"{MANIFEST} is not a JSON object")
    version = raw.get("schema_version")
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise BundleRejected(
            "schema_version",
            f"manifest schema {version!r}; this toolkit reads {sorted(SUPPORTED_SCHEMA_VERSIONS)}",
        )
    try:
        return ExportManifest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " -> ".join(map(str, first["loc"]))
        raise BundleRejected(
            "malformed_bundle",
            f"{MANIFEST}: {exc.error_count()} error(s), first at [{where}]: {first['msg']}",
        ) from exc


def _check_sizes(bundle: BundleBytes, limits: BundleLimits) -> None:
    """Step 0: nothing is parsed, hashed or verified before the sizes are known to fit."""
    if len(bundle.manifest) > limits.max_manifest_bytes:
        raise BundleRejected(
            "over_limit",
            f"{MANIFEST}: {len(bundle.manifest)} bytes, cap {limits.max_manifest_bytes}",
        )
    if len(bundle.artifacts) > limits.max_files:
        raise BundleRejected("over_limit", f"{len(bundle.artifacts)} files, cap {limits.max_files}")
    for name, data in bundle.artifacts.items():
        if len(data) > limits.max_file_bytes:
            raise BundleRejected(
                "over_limit", f"{name[:80]!r}: {len(data)} bytes, cap {limits.max_file_bytes}"
            )
    total = sum(len(data) for data in bundle.artifacts.values())
    if total > limits.max_bundle_bytes:
        raise BundleRejected("over_limit", f"{total} bytes in all, cap {limits.max_bundle_bytes}")


def check_signature(data: bytes, signature: str, public: Ed25519PublicKey) -> None:
    """Step 1: the manifest bytes are signed by ``public``; raises :class:`BundleRejected`."""
    if not isinstance(signature, str) or len(signature) > MAX_SIGNATURE_CHARS:
        raise BundleRejected("bad_signature", "signature is too long to be an Ed25519 one")
    try:
        verify(data, signature.strip(), public)
    except VerificationError as exc:
        raise BundleRejected(
            "bad_signature",
            "manifest signature does not verify with the site's key (changed after signing, "
            "or signed with another key)",
        ) from exc


def _check_fresh(bundle: BundleBytes, nonce: str, public: Ed25519PublicKey) -> None:
    if not reply_is_fresh(nonce, bundle.manifest, bundle.reply_signature, public):
        raise BundleRejected(
            "stale_reply",
            "the reply is not signed over this run's collect nonce (an earlier reply sent "
            "again, or a site without its signing key configured)",
        )


def _check_signer(manifest: ExportManifest, public: Ed25519PublicKey) -> str:
    expected = key_id(public)
    if manifest.signer_key_id != expected:
        raise BundleRejected(
            "unknown_site_key",
            f"manifest names signer {manifest.signer_key_id or '(none)'}, the site's key is "
            f"{expected}",
        )
    return expected


def _check_listed(manifest: ExportManifest, artifacts: Mapping[str, bytes]) -> None:
    listed = {entry.name for entry in manifest.artifacts}
    unlisted = sorted(set(artifacts) - listed)
    if unlisted:
        raise BundleRejected(
            "unlisted_artifact", f"{len(unlisted)} file(s) not in the manifest: {unlisted[:5]!r}"
        )
    for entry in manifest.artifacts:
        data = artifacts.get(entry.name)
        if data is None:
            raise BundleRejected("missing_artifact", f"artifact {entry.name!r} listed but absent")
        if len(data) != entry.size_bytes or sha256_bytes(data) != entry.sha256:
            raise BundleRejected("hash_mismatch", f"artifact {entry.name!r} content changed")


def _check_kinds(manifest: ExportManifest) -> None:
    for kind, (low, high) in SINGLE_KINDS.items():
        count = sum(1 for e in manifest.artifacts if e.kind == kind)
        if not low <= count <= high:
            raise BundleRejected(
                "malformed_bundle", f"{count} artifact(s) of kind {kind!r}; allowed {low}-{high}"
            )
    for entry in manifest.artifacts:
        under_encoder = entry.name.startswith(ENCODER_PREFIX)
        if (entry.kind == "encoder_weights") != under_encoder:
            raise BundleRejected(
                "malformed_bundle",
                f"artifact {entry.name!r} of kind {entry.kind!r}: encoder files and only they "
                f"lie under {ENCODER_PREFIX}",
            )
        if under_encoder and not (
            entry.name.endswith(ENCODER_SUFFIXES) or entry.name == ENCODER_CARD
        ):
            raise BundleRejected(
                "malformed_bundle",
                f"encoder file {entry.name!r} is not one of {list(ENCODER_SUFFIXES)} nor "
                f"{ENCODER_CARD}",
            )
    encoder = [e.name for e in manifest.artifacts if e.kind == "encoder_weights"]
    if encoder and not any(n.endswith(".safetensors") for n in encoder):
        raise BundleRejected("malformed_bundle", "encoder files without .safetensors weights")


def _check_encoder(
    manifest: ExportManifest, artifacts: Mapping[str, bytes], limits: BundleLimits
) -> None:
    """Weights are safetensors by their bytes, with finite values (they may be averaged into
    every site's model); JSON files parse within the caps and name no code to run."""
    for entry in manifest.artifacts:
        if entry.kind != "encoder_weights":
            continue
        data, file_name = artifacts[entry.name], entry.name.rsplit("/", 1)[-1]
        try:
            if entry.name.endswith(".safetensors"):
                header = limits.json_limits(min(limits.max_json_bytes, 100 * 1024 * 1024))
                check_safetensors(data, header, limits.max_tensors)
            elif entry.name.endswith(".json"):
                cap = limits.max_tokenizer_bytes if file_name == "tokenizer.json" else None
                parsed = parse_json(data, limits.json_limits(cap), entry.name)
                problem = config_problem(file_name, parsed) if file_name in (
                    "config.json", "tokenizer_config.json") else None  # fmt: skip
                if problem:
                    raise BundleRejected("unsafe_model", f"{entry.name}: {problem}")
            elif entry.name == ENCODER_CARD:
                _check_card_text(data, limits)
        except UnsafeWeights as exc:
            raise BundleRejected("unsafe_model", f"{entry.name}: {exc}") from exc
        except LimitExceeded as exc:
            raise BundleRejected("over_limit", str(exc)) from exc
        except ValueError as exc:
            raise BundleRejected("malformed_bundle", f"{entry.name} is not JSON") from exc


def _check_card_text(data: bytes, limits: BundleLimits) -> None:
    """The sender's model card is only ever shown as text: UTF-8 within the JSON cap. Its
    content is not trusted; the receiver writes the card of the model it builds from these
    files (``coordinator/report/model_cards.py``) and never copies this one."""
    if len(data) > limits.max_json_bytes:
        raise LimitExceeded(ENCODER_CARD, f"{limits.max_json_bytes} bytes", f"{len(data)} bytes")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BundleRejected("malformed_bundle", f"{ENCODER_CARD} is not UTF-8 text") from exc


def _one(manifest: ExportManifest, kind: ArtifactKind) -> ArtifactEntry:
    return next(e for e in manifest.artifacts if e.kind == kind)


def _check_audit(
    manifest: ExportManifest, artifacts: Mapping[str, bytes], limits: BundleLimits
) -> AuditReport:
    record = manifest.audit
    if not record.passed or record.rules_failed:
        failed = ", ".join(record.rules_failed) or "unspecified rule"
        raise BundleRejected("audit_failed", f"the audit record says failed: {failed}")
    corpus_entry, report_entry = (_one(manifest, k) for k in ("synthetic_corpus", "audit_report"))
    if corpus_entry.sha256 != record.corpus_sha256:
        raise BundleRejected("audit_failed", "the audit record does not cover the corpus sent")
    if report_entry.sha256 != record.report_sha256:
        raise BundleRejected("audit_failed", "the audit report is not the one the record cites")
    try:
        report = AuditReport.model_validate_json(
            check_json_text(artifacts[report_entry.name], limits.json_limits(), "the audit report")
        )
    except LimitExceeded as exc:
        raise BundleRejected("over_limit", str(exc)) from exc
    except ValidationError as exc:
        raise BundleRejected("audit_failed", "the audit report is not a valid report") from exc
    if report.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
        raise BundleRejected("schema_version", f"audit report schema {report.schema_version!r}")
    if report.audited_corpus_sha256 != corpus_entry.sha256:
        raise BundleRejected("audit_failed", "the audit report covers another corpus")
    if not report.passed or not report.rules:
        raise BundleRejected("audit_failed", "the audit report says failed or checks no rule")
    verdict = report_verdict(report.rules)  # judged again on the report's own figures
    broken = [
        r.name
        for r, j in zip(report.rules, verdict.judgements, strict=True)
        if not r.passed or not j.passed
    ]
    if broken:
        raise BundleRejected(
            "audit_failed", f"rule(s) {broken} do not hold on the report's own figures"
        )
    return report


def _check_corpus(
    manifest: ExportManifest, artifacts: Mapping[str, bytes], limits: BundleLimits
) -> Corpus:
    data = artifacts[_one(manifest, "synthetic_corpus").name]
    try:
        corpus = parse_corpus_bytes(data, limits)
    except LimitExceeded as exc:
        raise BundleRejected("over_limit", str(exc)) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise BundleRejected("malformed_bundle", "the synthetic corpus does not validate") from exc
    if len(corpus) == 0:
        raise BundleRejected("malformed_bundle", "the synthetic corpus is empty")
    if len(corpus) != manifest.n_documents:
        raise BundleRejected(
            "malformed_bundle",
            f"the corpus holds {len(corpus)} documents, the manifest says {manifest.n_documents}",
        )
    return corpus


def _check_provenance(
    manifest: ExportManifest,
    artifacts: Mapping[str, bytes],
    report: AuditReport,
    corpus: Corpus,
    limits: BundleLimits,
) -> None:
    """What was trained or computed on the corpus, and what the audit compared, all agree."""
    audited = manifest.audit.corpus_sha256
    trained = any(e.kind in ("encoder_weights", "site_report") for e in manifest.artifacts)
    if trained and manifest.trained_on_corpus_sha256 != audited:
        raise BundleRejected(
            "provenance_mismatch", "the encoder/site report name another corpus than the audited"
        )
    site_reports = [e for e in manifest.artifacts if e.kind == "site_report"]
    for entry in site_reports:
        try:
            named = parse_json(artifacts[entry.name], limits.json_limits(), entry.name).get(
                "trained_on_corpus_sha256"
            )
        except LimitExceeded as exc:
            raise BundleRejected("over_limit", str(exc)) from exc
        except (ValueError, AttributeError) as exc:
            raise BundleRejected(
                "malformed_bundle", "the site report is not a JSON object"
            ) from exc
        if named != audited:
            raise BundleRejected(
                "provenance_mismatch", "the site report was computed on another corpus"
            )
    if not report.real_corpus_sha256 or report.real_corpus_sha256 != (
        manifest.audit.real_corpus_sha256
    ):
        raise BundleRejected(
            "provenance_mismatch", "the audit record and report name different real text"
        )
    dropped = {d.id for d in report.dropped_documents}
    kept = {d.id for d in corpus.documents}
    if (
        report.n_kept_documents != len(corpus)
        or len(report.dropped_documents) != report.n_input_documents - report.n_kept_documents
        or dropped & kept
    ):
        raise BundleRejected(
            "provenance_mismatch", "the audit's document counts do not add up to this corpus"
        )


def check_approval(manifest: ExportManifest) -> None:
    """A release approval names the files it approved; refuse one that names others (an
    approval carried over to a bundle whose files changed)."""
    approval = manifest.approval
    if approval is None:
        return
    content = bundle_content_sha256(manifest.site_id, manifest.artifacts)
    if approval.approved_sha256 != content:
        raise BundleRejected(
            "approval_mismatch",
            f"the release approval by {approval.reviewer!r} names bundle content "
            f"{approval.approved_sha256[:16]}…, these files are {content[:16]}…",
        )


def verify_bundle_bytes(
    bundle: BundleBytes,
    public: Ed25519PublicKey,
    site_id: str | None = None,
    *,
    limits: BundleLimits = DEFAULT_LIMITS,
    nonce: str | None = None,
) -> VerifiedContents:
    """Every check, in order; raises :class:`BundleRejected` naming the first that fails.

    ``public`` is the key the site registered (the coordinator) or its own (the site);
    ``site_id``, when given, is the site the bundle must belong to; ``nonce``, when given, is
    the collect phase's nonce the reply must be signed over.
    """
    _check_sizes(bundle, limits)
    check_signature(bundle.manifest, bundle.signature, public)
    if nonce is not None:
        _check_fresh(bundle, nonce, public)
    manifest = parse_manifest(bundle.manifest, limits)
    if site_id is not None and manifest.site_id != site_id:
        raise BundleRejected(
            "site_mismatch", f"site {site_id!r} sent a bundle of {manifest.site_id!r}"
        )
    signer = _check_signer(manifest, public)
    _check_listed(manifest, bundle.artifacts)
    _check_kinds(manifest)
    _check_encoder(manifest, bundle.artifacts, limits)
    report = _check_audit(manifest, bundle.artifacts, limits)
    corpus = _check_corpus(manifest, bundle.artifacts, limits)
    _check_provenance(manifest, bundle.artifacts, report, corpus, limits)
    check_approval(manifest)
    return VerifiedContents(manifest, report, corpus, signer, sha256_bytes(bundle.manifest))
