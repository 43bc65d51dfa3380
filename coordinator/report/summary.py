"""A few console lines about a finished run (the CLI prints them)."""

from __future__ import annotations

from protocol.rounds import FederationReport


def summary_lines(report: FederationReport) -> list[str]:
    scored = sum(c.metrics is not None for c in report.matrix)
    lines = [
        f"sites: {len(report.sites)}; bundles accepted: {len(report.bundles)}; "
        f"models: {len(report.models)}; matrix cells scored: {scored}/{len(report.matrix)}"
    ]
    lines += [f"excluded {e.site_id} ({e.phase}): {e.reason} {e.detail}" for e in report.exclusions]
    return lines
