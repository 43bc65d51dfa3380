"""Stage 7, audit: the n-gram privacy audit that gates export.

Writes ``audit.json`` and the filtered corpus it covers. A failed audit stops the pipeline;
nothing leaves without a passing report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.audit import AUDIT_JSON as REPORT_FILE
from protocol.audit import AuditReport, CanarySet
from shared.atomic import atomic_write_text
from shared.errors import ExportRefusedError, QualityGateError
from shared.provenance import sha256_file
from site_agent.audit.corpus_audit import run_audit
from site_agent.audit.reference import read_generator_reference
from site_agent.audit.seal import seal_key, write_seal
from site_agent.audit.settings import AuditSettings
from site_agent.canaries.membership import load_membership_canaries
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages.knobs import pii_surfaces, tokenizer_reference


def audited_corpus_file(out_dir: Path, report: AuditReport) -> Path:
    """The corpus file under ``out_dir`` whose SHA-256 the report names."""
    for path in sorted(out_dir.rglob("*.jsonl")):
        if sha256_file(path) == report.audited_corpus_sha256:
            return path
    raise ExportRefusedError(
        f"{out_dir}: no corpus file matches the audited SHA-256 "
        f"{report.audited_corpus_sha256[:16]}...; fix: re-run the audit stage"
    )


def audit_synthetic_notes(
    inputs: dict[str, Path],
    settings: AuditSettings,
    tokenizer: str,
    out_dir: Path,
    signing_key: Path | None = None,
) -> tuple[AuditReport, Path]:
    """Audit the annotated synthetic corpus against every real note the generator saw (the
    gold training and validation splits: adaptation text and prompts); seal the report with
    ``signing_key`` when the site has one. Returns the report and the audited corpus.

    The gold spans of the real split are the real PII; the surrogates the generator saw
    instead are searched too, as ``(label, surface)`` pairs. Membership canaries, when the
    pseudonymise stage made some, are attacked from the synthetic corpus alone.
    """
    canaries = inputs["pseudonymise.canaries"]
    planted = (
        CanarySet.model_validate_json(canaries.read_text()) if canaries.stat().st_size else None
    )
    report = run_audit(
        read_generator_reference(inputs["split.train"], inputs.get("split.validation")),
        inputs["annotate.corpus"],  # read a chunk of notes at a time
        settings.policy,
        out_dir,
        extra_pii_surfaces=pii_surfaces(inputs["pseudonymise.surrogates"]),
        canaries=planted,
        membership_canaries=load_membership_canaries(
            inputs.get("pseudonymise.membership_canaries")
        ),
        tokenizer=tokenizer,
        chunk_documents=settings.chunk_documents,
    )
    report_path = out_dir / REPORT_FILE
    if not report_path.exists():
        atomic_write_text(report_path, report.model_dump_json(indent=2))
    if signing_key is not None and signing_key.is_file():
        write_seal(report_path, report.audited_corpus_sha256, seal_key(signing_key))
    return report, audited_corpus_file(out_dir, report)


def _settings(config: SiteConfig) -> dict[str, Any]:
    # the signing key seals audit.json: another key means another seal; the chunk size
    # changes the memory used, never the results, so it does not make the stage run again
    return {
        "audit": config.audit.model_dump(mode="json", exclude={"chunk_documents"}),
        "tokenizer": config.adapt.base_model,
        "seal": str(config.signing_key),
    }


def _audit_stage(ctx: StageContext) -> StageOutput:
    config = ctx.config
    report, corpus = audit_synthetic_notes(
        dict(ctx.inputs),
        config.audit,
        tokenizer_reference(config),
        ctx.stage_dir,
        config.signing_key,
    )
    if not report.passed:
        raise QualityGateError(
            f"privacy audit failed rule(s) {list(report.failed_rules)}; see "
            f"{ctx.stage_dir / REPORT_FILE}; export is blocked. fix: adapt on more data, "
            "lower the amount, or tighten the audit's filtering"
        )
    return StageOutput(
        artifacts={"report": ctx.stage_dir / REPORT_FILE, "corpus": corpus},
        summary={"kept": report.n_kept_documents, "input": report.n_input_documents},
    )


STAGE = Stage(
    name="audit",
    run=_audit_stage,
    settings=_settings,
    inputs=(
        "split.train",
        "split.validation",  # the prompts are its notes' openings
        "pseudonymise.surrogates",
        "pseudonymise.canaries",
        "pseudonymise.membership_canaries",
        "annotate.corpus",
    ),
    description="n-gram privacy audit (gates export)",
)
