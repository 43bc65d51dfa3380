"""The plan applied to ``[generation]`` where ``site.toml`` left it unset (the recipe's own
``[adapt]`` values: ``GeneratorRecipe.applied``; both through ``shared.unset``)."""

from __future__ import annotations

from typing import Any

from shared.unset import apply_where_unset
from site_agent.config import SiteConfig
from site_agent.generate.settings import GenerationSettings
from site_agent.plan.estimate import RunPlan


def applied_generation(config: SiteConfig, plan: RunPlan) -> GenerationSettings:
    """``[generation]`` with the recipe's rows in flight and prompt share, and the time
    budget's amount and token budget, where site.toml gave none."""
    settings, values = config.generation, dict[str, Any]()
    values["batch_size"] = plan.generation.rows_in_flight
    if plan.generator.phi_prompt_share is not None:
        values["phi_prompt_share"] = plan.generator.phi_prompt_share
    if config.run.time_budget is not None:
        if settings.amount is not None:
            values["amount"] = plan.generation.amount
        if plan.generation.max_new_tokens is not None:
            values["max_new_tokens"] = plan.generation.max_new_tokens
    return apply_where_unset(settings, values)
