"""FedAvg over the site encoders: sites train locally for E epochs, the coordinator averages.

The average is weighted by each site's number of training documents. Replies are checked
against the global model (same tensors, same shapes) before they are averaged; a reply that
does not fit is left out with a named reason.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, MetricRecord, RecordDict
from flwr.serverapp import Grid

from coordinator import wire
from coordinator.aggregate import BuiltModel
from coordinator.messaging import exchange
from coordinator.run_state import RunState
from coordinator.transport import pack_model_dir, unpack_model_dir
from protocol.rounds import TrainedModel
from shared.contained import write_contained

log = logging.getLogger("flwr")


def weighted_average(updates: list[tuple[ArrayRecord, int]]) -> ArrayRecord:
    """Example-weighted mean of float tensors; integer buffers are taken from the first update."""
    total = sum(n for _, n in updates)
    if not updates or total <= 0:
        raise ValueError("nothing to average: no update with training examples")
    first = updates[0][0]
    averaged = ArrayRecord()
    for key in first:
        arrays = [record[key].numpy() for record, _ in updates]
        if not np.issubdtype(arrays[0].dtype, np.floating):
            averaged[key] = Array.from_numpy_ndarray(arrays[0])
            continue
        mean = sum(
            a.astype(np.float64) * (n / total) for a, (_, n) in zip(arrays, updates, strict=True)
        )
        averaged[key] = Array.from_numpy_ndarray(np.asarray(mean).astype(arrays[0].dtype))
    return averaged


def fits(update: ArrayRecord, reference: ArrayRecord) -> bool:
    """Same tensor names, shapes and dtypes as the global model."""
    if list(update.keys()) != list(reference.keys()):
        return False
    return all(
        update[k].shape == reference[k].shape and update[k].dtype == reference[k].dtype
        for k in reference
    )


def _train_content(
    weights: ArrayRecord, files: ConfigRecord, state: RunState, labels: tuple[str, ...]
) -> RecordDict:
    mapping = state.mapping.model_dump_json() if state.mapping else ""
    config = ConfigRecord(
        {
            "local-epochs": state.settings.local_epochs,
            "learning-rate": state.settings.learning_rate,
            "batch-size": state.settings.batch_size,
            "seed": state.settings.seed,
            "labels": list(labels),
            "mapping": mapping,
        }
    )
    return RecordDict({"model": weights, "files": files, "config": config})


def _one_round(
    grid: Grid,
    state: RunState,
    weights: ArrayRecord,
    files: ConfigRecord,
    labels: tuple[str, ...],
    rnd: int,
) -> dict[str, tuple[ArrayRecord, int]]:
    nodes = [n for n, s in state.sites.items() if s.site_id in state.bundles]
    content = {n: _train_content(weights, files, state, labels) for n in nodes}
    replies = exchange(
        grid, content, wire.FEDAVG_TRAIN, f"fedavg-{rnd}", state.settings.reply_timeout
    )
    updates: dict[str, tuple[ArrayRecord, int]] = {}
    for node, reply in sorted(replies.items()):
        site = state.site_of(node) if node in state.sites else f"node-{node}"
        if reply.content is None:
            state.note_failure(reply, "aggregate", site)
            continue
        update = reply.content.array_records.get("model")
        metrics: MetricRecord | None = reply.content.metric_records.get("metrics")
        if update is None or metrics is None or not fits(update, weights):
            state.exclude(
                site, "aggregate", "site_error", f"fedavg round {rnd}: update does not fit"
            )
            continue
        updates[site] = (update, int(metrics[wire.NUM_EXAMPLES]))  # type: ignore[arg-type]
    return updates


def run_fedavg(
    grid: Grid, state: RunState, initial: Path, labels: tuple[str, ...], out_dir: Path
) -> BuiltModel | None:
    """``fedavg_rounds`` rounds from the model in ``initial``; None if no site ever trained."""
    weights, files = pack_model_dir(initial)
    contributors: set[str] = set()
    examples = completed = 0
    for rnd in range(1, state.settings.fedavg_rounds + 1):
        updates = _one_round(grid, state, weights, files, labels, rnd)
        if not updates:
            log.warning("  fedavg round %d: no usable update; stopping", rnd)
            break
        weights = weighted_average(list(updates.values()))
        examples = sum(n for _, n in updates.values())
        contributors |= set(updates)
        completed = rnd
        log.info("  fedavg round %d: averaged %s (%d examples)", rnd, sorted(updates), examples)
    if not contributors:
        return None
    model_dir = unpack_model_dir(weights, files, out_dir)
    write_contained(model_dir, "fedavg.json", json.dumps({"rounds": completed}).encode())
    info = TrainedModel(
        name="fedavg",
        kind="fedavg",
        trained_on=tuple(sorted(contributors)),
        n_training_documents=examples,
        rounds=completed,
    )
    return BuiltModel(info, model_dir)
