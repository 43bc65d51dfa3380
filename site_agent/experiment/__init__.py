"""``site-agent experiment``: the seed papers' tables as sweeps over the site pipeline.

An experiment file (``spec``) names a site.toml and studies; each study's conditions (regime,
data shares, synthetic amount, generator, generation mode ...) run ``repeats`` times. Every run
goes through the pipeline's stages re-wired for the experiment (``stages``), whose results a
content-addressed store shares between runs (``store``); its training set is built per regime
(``training_sets``); finished runs are recorded and not run again (``runner``); the report
gives mean ± SD and bootstrap CIs beside each run's privacy figures (``results``, ``report``).
"""

from __future__ import annotations

from site_agent.experiment.runner import PlannedRun, plan_runs, run_experiment
from site_agent.experiment.spec import (
    Condition,
    ExperimentSpec,
    ExperimentSpecError,
    load_experiment,
    parse_spec,
)

__all__ = [
    "Condition",
    "ExperimentSpec",
    "ExperimentSpecError",
    "PlannedRun",
    "load_experiment",
    "parse_spec",
    "plan_runs",
    "run_experiment",
]
