"""Phase 3 as the ServerApp runs it: harmonise, train per-site and pooled, collect exported
encoders, then FedAvg across the sites."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from flwr.serverapp import Grid

from coordinator.aggregate.built_model import BuiltModel
from coordinator.aggregate.exported import exported_encoders
from coordinator.aggregate.fedavg import run_fedavg
from coordinator.aggregate.influence import capped_weights
from coordinator.aggregate.pooled import train_site_and_pooled
from coordinator.aggregate.start import average_into
from coordinator.aggregate.trainer import NerSettings, init_token_classifier
from coordinator.run_state import RunState
from protocol import Corpus
from protocol.corpus import UnmappedLabelError
from shared.label_mapping import harmonise, shared_labels

log = logging.getLogger("flwr")


def harmonised_corpora(state: RunState, labels: tuple[str, ...]) -> dict[str, Corpus]:
    """Every accepted synthetic corpus in the shared label space; a site whose labels the
    mapping does not cover is excluded."""
    harmonised = {}
    for site, bundle in state.bundles.items():
        if bundle.corpus is None:
            continue
        try:
            harmonised[site] = harmonise(bundle.corpus, state.mapping, labels)
        except UnmappedLabelError as exc:
            state.exclude(site, "aggregate", "malformed_bundle", str(exc).split(";")[0])
        except Exception as exc:  # one site's corpus never ends the phase
            state.exclude(site, "aggregate", "invalid_reply", type(exc).__name__)
    return harmonised


def _training_failed(state: RunState) -> Callable[[str, Exception], None]:
    def record(site: str, exc: Exception) -> None:
        state.exclude(site, "aggregate", "invalid_reply", f"training raised {type(exc).__name__}")

    return record


def start_from_exported(initial: Path, models: list[BuiltModel], max_weight_ratio: float) -> None:
    """Average the exported encoders' bodies into ``initial``, each weighted by its site's
    documents capped relative to the other sites (``coordinator/aggregate/influence.py``)."""
    exported = {m.info.name: m for m in models if m.info.kind == "export"}
    counts = {name: m.info.n_training_documents for name, m in exported.items()}
    weights = capped_weights(counts, max_weight_ratio)
    replaced = average_into(initial, [(m.model_dir, weights[n]) for n, m in exported.items()])
    log.info(
        "  fedavg starts from %d exported encoder(s) (%d tensors averaged)",
        len(exported),
        len(replaced),
    )


def aggregate_models(
    grid: Grid, state: RunState, work_dir: Path
) -> tuple[list[BuiltModel], tuple[str, ...]]:
    """Per-site, pooled, exported and FedAvg models, and the label space they share."""
    corpora = [b.corpus for b in state.bundles.values() if b.corpus is not None]
    labels = shared_labels(state.mapping, corpora)
    harmonised = harmonised_corpora(state, labels)
    settings = NerSettings(
        epochs=state.settings.train_epochs,
        min_steps=state.settings.train_min_steps,
        learning_rate=state.settings.learning_rate,
        batch_size=state.settings.batch_size,
        seed=state.settings.seed,
    )
    base = state.settings.base_model
    models = train_site_and_pooled(harmonised, base, settings, work_dir, _training_failed(state))
    models += exported_encoders(state.bundles, work_dir, _training_failed(state))
    for model in models:
        log.info("  %s: %d training documents", model.info.name, model.info.n_training_documents)
    if state.settings.fedavg_rounds and harmonised:
        initial = init_token_classifier(base, labels, work_dir / "fedavg-init", state.settings.seed)
        if state.settings.fedavg_start == "exported":
            start_from_exported(initial, models, state.settings.fedavg_max_weight_ratio)
        fedavg = run_fedavg(grid, state, initial, labels, work_dir / "fedavg")
        if fedavg is not None:
            models.append(fedavg)
    return models, labels
