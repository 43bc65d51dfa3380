"""The memory model: what a stage may plan for, and the refusal of a run that will not fit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.errors import ConfigError
from site_agent.adapt.recipe import Machine
from site_agent.run_settings import RunSettings

if TYPE_CHECKING:
    from site_agent.plan.estimate import RunPlan

MEMORY_FIXES = {
    "adapt": "remove batch_size and max_length from [adapt] so the recipe picks a shape that "
    "fits, or lower them (rows x tokens per forward pass)",
    "annotator": "lower [annotator.training] batch_size or raise grad_accumulation",
    "train-synthetic": "lower [annotator.training] batch_size or raise grad_accumulation",
    "annotate": "lower [annotator.training] batch_size",
}
"""What to change when a stage's estimated (or killed) peak memory is over the limit."""


def memory_limit(run: RunSettings, machine: Machine) -> float:
    """GB a stage may plan for: ``[run] memory_limit_gb``, else a share of the machine's RAM."""
    if run.memory_limit_gb is not None:
        return run.memory_limit_gb
    return run.memory_share * machine.memory_gb


def check_fits(plan: RunPlan, source: str = "site.toml") -> None:
    """Refuse (ConfigError, exit 78) a run some stage of which will not fit in memory."""
    over = [s for s in plan.stages if s.peak_gb > plan.memory_limit_gb]
    if not over:
        return
    problems = [
        f"the {s.stage} stage needs about {s.peak_gb:.1f} GB ({s.basis}); fix: "
        + MEMORY_FIXES.get(s.stage, "free memory or raise [run] memory_limit_gb")
        for s in over
    ]
    raise ConfigError(
        f"{source}: the run will not fit in memory: {plan.memory_limit_gb:.1f} GB may be planned "
        f"for ({plan.machine.memory_gb:.0f} GB machine, [run] memory_share or memory_limit_gb)",
        problems=problems,
    )
