"""The site pipeline, in order. Add a stage by adding it here.

Each stage is a library package ``site_agent/<stage>/`` with plain functions and a leaf
``settings.py``; its adapter (what it reads from ``site.toml``, which artifacts it takes) is
``site_agent/stages/<stage>.py``, which holds its ``STAGE``: a plain function named for what
it does (``write_splits``, ``train_adapter``, ...) and ``_<stage>_stage``, which wires it to
the stage's context.
"""

from __future__ import annotations

from collections.abc import Sequence

from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage
from site_agent.stages import (
    adapt,
    annotate,
    annotator,
    audit,
    export,
    generate,
    pseudonymise,
    split,
    train_synthetic,
)

# raw gold corpus -> splits -> pseudonymised training text -> gold annotator -> adapted
# generator -> synthetic notes -> machine annotations -> privacy audit -> evaluation -> export
STAGES: tuple[Stage[SiteConfig], ...] = (
    split.STAGE,
    pseudonymise.STAGE,
    annotator.STAGE,
    adapt.STAGE,
    generate.STAGE,
    annotate.STAGE,
    audit.STAGE,
    train_synthetic.STAGE,
    export.STAGE,
)

# Only the final evaluation may read the held-out test split.
TEST_SPLIT = "split.test"
FINAL_EVALUATION = frozenset({"train-synthetic"})


def check_registry(
    stages: Sequence[Stage[SiteConfig]], final: frozenset[str] = FINAL_EVALUATION
) -> None:
    """Stage names are unique, inputs come from earlier stages, the test split stays held out
    (only the stages named in ``final`` may read it)."""
    seen: set[str] = set()
    for stage in stages:
        if stage.name in seen:
            raise ValueError(f"stage {stage.name!r} is registered twice")
        for key in stage.inputs:
            upstream = key.partition(".")[0]
            if upstream not in seen:
                raise ValueError(
                    f"stage {stage.name!r} reads {key!r} but {upstream!r} does not run before it"
                )
            if key == TEST_SPLIT and stage.name not in final:
                raise ValueError(
                    f"stage {stage.name!r} reads the test split; only {sorted(final)} "
                    "may (the test split is held out for the final evaluation)"
                )
        seen.add(stage.name)


def stage_names(stages: Sequence[Stage[SiteConfig]] = STAGES) -> list[str]:
    return [s.name for s in stages]


__all__ = ["FINAL_EVALUATION", "STAGES", "TEST_SPLIT", "check_registry", "stage_names"]
