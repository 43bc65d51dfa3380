"""What one run measured, and the same figures summarised over a condition's repeats.

A run's utility comes from its two evaluations on the test split (the regime's model, and the
machine annotator as the gold reference); its privacy figures come from its audit report
(sensitive n-gram recall, nearest-real ROUGE, PII echo), so each utility number sits beside the
privacy cost of the synthetic corpus it came from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from protocol.audit import AuditReport
from protocol.base import ProtocolModel
from protocol.evaluation import EvaluationReport
from shared.metrics.repeats import RepeatSummary, summarise_repeats
from site_agent.audit.rules import flatten
from site_agent.pipeline.stage import StageRecord, artifact_path

# privacy headline figures: the first audit figure (after filtering) matching each pattern;
# n-grams of the generator's tokens first (seed 000 Table 7), then of words
PRIVACY_HEADLINES: dict[str, tuple[str, ...]] = {
    "sensitive_5gram_recall": (
        r"ngram_recall\.tokens\.5\.sensitive_recall",
        r"ngram_recall\.\w+\.5\.sensitive_recall",
    ),
    "5gram_recall": (r"ngram_recall\.tokens\.5\.recall", r"ngram_recall\.\w+\.5\.recall"),
    "nearest_rouge_max": (r"nearest_real\.rouge_5\.max", r"nearest_real\.rouge_\d+\.max"),
    "nearest_rouge_mean": (r"nearest_real\.rouge_5\.mean", r"nearest_real\.rouge_\d+\.mean"),
    # echoes of real gold strings, not of the pipeline's own surrogates, where the audit tells
    "pii_echo_documents": (
        r"pii_echo\.identifying_documents_gold",
        r"pii_echo\.identifying_documents",
    ),
    "canaries_found": (r"canaries\.found",),
    # membership inference on the membership canaries (issue 14)
    "membership_auc": (r"membership\.auc",),
    "membership_auc_ci_low": (r"membership\.auc_ci_low",),
    "membership_auc_ci_high": (r"membership\.auc_ci_high",),
    "membership_tpr_at_1pct_fpr": (r"membership\.tpr_at_1pct_fpr",),
    "membership_tpr_at_0_1pct_fpr": (r"membership\.tpr_at_0_1pct_fpr",),
    "membership_members": (r"membership\.members",),
    "membership_non_members": (r"membership\.non_members",),
    "membership_secrets_reproduced": (r"membership\.secrets_reproduced",),
    "membership_members_reproduced": (r"membership\.members_reproduced",),
    "membership_exposure_members": (r"membership\.exposure\.members_mean",),
    "membership_exposure_non_members": (r"membership\.exposure\.non_members_mean",),
    "membership_exposure_max": (r"membership\.exposure\.max_possible",),
}
# what the generator wrote, whichever corpus a run trained on: a secret in a note the filters
# dropped still fails the gate (rule membership_secrets_reproduced reads the figure before)
WRITTEN_HEADLINES: dict[str, str] = {
    "membership_secrets_written": "membership.secrets_reproduced",
    "membership_members_written": "membership.members_reproduced",
}


class RunResult(ProtocolModel):
    """``result.json`` of one run: its condition, figures, and how its stages went."""

    run_id: str
    study: str
    condition: dict[str, Any]
    condition_label: str
    repeat: int
    run_digest: str
    status: Literal["completed", "failed"]
    error: str | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    intervals: dict[str, tuple[float, float]] = Field(default_factory=dict)
    per_label: dict[str, dict[str, float]] = Field(default_factory=dict)
    privacy: dict[str, float] = Field(default_factory=dict)
    training_set: dict[str, int] = Field(default_factory=dict)
    stages: list[dict[str, Any]] = Field(default_factory=list)
    seconds: float = 0.0


def utility(report: EvaluationReport, prefix: str = "") -> dict[str, float]:
    """Token (seqeval) and exact/overlap span P/R/F1, and document leakage."""
    figures = {
        "token_precision": report.token.micro.precision,
        "token_recall": report.token.micro.recall,
        "token_f1": report.token.micro.f1,
        "exact_f1": report.exact.micro.f1,
        "overlap_precision": report.overlap.micro.precision,
        "overlap_recall": report.overlap.micro.recall,
        "overlap_f1": report.overlap.micro.f1,
        "leakage_rate": report.leakage.leakage_rate,
        "leakage_rate_pii": report.leakage.leakage_rate_pii,
    }
    return {f"{prefix}{k}": float(v) for k, v in figures.items()}


def stage_figures(report: AuditReport, stage: Literal["before", "after"]) -> dict[str, float]:
    """Every numeric audit figure of one stage, under ``measure.dotted.name``."""
    return {
        f"{name}.{key}": value
        for name, measure in report.measures.items()
        if isinstance(measure, Mapping)
        for key, value in flatten(measure.get(stage, {})).items()
    }


def privacy_figures(
    report: AuditReport, stage: Literal["before", "after"] = "after"
) -> dict[str, float]:
    """The audit's headline figures of the corpus a run trained on (``after`` filtering: the
    audited corpus; ``before``: the unfiltered one), plus whether the audit passed."""
    figures = stage_figures(report, stage)
    kept = report.n_kept_documents if stage == "after" else report.n_input_documents
    out = {"audit_passed": float(report.passed), "kept_documents": float(kept)}
    for name, patterns in PRIVACY_HEADLINES.items():
        for pattern in patterns:
            found = sorted(k for k in figures if re.fullmatch(pattern, k))
            if found:
                out[name] = figures[found[0]]
                break
    before = figures if stage == "before" else stage_figures(report, "before")
    out.update({name: before[key] for name, key in WRITTEN_HEADLINES.items() if key in before})
    return out


def _artifact(records: Mapping[str, StageRecord], folders: Mapping[str, Path], key: str) -> Path:
    stage, _, name = key.partition(".")
    return artifact_path(folders[stage], records[stage].artifacts[name])


def collect(records: Mapping[str, StageRecord], folders: Mapping[str, Path]) -> dict[str, Any]:
    """Metrics, intervals, per-label scores, privacy figures and sizes from a run's stages."""
    model = EvaluationReport.model_validate_json(
        _artifact(records, folders, "train-evaluate.evaluation").read_text(encoding="utf-8")
    )
    gold = EvaluationReport.model_validate_json(
        _artifact(records, folders, "evaluate-gold.evaluation").read_text(encoding="utf-8")
    )
    audit = AuditReport.model_validate_json(
        _artifact(records, folders, "audit.report").read_text(encoding="utf-8")
    )
    sizes = json.loads(
        _artifact(records, folders, "train-evaluate.training_set").read_text(encoding="utf-8")
    )
    intervals = {
        name: (ci.low, ci.high)
        for name, ci in model.confidence_intervals.items()
        if name in {"token.micro.f1", "exact.micro.f1", "overlap.micro.f1", "leakage.rate"}
    }
    per_label = {
        label: {"overlap_recall": s.recall, "overlap_f1": s.f1}
        for label, s in sorted(model.overlap.per_label.items())
    }
    return {
        "metrics": {**utility(model), **utility(gold, "gold_")},
        "intervals": intervals,
        "per_label": per_label,
        "privacy": privacy_figures(
            audit, "before" if sizes.get("synthetic_unfiltered") else "after"
        ),
        "training_set": sizes,
    }


class ConditionSummary(ProtocolModel):
    """One condition of a study over its repeats."""

    study: str
    condition: dict[str, Any]
    condition_label: str
    n_runs: int
    n_failed: int
    metrics: dict[str, RepeatSummary] = Field(default_factory=dict)
    per_label: dict[str, RepeatSummary] = Field(default_factory=dict)


def _summaries(rows: Sequence[Mapping[str, float]], seed: int) -> dict[str, RepeatSummary]:
    names = sorted({k for row in rows for k in row})
    return {
        name: summarise_repeats([row[name] for row in rows if name in row], seed=seed)
        for name in names
    }


def summarise(results: Sequence[RunResult], seed: int = 0) -> list[ConditionSummary]:
    """One summary per (study, condition), in the order the runs were planned."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for result in results:
        groups.setdefault((result.study, result.condition_label), []).append(result)
    out = []
    for (study, label), runs in groups.items():
        done = [r for r in runs if r.status == "completed"]
        rows = [{**r.metrics, **r.privacy, **r.training_set} for r in done]
        labels = [{k: v["overlap_recall"] for k, v in r.per_label.items()} for r in done]
        out.append(
            ConditionSummary(
                study=study,
                condition=runs[0].condition,
                condition_label=label,
                n_runs=len(runs),
                n_failed=len(runs) - len(done),
                metrics=_summaries(rows, seed),
                per_label=_summaries(labels, seed),
            )
        )
    return out
