"""The model card of the synthetic-trained encoder the bundle ships (``encoder/README.md``).

Filled from what the signed manifest binds: the audit report (verdict and privacy figures),
the site report (the encoder's scores on the site's private test split), the corpus's size and
labels, the base models and config digest; plus what the site config says about the run
(generation mode, language, the base model's licence). Rendered by ``shared.model_card``.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.audit import AuditReport
from shared.model_card import AuditFigure, Figure, ModelCard, TrainingSource
from site_agent.train_synthetic.report import ModelScores, SiteReport


@dataclass(frozen=True)
class CardFacts:
    """What the card says that the bundle's records do not: how the corpus was made."""

    mode: str = ""
    language: str = ""
    licence: str = ""


def audit_figures(report: AuditReport) -> tuple[AuditFigure, ...]:
    """Every rule the audit judged, with its measured figure and threshold."""
    return tuple(
        AuditFigure(r.name, r.measured, r.comparison, r.threshold, r.passed) for r in report.rules
    )


SCORES = (
    ("token precision", "token_precision"),
    ("token recall", "token_recall"),
    ("token F1", "token_f1"),
    ("exact span F1", "exact_f1"),
    ("overlap span F1", "overlap_f1"),
    ("document leakage rate", "leakage_rate"),
)


def score_figures(split: str, scores: ModelScores, n_documents: int) -> tuple[Figure, ...]:
    return tuple(
        Figure(split, metric, float(getattr(scores, field)), n_documents=n_documents)
        for metric, field in SCORES
    )


def encoder_card(
    *,
    site_id: str,
    labels: tuple[str, ...],
    n_documents: int,
    base_models: dict[str, str],
    audit: AuditReport,
    site_report: SiteReport | None,
    provenance: tuple[tuple[str, str], ...],
    facts: CardFacts,
) -> ModelCard:
    """The card of the encoder ``site_id`` trained on its audited synthetic corpus."""
    evaluation: tuple[Figure, ...] = ()
    notes: tuple[str, ...] = ()
    if site_report is not None:
        split = f"{site_id} test split"
        evaluation = score_figures(split, site_report.synthetic, site_report.n_test_documents)
        notes = (
            "For comparison, the site's gold-trained annotator (never exported) scores token "
            f"F1 {site_report.gold.token_f1:.4f} on the same split; the gap (gold minus "
            f"this encoder) is {site_report.token_f1_gap:+.4f}. No bootstrap intervals are "
            "computed at the site.",
        )
    base = base_models.get("annotator", "unknown")
    return ModelCard(
        name=f"deid-synth {site_id} synthetic-trained encoder",
        built_by=(
            f"A token-classification encoder for de-identifying clinical notes, fine-tuned by "
            f"deid-synth at {site_id} from `{base}` on the site's audited synthetic notes only, "
            "and exported in the site's signed bundle."
        ),
        base_model=base,
        labels=labels,
        training=(
            TrainingSource(
                site_id=site_id,
                n_documents=n_documents,
                audit_passed=audit.passed,
                mode=facts.mode,
                figures=audit_figures(audit),
            ),
        ),
        evaluation=evaluation,
        provenance=provenance,
        licence=facts.licence,
        language=(facts.language,) if facts.language else (),
        notes=notes,
    )
