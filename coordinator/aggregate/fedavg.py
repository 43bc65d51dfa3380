"""FedAvg over the site encoders: sites train locally for E epochs, the coordinator averages.

The average is weighted by each site's number of training documents. Replies are untrusted:
each is checked against the global model (same tensors, same shapes), refused when a weight is
NaN or infinite or when it moves the model further than ``max-update-norm-ratio`` of the
model's own norm, and its example count is capped by the documents of the site's verified
bundle (a site cannot claim 10^15 examples to set the global model alone). Every refusal is
recorded in the round (``FedAvgRound.refused``) and, for a refused update, as an exclusion.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Literal

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict
from flwr.serverapp import Grid

from coordinator.aggregate.built_model import BuiltModel
from coordinator.aggregate.weighted_mean import weighted_mean
from coordinator.messaging import exchange
from coordinator.replies import refusal, unpack_reply
from coordinator.run_state import RunState
from protocol.rounds import (
    FedAvgInstruction,
    FedAvgRound,
    FedAvgUpdate,
    RefusedUpdate,
    TrainedModel,
)
from shared import wire
from shared.bundle_limits import BundleLimits
from shared.contained import write_contained
from shared.transport import pack_model_dir, unpack_model_dir

log = logging.getLogger("flwr")
RefusedReason = Literal["non_finite_update", "update_norm_exceeded"]


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


def model_norm(record: ArrayRecord) -> float:
    """L2 norm of every float tensor of ``record``."""
    total = 0.0
    for key in record:
        array = record[key].numpy()
        if np.issubdtype(array.dtype, np.floating):
            total += float(np.sum(array.astype(np.float64) ** 2))
    return float(np.sqrt(total))


def update_problem(
    update: ArrayRecord, reference: ArrayRecord, max_ratio: float
) -> tuple[RefusedReason, str] | None:
    """Why ``update`` may not be averaged into ``reference``: NaN/inf weights, or a step longer
    than ``max_ratio`` times the model's norm; None when it may."""
    for key in reference:
        array = update[key].numpy()
        if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array)):
            return "non_finite_update", f"tensor {key!r} holds NaN or infinite values"
    step, size = update_norm(update, reference), model_norm(reference)
    if step > max_ratio * size:
        return (
            "update_norm_exceeded",
            f"the update moves the model by {step:.4g}, over {max_ratio} x its norm {size:.4g}",
        )
    return None


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


def read_update(
    content: RecordDict, reference: ArrayRecord, limits: BundleLimits
) -> tuple[ArrayRecord, int] | str:
    """The trained weights and example count of a reply, or why they cannot be averaged."""
    try:
        update = unpack_reply(content, FedAvgUpdate, limits)
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
) -> tuple[dict[str, tuple[ArrayRecord, int]], tuple[str, ...], tuple[RefusedUpdate, ...]]:
    """The usable updates of this round, the sites asked that gave none (dropped), and the
    updates refused or capped."""
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
    refused: list[RefusedUpdate] = []
    for node, reply in sorted(replies.items()):
        site = asked.get(node, f"node-{node}")
        if reply.content is None:
            state.note_failure(reply, "aggregate", site)
            continue
        try:
            update = checked_update(reply.content, weights, state, site, refused)
        except Exception as exc:  # one site's reply never ends the round
            reason, detail = refusal(exc)
            state.exclude(site, "aggregate", reason, f"fedavg round {rnd}: {detail}")
            refused.append(RefusedUpdate(site_id=site, reason="invalid_reply", detail=detail))
            continue
        if isinstance(update, str):
            state.exclude(site, "aggregate", "site_error", f"fedavg round {rnd}: {update}")
            continue
        if update is not None:
            updates[site] = update
    return updates, tuple(sorted(set(asked.values()) - set(updates))), tuple(refused)


def checked_update(
    content: RecordDict,
    reference: ArrayRecord,
    state: RunState,
    site: str,
    refused: list[RefusedUpdate],
) -> tuple[ArrayRecord, int] | str | None:
    """The update as it may be averaged (its example count capped by the site's verified
    documents), the reason it does not fit (a str), or None when it is refused (recorded)."""
    update = read_update(content, reference, state.settings.limits)
    if isinstance(update, str):
        return update
    weights, claimed = update
    problem = update_problem(weights, reference, state.settings.max_update_norm_ratio)
    if problem is not None:
        reason, detail = problem
        state.exclude(site, "aggregate", reason, detail)
        refused.append(RefusedUpdate(site_id=site, reason=reason, detail=detail))
        return None
    bundle = state.bundles.get(site)
    verified = bundle.accepted.n_documents if bundle is not None else 0
    if claimed > verified:
        detail = f"{claimed} examples claimed, {verified} documents in its verified bundle"
        refused.append(RefusedUpdate(site_id=site, reason="examples_capped", detail=detail))
    examples = min(claimed, verified)
    if examples <= 0:
        return "no training examples"
    return weights, examples


def run_fedavg(
    grid: Grid, state: RunState, initial: Path, labels: tuple[str, ...], out_dir: Path
) -> BuiltModel | None:
    """``fedavg_rounds`` rounds from the model in ``initial``; None if no site ever trained."""
    weights, files = pack_model_dir(initial)
    contributors: set[str] = set()
    examples = completed = 0
    for rnd in range(1, state.settings.fedavg_rounds + 1):
        updates, dropped, refused = _one_round(grid, state, weights, files, labels, rnd)
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
                refused=refused,
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
