"""Every number in a coordinator message that the site would act on, checked against the
site's ``[federation.limits]`` before anything is unpacked, trained or scored.

A value beyond a limit refuses the whole message with the code ``<limit>_exceeded`` (the
field of :class:`~site_agent.federation.policy.InstructionLimits`), and the site's log says
what was asked and what is allowed.
"""

from __future__ import annotations

import logging
from typing import cast

from flwr.app import RecordDict

from protocol.rounds import CrossSiteInstruction, FedAvgInstruction, SiteErrorCode
from shared import wire
from site_agent.federation.layout import SiteFailure
from site_agent.federation.policy import InstructionLimits

log = logging.getLogger(__name__)
MIB = 1024 * 1024


def refuse_beyond(limit: str, asked: float, allowed: float) -> None:
    """Raise the named refusal when ``asked`` exceeds ``allowed``."""
    if asked > allowed:
        log.warning(
            "coordinator asked for %s = %s; [federation.limits] %s = %s; message refused",
            limit.removeprefix("max_"),
            asked,
            limit,
            allowed,
        )
        raise SiteFailure(cast(SiteErrorCode, f"{limit}_exceeded"))


def model_mb(content: RecordDict, name: str) -> float:
    """The size of the model sent under ``name`` (weights and files), in MiB."""
    weights = content.array_records.get(wire.MODEL_PREFIX + name)
    files = content.config_records.get(wire.MODEL_FILES_PREFIX + name)
    size = sum(len(array.data) for array in weights.values()) if weights is not None else 0
    if files is not None:
        size += sum(len(v) for v in files.values() if isinstance(v, bytes | str))
    return size / MIB


def check_cross_site(
    task: CrossSiteInstruction, content: RecordDict, limits: InstructionLimits
) -> None:
    refuse_beyond("max_models", len(task.models), limits.max_models)
    refuse_beyond("max_labels", len(task.labels), limits.max_labels)
    refuse_beyond("max_bootstrap", task.bootstrap, limits.max_bootstrap)
    for name in task.models:
        refuse_beyond("max_model_mb", model_mb(content, name), limits.max_model_mb)


def check_fedavg(task: FedAvgInstruction, content: RecordDict, limits: InstructionLimits) -> None:
    refuse_beyond("max_labels", len(task.labels), limits.max_labels)
    refuse_beyond("max_local_epochs", task.local_epochs, limits.max_local_epochs)
    refuse_beyond("max_batch_size", task.batch_size, limits.max_batch_size)
    refuse_beyond("max_learning_rate", task.learning_rate, limits.max_learning_rate)
    refuse_beyond("max_model_mb", model_mb(content, wire.GLOBAL_MODEL), limits.max_model_mb)
