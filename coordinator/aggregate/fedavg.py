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
from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict
from flwr.serverapp import Grid

from coordinator.aggregate.built_model import BuiltModel
from coordinator.aggregate.weighted_mean import weighted_mean
from coordinator.messaging import exchange
from coordinator.run_state import RunState
from protocol.rounds import FedAvgInstruction, FedAvgRound, FedAvgUpdate, TrainedModel
from shared import wire
from shared.contained import write_contained
from shared.transport import pack_model_dir, unpack_model_dir

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
        mean = weighted_mean([(a, n) for a, (_, n) in zip(arrays, updates, strict=True)])
        averaged[key] = Array.from_numpy_ndarray(mean)
    return averaged


def update_norm(new: ArrayRecord, old: ArrayRecord) -> float:
    """L2 norm of the change of every float tensor: how far one round moved the model."""
    total = 0.0
    for key in old:
        before = old[key].numpy()
        if np.issubdtype(before.dtype, np.floating):
            diff = new[key].numpy().astype(np.float64) - before.astype(np.float64)
            total += float(np.sum(diff * diff))
    return float(np.sqrt(total))


def fits(update: ArrayRecord, reference: ArrayRecord) -> bool:
    """Same tensor names, shapes and dtypes as the global model."""
    if list(update.keys()) != list(reference.keys()):
        return False
    return all(
        update[k].shape == reference[k].shape and update[k].dtype == reference[k].dtype
        for k in reference
    )


LOCAL_TRAINING = {"local_epochs", "learning_rate", "batch_size", "seed"}  # same names in both


def instruction(state: RunState, labels: tuple[str, ...], rnd: int) -> FedAvgInstruction:
    local = state.settings.model_dump(include=LOCAL_TRAINING)
    return FedAvgInstruction(round=rnd, labels=labels, mapping=state.mapping, **local)


def read_update(content: RecordDict, reference: ArrayRecord) -> tuple[ArrayRecord, int] | str:
    """The trained weights and example count of a reply, or why they cannot be averaged."""
    try:
        update = wire.unpack(content, FedAvgUpdate)
    except wire.WireError as exc:
        return str(exc)
    weights = wire.model_weights(content, wire.GLOBAL_MODEL)
    if weights is None or not fits(weights, reference):
        return "update does not fit"
    return weights, update.num_examples


def _one_round(
    grid: Grid,
    state: RunState,
    weights: ArrayRecord,
    files: ConfigRecord,
    labels: tuple[str, ...],
    rnd: int,
) -> tuple[dict[str, tuple[ArrayRecord, int]], tuple[str, ...]]:
    """The usable updates of this round, and the sites asked that gave none (dropped)."""
    nodes = [n for n, s in state.sites.items() if s.site_id in state.bundles]
    asked = {n: state.site_of(n) for n in nodes}
    model: dict[str, wire.Record] = {
        wire.MODEL_PREFIX + wire.GLOBAL_MODEL: weights,
        wire.MODEL_FILES_PREFIX + wire.GLOBAL_MODEL: files,
    }
    content = wire.pack(instruction(state, labels, rnd), model)
    timeout = state.settings.reply_timeout
    replies = exchange(
        grid, dict.fromkeys(nodes, content), wire.FEDAVG_TRAIN, f"fedavg-{rnd}", timeout
    )
    updates: dict[str, tuple[ArrayRecord, int]] = {}
    for node, reply in sorted(replies.items()):
        site = asked.get(node, f"node-{node}")
        if reply.content is None:
            state.note_failure(reply, "aggregate", site)
            continue
        update = read_update(reply.content, weights)
        if isinstance(update, str):
            state.exclude(site, "aggregate", "site_error", f"fedavg round {rnd}: {update}")
            continue
        updates[site] = update
    return updates, tuple(sorted(set(asked.values()) - set(updates)))


def run_fedavg(
    grid: Grid, state: RunState, initial: Path, labels: tuple[str, ...], out_dir: Path
) -> BuiltModel | None:
    """``fedavg_rounds`` rounds from the model in ``initial``; None if no site ever trained."""
    weights, files = pack_model_dir(initial)
    contributors: set[str] = set()
    examples = completed = 0
    for rnd in range(1, state.settings.fedavg_rounds + 1):
        updates, dropped = _one_round(grid, state, weights, files, labels, rnd)
        if not updates:
            log.warning("  fedavg round %d: no usable update; stopping", rnd)
            break
        previous, weights = weights, weighted_average(list(updates.values()))
        examples = sum(n for _, n in updates.values())
        state.fedavg_rounds.append(
            FedAvgRound(
                round=rnd,
                contributors=tuple(sorted(updates)),
                dropped=dropped,
                n_examples=examples,
                update_norm=update_norm(weights, previous),
            )
        )
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
