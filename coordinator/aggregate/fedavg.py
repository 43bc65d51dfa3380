"""FedAvg over the site encoders: sites train locally for E epochs, the coordinator combines.

Replies are untrusted. Each is checked against the global model (same tensors, same shapes),
refused when a weight is NaN or infinite or when it moves the model further than
``max-update-norm-ratio`` of the model's own norm, and its example count is capped by the
documents of the site's verified bundle (a site cannot claim 10^15 examples to set the global
model alone). Then the round's updates are judged against each other
(``coordinator/aggregate/influence.py``): an update whose step, whole or in one tensor, is an
outlier against the median of the round is refused, and each site's weight is capped relative to
the other sites' counts. The survivors are combined by the ``fedavg-aggregator`` rule
(``coordinator/aggregate/aggregators.py``: weighted mean, coordinate-wise median or trimmed
mean). Every refusal is recorded in the round (``FedAvgRound.refused``) and, for a refused
update, as an exclusion.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Literal

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, RecordDict
from flwr.serverapp import Grid

from coordinator.aggregate.aggregators import aggregate
from coordinator.aggregate.built_model import BuiltModel
from coordinator.aggregate.influence import (
    WHOLE_MODEL,
    capped_weights,
    norm_outliers,
    step_norms,
)
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
from shared.transport import pack_model_dir, unpack_model_dir, with_unchanged

log = logging.getLogger("flwr")
RefusedReason = Literal["non_finite_update", "update_norm_exceeded"]


def weighted_average(updates: list[tuple[ArrayRecord, int]]) -> ArrayRecord:
    """Example-weighted mean of float tensors; integer buffers are taken from the first update."""
    return aggregate("weighted-mean", [(record, float(n)) for record, n in updates])


def update_norm(new: ArrayRecord, old: ArrayRecord) -> float:
    """L2 norm of the change of every float tensor: how far one round moved the model."""
    return step_norms(new, old)[WHOLE_MODEL]


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
    sent = wire.model_weights(content, wire.GLOBAL_MODEL)
    weights = None if sent is None else with_unchanged(sent, reference, update.unchanged)
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


def judged_round(
    state: RunState,
    updates: dict[str, tuple[ArrayRecord, int]],
    reference: ArrayRecord,
    refused: list[RefusedUpdate],
) -> dict[str, tuple[ArrayRecord, float]]:
    """The updates that may be combined, each with its capped weight: outliers against the
    round's median step are refused, and every refusal or cap is recorded."""
    settings = state.settings
    steps = {site: step_norms(weights, reference) for site, (weights, _) in updates.items()}
    outliers = norm_outliers(steps, settings.fedavg_max_norm_ratio)
    for site, detail in outliers.items():
        state.exclude(site, "aggregate", "update_norm_outlier", detail)
        refused.append(RefusedUpdate(site_id=site, reason="update_norm_outlier", detail=detail))
    kept = {site: update for site, update in updates.items() if site not in outliers}
    ratio = settings.fedavg_max_weight_ratio
    weights = capped_weights({site: n for site, (_, n) in kept.items()}, ratio)
    for site, weight in sorted(weights.items()):
        if weight < kept[site][1]:
            detail = (
                f"weight {weight:g} instead of its {kept[site][1]} examples: at most {ratio} x "
                "the median of the other sites"
            )
            refused.append(RefusedUpdate(site_id=site, reason="weight_capped", detail=detail))
    return {site: (record, weights[site]) for site, (record, _) in kept.items()}


def run_fedavg(
    grid: Grid, state: RunState, initial: Path, labels: tuple[str, ...], out_dir: Path
) -> BuiltModel | None:
    """``fedavg_rounds`` rounds from the model in ``initial``; None if no site ever trained."""
    weights, files = pack_model_dir(initial)
    contributors: set[str] = set()
    examples = completed = 0
    rule = state.settings.fedavg_aggregator
    for rnd in range(1, state.settings.fedavg_rounds + 1):
        updates, dropped, refused_first = _one_round(grid, state, weights, files, labels, rnd)
        refused = list(refused_first)
        usable = judged_round(state, updates, weights, refused)
        if not usable:
            log.warning("  fedavg round %d: no usable update; stopping", rnd)
            break
        previous = weights
        weights = aggregate(rule, list(usable.values()), setting="fedavg-aggregator")
        examples = sum(updates[site][1] for site in usable)
        state.fedavg_rounds.append(
            FedAvgRound(
                round=rnd,
                contributors=tuple(sorted(usable)),
                dropped=dropped,
                n_examples=examples,
                update_norm=update_norm(weights, previous),
                refused=tuple(refused),
                aggregator=rule,
            )
        )
        contributors |= set(usable)
        completed = rnd
        log.info("  fedavg round %d: %s of %s (%d examples)", rnd, rule, sorted(usable), examples)
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
