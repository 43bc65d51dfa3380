"""What the review page shows, gathered from a site's work dir: the bundle the export stage
built (waiting for approval, or in the outbox), the audit's local report, the real training
notes, every generated note, and the approval when there is one."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import Corpus
from protocol.audit import AuditReport
from protocol.export import MANIFEST, ExportManifest, bundle_content_sha256
from shared.bundle_verify import BundleRejected, parse_manifest
from shared.corpus_io import read_corpus
from shared.errors import UsageError
from site_agent.export.approval import approved_copy, waiting_bundle
from site_agent.export.bundle import CORPUS_NAME
from site_agent.stages.pipeline import stage_artifact

OUTBOX = "outbox"


@dataclass(frozen=True)
class ReleaseFacts:
    """One bundle and everything the review says about it."""

    work_dir: Path
    bundle_dir: Path
    manifest: ExportManifest
    approved: ExportManifest | None
    """The approved copy's manifest, once ``site-agent approve`` has run."""
    waiting: bool
    """The bundle waits for approval (``[export] require_approval``) and has none yet."""
    audit: AuditReport
    exported: Corpus
    generated: Corpus
    real: Corpus

    @property
    def content_sha256(self) -> str:
        """What an approval of this bundle names (``protocol.export.bundle_content_sha256``)."""
        return bundle_content_sha256(self.manifest.site_id, self.manifest.artifacts)

    @property
    def sends_encoder(self) -> bool:
        return any(a.kind == "encoder_weights" for a in self.manifest.artifacts)

    def measures(self, stage: str = "after") -> dict[str, Any]:
        """Each measure's figures before or after filtering, as the audit recorded them."""
        return {
            name: figures.get(stage, {})
            for name, figures in self.audit.measures.items()
            if isinstance(figures, dict)
        }


def label_counts(corpus: Corpus) -> Counter[str]:
    return Counter(span.label for doc in corpus.documents for span in doc.spans)


def _needed(work_dir: Path, stage: str, artifact: str) -> Path:
    path = stage_artifact(work_dir, stage, artifact)
    if path is None or not path.exists():
        raise UsageError(
            f"{work_dir}: the {stage} stage has not completed ({stage}.{artifact} not found), "
            "so there is no bundle to review; fix: run site-agent synthesize first (with "
            "[export] require_approval = true the bundle waits for the review)"
        )
    return path


def _manifest(bundle_dir: Path) -> ExportManifest:
    try:
        return parse_manifest((bundle_dir / MANIFEST).read_bytes())
    except (OSError, BundleRejected) as exc:
        raise UsageError(
            f"{bundle_dir / MANIFEST}: not a readable bundle manifest ({exc}); fix: re-run the "
            "export (site-agent synthesize --from export)"
        ) from exc


def gather(work_dir: Path) -> ReleaseFacts:
    """The facts of the bundle the export stage last built in ``work_dir``."""
    bundle_dir = _needed(work_dir, "export", "bundle")
    manifest = _manifest(bundle_dir)
    outbox = work_dir / OUTBOX
    approved_dir = approved_copy(outbox, bundle_dir)
    waiting = waiting_bundle(bundle_dir, outbox) is not None
    approved = None
    if not waiting and approved_dir != bundle_dir and (approved_dir / MANIFEST).exists():
        approved = _manifest(approved_dir)
    audit = AuditReport.model_validate_json(_needed(work_dir, "audit", "report").read_text())
    return ReleaseFacts(
        work_dir=work_dir,
        bundle_dir=bundle_dir,
        manifest=manifest,
        approved=approved,
        waiting=waiting,
        audit=audit,
        exported=read_corpus(bundle_dir / CORPUS_NAME, "jsonl"),
        generated=read_corpus(_needed(work_dir, "annotate", "corpus")),
        real=read_corpus(_needed(work_dir, "split", "train")),
    )
