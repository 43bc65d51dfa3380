"""The coordinator's Flower ServerApp: the federation protocol, one phase after another.

1. roll call      who is here, labels, latest export manifest, test split sizes
2. collect        signed export bundles, each verified (or excluded with a reason)
3. aggregate      per-site and pooled NER models; FedAvg across the sites
4. cross-site     every model scored at every site; site baselines scored locally
5. report         report.json, report.md, report.html
"""

from __future__ import annotations

import json
import logging

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from coordinator.aggregate.phase import aggregate_models
from coordinator.collect.phase import collect
from coordinator.cross_site import cross_site
from coordinator.report.build import build_report
from coordinator.report.write import write_report
from coordinator.roll_call import roll_call
from coordinator.run_state import RunState
from coordinator.settings import FederationSettings
from protocol import LabelMapping
from protocol.registry import SiteRegistry
from protocol.rounds import FederationReport

log = logging.getLogger("flwr")

app = ServerApp()


def banner(step: int, title: str) -> None:
    log.info("")
    log.info("[phase %d/5] %s", step, title)


def run_federation(grid: Grid, settings: FederationSettings) -> FederationReport:
    """The whole protocol; writes the report and the trained models under ``output_dir``."""
    registry = SiteRegistry.model_validate_json(settings.registry.read_text(encoding="utf-8"))
    mapping = (
        LabelMapping.model_validate(json.loads(settings.mapping.read_text(encoding="utf-8")))
        if settings.mapping
        else None
    )
    state = RunState(settings=settings, registry=registry, mapping=mapping)
    banner(1, "roll call")
    roll_call(grid, state)
    banner(2, "collect and verify export bundles")
    collect(grid, state)
    banner(3, "aggregate: per-site, pooled and FedAvg models")
    models, labels = aggregate_models(grid, state, settings.output_dir / "models")
    banner(4, "cross-site validation")
    matrix, baselines = cross_site(grid, state, models, labels)
    banner(5, "report")
    report = build_report(state, models, matrix, baselines, labels)
    paths = write_report(report, settings.output_dir)
    for path in paths:
        log.info("  wrote %s", path)
    return report


@app.main()
def main(grid: Grid, context: Context) -> None:
    run_federation(grid, FederationSettings.from_run_config(context.run_config))
