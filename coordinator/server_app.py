"""The coordinator's Flower ServerApp: the federation protocol, one phase after another.

1. roll call      who is here, labels, latest export manifest, test split sizes
2. collect        signed export bundles, each verified (or excluded with a reason)
3. aggregate      per-site and pooled NER models; FedAvg across the sites
4. cross-site     every model scored at every site; site baselines scored locally
5. report         report.json, report.md, report.html

Evaluation only (``evaluate-models`` set, ``coordinator evaluate``): roll call, then the given
models scored at every site (4) and the report (5); nothing is collected or trained.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from coordinator.aggregate.aggregators import AGGREGATORS
from coordinator.aggregate.built_model import BuiltModel
from coordinator.aggregate.phase import aggregate_models
from coordinator.collect.phase import collect
from coordinator.cross_site import cross_site
from coordinator.given_models import load_given_models
from coordinator.report.build import build_report
from coordinator.report.model_cards import write_model_cards
from coordinator.report.write import write_report
from coordinator.roll_call import roll_call
from coordinator.run_state import RunState
from coordinator.settings import FederationSettings
from protocol import LabelMapping
from protocol.registry import SiteRegistry
from protocol.rounds import CrossSiteCell, FederationReport
from shared.label_mapping import shared_labels
from shared.library_noise import quiet_libraries

log = logging.getLogger("flwr")
quiet_libraries()  # the Flower runtime starts this process, not the CLI

app = ServerApp()


def banner(step: int, title: str) -> None:
    log.info("")
    log.info("[phase %d/5] %s", step, title)


def run_federation(grid: Grid, settings: FederationSettings) -> FederationReport:
    """The whole protocol; writes the report and the trained models under ``output_dir``."""
    AGGREGATORS.get(settings.fedavg_aggregator, setting="fedavg-aggregator")  # before any phase
    registry = SiteRegistry.model_validate_json(settings.registry.read_text(encoding="utf-8"))
    mapping = (
        LabelMapping.model_validate(json.loads(settings.mapping.read_text(encoding="utf-8")))
        if settings.mapping
        else None
    )
    state = RunState(settings=settings, registry=registry, mapping=mapping)
    banner(1, "roll call")
    roll_call(grid, state)
    if settings.evaluate_models is not None:
        return run_evaluation(grid, state, settings.evaluate_models)
    banner(2, "collect and verify export bundles")
    collect(grid, state)
    banner(3, "aggregate: per-site, pooled and FedAvg models")
    models, labels = aggregate_models(grid, state, settings.output_dir / "models")
    banner(4, "cross-site validation")
    matrix, baselines = cross_site(grid, state, models, labels)
    banner(5, "report")
    return finish(state, models, matrix, baselines, labels)


def run_evaluation(grid: Grid, state: RunState, models_file: Path) -> FederationReport:
    """Evaluation only: the given models scored at every site, nothing collected or trained."""
    models = load_given_models(models_file)
    labels = shared_labels(state.mapping, [])
    if state.mapping is None:  # no shared scheme: the union of what the sites annotate
        labels = tuple(sorted({label for s in state.roll.values() for label in s.labels}))
    banner(4, f"cross-site evaluation of {len(models)} given model(s), no training")
    matrix, baselines = cross_site(grid, state, models, labels)
    banner(5, "report")
    return finish(state, models, matrix, baselines, labels)


def finish(
    state: RunState,
    models: list[BuiltModel],
    matrix: list[CrossSiteCell],
    baselines: list[CrossSiteCell],
    labels: tuple[str, ...],
) -> FederationReport:
    report = build_report(state, models, matrix, baselines, labels)
    for path in write_report(report, state.settings.output_dir):
        log.info("  wrote %s", path)
    audits = {site: bundle.audit for site, bundle in state.bundles.items()}
    cards = write_model_cards(report, models, audits, state.settings.base_model)
    log.info("  wrote %d model card(s) (README.md in each model folder)", len(cards))
    return report


@app.main()
def main(grid: Grid, context: Context) -> None:
    run_federation(grid, FederationSettings.from_run_config(context.run_config))
