"""Stage 7, audit: the n-gram privacy audit that gates export.

Writes ``audit.json`` and the filtered corpus it covers. A failed audit stops the pipeline;
a missing audit engine blocks export too: nothing leaves without a passing report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.audit import AuditReport
from protocol.site_config import SiteConfig
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus
from shared.errors import ExportRefusedError, QualityGateError
from shared.provenance import sha256_file
from site_agent.audit.seal import seal_key, write_seal
from site_agent.pseudonymise.records import read_surrogates
from site_agent.stages import engines
from site_agent.stages.base import Stage, StageContext, StageOutput

REPORT_FILE = "audit.json"


def audited_corpus_file(out_dir: Path, report: AuditReport) -> Path:
    """The corpus file under ``out_dir`` whose SHA-256 the report names."""
    for path in sorted(out_dir.rglob("*.jsonl")):
        if sha256_file(path) == report.audited_corpus_sha256:
            return path
    raise ExportRefusedError(
        f"{out_dir}: no corpus file matches the audited SHA-256 "
        f"{report.audited_corpus_sha256[:16]}...; fix: re-run the audit stage"
    )


def pii_surfaces(surrogates: Path) -> list[tuple[str, str]]:
    """The ``(label, surrogate)`` pairs the generator saw instead of real PII (searched too)."""
    records = read_surrogates(surrogates)
    return sorted({(r.label, r.surrogate) for r in records if r.surrogate != r.original})


def audit_synthetic(
    inputs: dict[str, Path], config: SiteConfig, out_dir: Path
) -> tuple[AuditReport, Path]:
    """Audit the annotated synthetic corpus against the gold training split."""
    canaries = inputs["pseudonymise.canaries"]
    report = engines.audit(
        real=read_corpus(inputs["split.train"]),
        synthetic=read_corpus(inputs["annotate.corpus"]),
        policy=config.audit.policy,
        surrogates=pii_surfaces(inputs["pseudonymise.surrogates"]),
        canaries=canaries if canaries.stat().st_size else None,
        tokenizer=engines.model_reference(config.adapt.base_model),
        out_dir=out_dir,
    )
    if report is None:
        raise ExportRefusedError(
            "the privacy audit engine (site_agent.audit) is not installed, so no audit report "
            "exists and export is blocked; fix: install the full toolkit and re-run from audit"
        )
    report_path = out_dir / REPORT_FILE
    if not report_path.exists():
        atomic_write_text(report_path, report.model_dump_json(indent=2))
    if config.signing_key is not None and config.signing_key.is_file():
        write_seal(report_path, report.audited_corpus_sha256, seal_key(config.signing_key))
    return report, audited_corpus_file(out_dir, report)


def _settings(config: SiteConfig) -> dict[str, Any]:
    # the signing key seals audit.json: another key means another seal
    return {
        "audit": config.audit,
        "tokenizer": config.adapt.base_model,
        "seal": str(config.signing_key),
    }


def _run(ctx: StageContext) -> StageOutput:
    report, corpus = audit_synthetic(dict(ctx.inputs), ctx.config, ctx.stage_dir)
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
    run=_run,
    settings=_settings,
    inputs=(
        "split.train",
        "pseudonymise.surrogates",
        "pseudonymise.canaries",
        "annotate.corpus",
    ),
    description="n-gram privacy audit (gates export)",
)
