"""The report's tables as rows of strings, shared by the Markdown and HTML writers."""

from __future__ import annotations

from protocol.export import ReleaseApproval
from protocol.rounds import CrossSiteCell, FederationReport, PrivacySpend

METRICS = {
    "token_f1": "Token F1",
    "span_overlap_f1": "Span overlap F1",
    "document_leakage": "Document leakage (lower is better)",
}


def model_names(report: FederationReport) -> list[str]:
    return [m.name for m in report.models]


def site_ids(report: FederationReport) -> list[str]:
    return [s.site_id for s in report.sites]


def value(cell: CrossSiteCell | None, metric: str) -> float | None:
    if cell is None or cell.metrics is None:
        return None
    estimate = getattr(cell.metrics, metric)
    return float(estimate.value)


def cell_text(cell: CrossSiteCell | None, metric: str) -> str:
    if cell is None:
        return "-"
    if cell.metrics is None:
        return f"excluded ({cell.error})"
    est = getattr(cell.metrics, metric)
    return f"{est.value:.3f} [{est.low:.3f}, {est.high:.3f}]"


def matrix_rows(report: FederationReport, metric: str) -> list[list[str]]:
    """Header row then one row per model (plus the site baselines), one column per site."""
    sites = site_ids(report)
    rows = [["model", *sites]]
    for model in model_names(report):
        rows.append([model, *(cell_text(report.cell(model, s), metric) for s in sites)])
    rows.append(["site baseline (gold)", *(cell_text(report.baseline(s), metric) for s in sites)])
    return rows


def recall_rows(report: FederationReport) -> list[list[str]]:
    rows = [["model", "site", *report.labels]]
    for cell in report.matrix:
        if cell.metrics is None:
            continue
        recall = cell.metrics.label_recall
        rows.append(
            [
                cell.model,
                cell.site_id,
                *(f"{recall[label]:.3f}" if label in recall else "-" for label in report.labels),
            ]
        )
    return rows


def delta_rows(report: FederationReport) -> list[list[str]]:
    """Token F1 of each synthetic-trained model minus the site's gold-trained baseline."""
    sites = site_ids(report)
    rows = [["model", *sites]]
    for model in model_names(report):
        row = [model]
        for site in sites:
            ours, gold = (
                value(report.cell(model, site), "token_f1"),
                value(report.baseline(site), "token_f1"),
            )
            row.append("-" if ours is None or gold is None else f"{ours - gold:+.3f}")
        rows.append(row)
    return rows


def approval_cell(approval: ReleaseApproval | None) -> str:
    """Who approved the bundle's release and when, or that the site asked for no approval."""
    if approval is None:
        return "not required"
    return (
        f"{approval.reviewer}, {approval.approved_at:%Y-%m-%d %H:%M} UTC "
        f"(content {approval.approved_sha256[:12]})"
    )


def audit_rows(report: FederationReport) -> list[list[str]]:
    rows = [
        [
            "site",
            "test docs",
            "synthetic docs",
            "audit",
            "failed rules",
            "quality override",
            "release approval",
            "bundle",
        ]
    ]
    for site in report.sites:
        audit = {True: "passed", False: "FAILED", None: "no export"}[site.audit_passed]
        override = site.quality_override
        rows.append(
            [
                site.site_id,
                str(site.test_split.n_documents),
                str(site.synthetic_documents),
                audit,
                ", ".join(site.audit_rules_failed) or "-",
                "-" if override is None else f"{override.reason} ({'; '.join(override.findings)})",
                approval_cell(site.approval),
                (site.bundle_sha256 or "not accepted")[:16],
            ]
        )
    return rows


def privacy_guarantee(spend: PrivacySpend | None) -> str:
    """A site's differential-privacy guarantee and spend, in words, from its last reply."""
    if spend is None:
        return "no differential privacy: figures are exact (rounded only)"
    return (
        f"({spend.epsilon_budget:g}, {spend.delta:g})-DP per {spend.unit} over the test "
        f"split's life; spent epsilon {spend.epsilon_spent:.3g}, left {spend.epsilon_left:.3g} "
        f"({spend.models_scored} models scored, {spend.models_left} left); noise sd "
        f"{spend.noise_sd:.3g} on each figure"
    )


def evaluation_bound_rows(report: FederationReport) -> list[list[str]]:
    """What each site's evaluation policy lets this run learn about its test split, as the
    site stated it (the site's own log holds the same line), and its privacy spend."""
    rows = [["site", "privacy guarantee", "evaluation bound"]]
    rows += [
        [s.site_id, privacy_guarantee(s.privacy), s.evaluation_bound or "not stated"]
        for s in report.sites
    ]
    return rows


def exclusion_rows(report: FederationReport) -> list[list[str]]:
    rows = [["site", "phase", "reason", "detail"]]
    rows += [[e.site_id, e.phase, e.reason, e.detail] for e in report.exclusions]
    return rows if report.exclusions else [*rows, ["-", "-", "nothing was excluded", ""]]


def model_rows(report: FederationReport) -> list[list[str]]:
    rows = [["model", "kind", "trained on", "training docs", "rounds"]]
    rows += [
        [m.name, m.kind, ", ".join(m.trained_on), str(m.n_training_documents), str(m.rounds)]
        for m in report.models
    ]
    return rows


def provenance_rows(report: FederationReport) -> list[list[str]]:
    p = report.provenance
    rows = [["item", "value"], ["toolkit", p.tool_version]]
    rows += [[name, version] for name, version in sorted(p.versions.items())]
    rows += [
        ["config digest", p.config_digest],
        ["label mapping", p.mapping_name or "none (labels shared as-is)"],
        ["started", p.started_at.isoformat()],
        ["finished", p.finished_at.isoformat()],
    ]
    rows += [[f"bundle {b.site_id}", b.manifest_sha256] for b in report.bundles]
    return rows


def generalisation_rows(report: FederationReport) -> list[list[str]]:
    """Token F1 of each single-site model at its own site vs the mean at the other sites."""
    rows = [["model", "trained at", "in-site", "out-of-site (mean)", "gap"]]
    sites = site_ids(report)
    for model in report.models:
        if len(model.trained_on) != 1 or model.trained_on[0] not in sites:
            continue
        home = model.trained_on[0]
        inside = value(report.cell(model.name, home), "token_f1")
        outside = [value(report.cell(model.name, s), "token_f1") for s in sites if s != home]
        scored = [v for v in outside if v is not None]
        mean = sum(scored) / len(scored) if scored else None
        gap = None if inside is None or mean is None else inside - mean
        rows.append(
            [
                model.name,
                home,
                "-" if inside is None else f"{inside:.3f}",
                "-" if mean is None else f"{mean:.3f}",
                "-" if gap is None else f"{gap:+.3f}",
            ]
        )
    return rows


def fedavg_round_rows(report: FederationReport) -> list[list[str]]:
    header = ["round", "aggregator", "contributors", "dropped", "examples", "update norm"]
    rows = [[*header, "refused or capped"]]
    rows += [
        [
            str(r.round),
            r.aggregator,
            ", ".join(r.contributors),
            ", ".join(r.dropped) or "-",
            str(r.n_examples),
            f"{r.update_norm:.4f}",
            "; ".join(f"{x.site_id}: {x.reason} ({x.detail})" for x in r.refused) or "-",
        ]
        for r in report.fedavg_rounds
    ]
    if not report.fedavg_rounds:
        rows.append(["-", "no FedAvg round ran", "", "", "", "", ""])
    return rows


def overlap_rows(report: FederationReport) -> list[list[str]]:
    """Pairs of sites whose synthetic corpora share documents (copies and near-duplicates)."""
    rows = [["site", "other site", "shared documents (MinHash Jaccard)", "copy"]]
    rows += [
        [o.site_id, o.other_site_id, f"{o.similarity:.2f}", "yes" if o.exact else "no"]
        for o in report.corpus_overlaps
    ]
    if not report.corpus_overlaps:
        rows.append(["-", "no two corpora share half their documents", "", ""])
    return rows
