"""A ``README.md`` model card in every model folder the coordinator built (per-site, pooled,
exported, FedAvg), from the federation report: who trained it on which audited synthetic
corpora (the sites' verified audit figures), and its score at every site with the bootstrap
intervals. Rendered by ``shared.model_card``, the writer the sites' export uses too. Models
given to ``coordinator evaluate`` are the operator's folders and get none.
"""

from __future__ import annotations

from pathlib import Path

from coordinator.aggregate.built_model import BuiltModel
from protocol.audit import AuditReport
from protocol.rounds import FederationReport, TrainedModel
from shared.model_card import (
    AuditFigure,
    Figure,
    ModelCard,
    TrainingSource,
    write_model_card,
)
from shared.model_record import read_record

CELL_METRICS = (
    ("token F1", "token_f1"),
    ("span overlap F1", "span_overlap_f1"),
    ("document leakage", "document_leakage"),
)


def _built_by(info: TrainedModel, base: str) -> str:
    sites = ", ".join(info.trained_on)
    start = (
        f"A token-classification encoder for de-identifying clinical notes, fine-tuned from "
        f"`{base}`"
    )
    return {
        "site": f"{start} by the coordinator on {sites}'s audited synthetic corpus "
        "(labels harmonised to the shared scheme).",
        "pooled": f"{start} by the coordinator on the union of the audited synthetic corpora "
        f"of {sites} (labels harmonised to the shared scheme).",
        "fedavg": f"{start} by FedAvg over {info.rounds} round(s): {sites} trained locally on "
        "their audited synthetic corpora and the coordinator averaged the weights.",
        "export": f"A token-classification encoder trained at {sites} on its audited synthetic "
        "corpus and sent in its signed export bundle; the coordinator scored it at every site "
        "(in the site's own labels, mapped to the shared scheme for scoring).",
    }.get(info.kind, f"{start}.")


def _figures(audit: AuditReport | None) -> tuple[AuditFigure, ...]:
    if audit is None:
        return ()
    return tuple(
        AuditFigure(r.name, r.measured, r.comparison, r.threshold, r.passed) for r in audit.rules
    )


def evaluation(report: FederationReport, model: str) -> tuple[Figure, ...]:
    """The model's cell at every site: each metric with its bootstrap interval."""
    figures = []
    for site in report.sites:
        cell = report.cell(model, site.site_id)
        if cell is None or cell.metrics is None:
            continue
        split = f"{site.site_id} test split"
        for name, field in CELL_METRICS:
            est = getattr(cell.metrics, field)
            figures.append(
                Figure(split, name, est.value, est.low, est.high, site.test_split.n_documents)
            )
    return tuple(figures)


def model_card(
    report: FederationReport,
    model: BuiltModel,
    audits: dict[str, AuditReport | None],
    base_model: str,
    licence: str,
) -> ModelCard:
    """The card of one coordinator-built model, every figure taken from ``report``."""
    info = model.info
    sites = {s.site_id: s for s in report.sites}
    bundles = {b.site_id: b for b in report.bundles}
    training = tuple(
        TrainingSource(
            site_id=site,
            n_documents=sites[site].synthetic_documents if site in sites else 0,
            audit_passed=sites[site].audit_passed if site in sites else None,
            figures=_figures(audits.get(site)),
        )
        for site in info.trained_on
    )
    labels = bundles[info.trained_on[0]].labels if info.kind == "export" else report.labels
    provenance = (
        ("toolkit", report.provenance.tool_version),
        ("coordinator config digest", report.provenance.config_digest),
        ("base model", base_model),
        ("label mapping", report.provenance.mapping_name or "none (labels shared as-is)"),
        *(
            (f"bundle {site} (manifest SHA-256)", bundles[site].manifest_sha256)
            for site in info.trained_on
            if site in bundles
        ),
        ("report", "report.json of this run (the figures above are its matrix cells)"),
    )
    return ModelCard(
        name=f"deid-synth {info.name}",
        built_by=_built_by(info, base_model),
        base_model=base_model,
        labels=labels,
        training=training,
        evaluation=evaluation(report, info.name),
        provenance=provenance,
        licence=licence,
    )


def write_model_cards(
    report: FederationReport,
    models: list[BuiltModel],
    audits: dict[str, AuditReport | None],
    base_model: Path,
) -> list[Path]:
    """``README.md`` in the folder of every model the coordinator built; their paths."""
    record = read_record(base_model) if base_model.is_dir() else None
    licence = record.licence if record else ""
    name = record.name if record else base_model.name
    return [
        write_model_card(m.model_dir, model_card(report, m, audits, name, licence))
        for m in models
        if m.info.kind != "given"
    ]
