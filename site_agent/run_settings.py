"""``[run]``: what the whole run may spend; the recipes and the pre-flight read it."""

from __future__ import annotations

from pydantic import Field

from protocol.base import ProtocolModel


class RunSettings(ProtocolModel):
    """Limits of one ``synthesize`` run on this machine.

    ``time_budget`` (hours) makes the generator recipe generate fewer or shorter notes when the
    estimated run would take longer; unset, nothing is cut. ``memory_limit_gb`` is what a
    stage may plan to use; unset, ``memory_share`` of the machine's memory.
    """

    time_budget: float | None = Field(
        None, gt=0.0, description="hours the whole run may take (estimated); unset: no limit"
    )
    memory_limit_gb: float | None = Field(
        None, gt=0.0, description="GB of memory a stage may plan for; unset: memory_share of RAM"
    )
    memory_share: float = Field(
        0.6,
        gt=0.0,
        le=1.0,
        description="share of the machine's RAM a stage may plan for when memory_limit_gb is "
        "unset (the rest: the OS, the estimate's error, other processes)",
    )
