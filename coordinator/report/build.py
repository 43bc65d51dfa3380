"""Assemble the typed report from what the run collected."""

from __future__ import annotations

import platform
from importlib import metadata

from coordinator.aggregate.built_model import BuiltModel
from coordinator.run_state import RunState
from protocol.rounds import (
    BASELINE,
    CrossSiteCell,
    FederationReport,
    ReportProvenance,
    SiteSummary,
)
from shared.provenance import config_digest, tool_version

VERSIONED = ("flwr", "torch", "transformers", "cryptography", "pydantic", "numpy")


def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def site_summaries(state: RunState) -> tuple[SiteSummary, ...]:
    """One summary per site; the audit verdict is the verified bundle's (the manifest a site
    names at roll call is unverified and says nothing about what was accepted)."""
    summaries = []
    for site_id, roll in sorted(state.roll.items()):
        bundle = state.bundles.get(site_id)
        audit = bundle.manifest.audit if bundle else None
        summaries.append(
            SiteSummary(
                site_id=site_id,
                labels=roll.labels,
                test_split=roll.test_split,
                bundle_sha256=bundle.accepted.manifest_sha256 if bundle else None,
                audit_passed=audit.passed if audit else None,
                audit_rules_failed=audit.rules_failed if audit else (),
                synthetic_documents=bundle.accepted.n_documents if bundle else 0,
                quality_override=bundle.accepted.quality_override if bundle else None,
                approval=bundle.accepted.approval if bundle else None,
                evaluation_bound=state.evaluation_bounds.get(site_id, ""),
                privacy=state.privacy.get(site_id),
            )
        )
    return tuple(summaries)


def complete(
    cells: list[CrossSiteCell], models: list[str], sites: list[str]
) -> tuple[CrossSiteCell, ...]:
    """Every (model, site) pair once; a pair nobody scored says the site was excluded."""
    found = {(c.model, c.site_id): c for c in cells}
    return tuple(
        found.get((m, s), CrossSiteCell(model=m, site_id=s, error="site_excluded"))
        for m in models
        for s in sites
    )


def build_report(
    state: RunState,
    models: list[BuiltModel],
    matrix: list[CrossSiteCell],
    baselines: list[CrossSiteCell],
    labels: tuple[str, ...],
) -> FederationReport:
    sites = sorted(state.roll)
    names = [m.info.name for m in models]
    return FederationReport(
        sites=site_summaries(state),
        bundles=tuple(b.accepted for _, b in sorted(state.bundles.items())),
        models=tuple(m.info for m in models),
        matrix=complete(matrix, names, sites),
        baselines=complete(baselines, [BASELINE], sites),
        exclusions=tuple(state.exclusions),
        labels=labels,
        mode="evaluate" if state.settings.evaluate_models else "federate",
        fedavg_rounds=tuple(state.fedavg_rounds),
        corpus_overlaps=tuple(state.corpus_overlaps),
        provenance=ReportProvenance(
            tool_version=tool_version(),
            versions=library_versions(),
            config_digest=config_digest(state.settings.model_dump(mode="json")),
            mapping_name=state.mapping.name if state.mapping else None,
            started_at=state.started_at,
        ),
    )
