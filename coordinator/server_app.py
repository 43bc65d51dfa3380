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
from pathlib import Path

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from coordinator import aggregate
from coordinator.collect import collect
from coordinator.cross_site import cross_site
from coordinator.fedavg import run_fedavg
from coordinator.report.build import build_report
from coordinator.report.write import write_report
from coordinator.roll_call import roll_call
from coordinator.run_state import RunState
from coordinator.settings import FederationSettings
from protocol import LabelMapping
from protocol.corpus import UnmappedLabelError
from protocol.registry import SiteRegistry
from protocol.rounds import FederationReport

log = logging.getLogger("flwr")

app = ServerApp()


def banner(step: int, title: str) -> None:
    log.info("")
    log.info("[phase %d/5] %s", step, title)


def aggregate_models(
    grid: Grid, state: RunState, work_dir: Path
) -> tuple[list[aggregate.BuiltModel], tuple[str, ...]]:
    """Per-site, pooled and FedAvg models, all in one shared label space."""
    corpora = {s: b.corpus for s, b in state.bundles.items() if b.corpus is not None}
    labels = aggregate.shared_labels(state.mapping, corpora.values())
    harmonised = {}
    for site, corpus in corpora.items():
        try:
            harmonised[site] = aggregate.harmonise(corpus, state.mapping, labels)
        except UnmappedLabelError as exc:
            state.exclude(site, "aggregate", "malformed_bundle", str(exc).split(";")[0])
    settings = aggregate.NerSettings(
        epochs=state.settings.train_epochs,
        learning_rate=state.settings.learning_rate,
        batch_size=state.settings.batch_size,
        seed=state.settings.seed,
    )
    base = state.settings.base_model
    models = aggregate.train_site_and_pooled(harmonised, base, settings, work_dir)
    models += aggregate.exported_encoders(state.bundles, work_dir)
    for model in models:
        log.info("  trained %s on %d documents", model.info.name, model.info.n_training_documents)
    if state.settings.fedavg_rounds and harmonised:
        initial = aggregate.init_token_classifier(
            base, labels, work_dir / "fedavg-init", state.settings.seed
        )
        fedavg = run_fedavg(grid, state, initial, labels, work_dir / "fedavg")
        if fedavg is not None:
            models.append(fedavg)
    return models, labels


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
