"""The site pipeline: the registered stages, run in order under ``<work_dir>/<NN-name>/``.

A stage re-runs when its settings digest or any input hash changed, when its artifacts are
gone or differ on disk from the hashes its record names, or when ``from_stage`` names it or
an earlier stage. Before anything runs, the checks that would otherwise fail hours in:
device, model names, generation backend. One run at a time per work dir (an exclusive lock,
``pipeline/lock.py``); leftovers of an interrupted export are removed under it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from shared.errors import UsageError
from site_agent.config import SiteConfig
from site_agent.pipeline.lock import work_dir_lock
from site_agent.pipeline.stage import Stage, artifact_path, read_record
from site_agent.pipeline.stage_loop import (
    StageRun,
    WorkDirPlacement,
    check_from,
    run_stages,
    stage_folder,
)
from site_agent.pipeline.work_dir import refuse_linked_parts
from site_agent.stages.knobs import SharedKnobs, resolve_knobs
from site_agent.stages.registry import STAGES, check_registry

if TYPE_CHECKING:
    from site_agent.plan.estimate import RunPlan


def folder_of(work_dir: Path, name: str) -> Path:
    """The folder of the registered stage ``name`` under ``work_dir``."""
    index = [s.name for s in STAGES].index(name)
    return stage_folder(work_dir, index + 1, STAGES[index])


def stage_artifact(work_dir: Path, stage: str, artifact: str) -> Path | None:
    """Where the last completed run of ``stage`` put ``artifact``, read from its ``stage.json``
    (None when the stage has not completed or made no such artifact)."""
    folder = folder_of(work_dir, stage)
    record = read_record(folder)
    if record is None or record.status != "completed" or artifact not in record.artifacts:
        return None
    return artifact_path(folder, record.artifacts[artifact])


def apply_device(device: str) -> None:
    """Honour ``device``: hide CUDA for ``cpu``; refuse ``cuda`` when none is visible.

    The engines pick CUDA by themselves when they see it, so ``cpu`` works by hiding it
    before torch initialises CUDA.
    """
    if device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    elif device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError("device = 'cuda' but no CUDA device is visible; fix: use 'auto'")


def check_runnable(config: SiteConfig, *, exports: bool = True) -> None:
    """Checks that would otherwise fail hours in: device, the audit rules' figures (each one
    a measure declares), model names, backend (the audit policy is validated with the
    config), and the signing key of a run that ``exports``.
    Model names are resolved offline (nothing is fetched or converted here)."""
    from site_agent.audit.rules import check_rule_figures
    from site_agent.generate.engine_rule import check_backend_name
    from site_agent.stages.export import check_signing_key
    from site_agent.stages.model_references import check_model_references

    apply_device(config.device)
    check_rule_figures(config.audit.policy.rules)
    check_model_references(config)
    check_backend_name(config.generation.backend)
    if exports:
        check_signing_key(config)


def run_pipeline(
    config: SiteConfig,
    stages: Sequence[Stage[SiteConfig]] | None = None,
    from_stage: str | None = None,
    console: Console | None = None,
    runs: list[StageRun] | None = None,
    plan: RunPlan | None = None,
) -> list[StageRun]:
    """Run every stage in order; returns (and appends to ``runs``) what ran and was skipped.
    The run's plan (``plan``: the one the caller's pre-flight printed; None: computed here)
    is written first as ``run-plan.json``, which the adapt and generate stages apply."""
    stages = STAGES if stages is None else stages
    check_registry(stages)
    check_runnable(config, exports=any(stage.name == "export" for stage in stages))
    placement = WorkDirPlacement(config.work_dir, stages, check_from(stages, from_stage))
    console = console or Console(stderr=True)
    knobs = resolve_knobs(config)  # once per run: the plan and every stage get these
    with work_dir_lock(config.work_dir):
        folders = [stage_folder(config.work_dir, i, s) for i, s in enumerate(stages, 1)]
        refuse_linked_parts(config.work_dir, [config.work_dir / "outbox", *folders])
        remove_partial_bundles(config.work_dir / "outbox")
        write_run_plan(config, stages, from_stage, plan, knobs)
        return run_stages(config, stages, placement, console=console, runs=runs, resolved=knobs)


PLAN_READERS = frozenset({"adapt", "generate"})
"""The stages that apply the run plan (``run-plan.json``)."""


def write_run_plan(
    config: SiteConfig,
    stages: Sequence[Stage[SiteConfig]],
    from_stage: str | None = None,
    plan: RunPlan | None = None,
    knobs: SharedKnobs | None = None,
) -> RunPlan | None:
    """Write the run's plan (``plan``, else computed once here, with the run's ``knobs``, from
    the training split the split stage writes) as ``run-plan.json`` in the work dir when a
    stage of ``stages`` applies it; a plan that cannot be computed (the corpus is unreadable:
    the split stage reports it) leaves no stale file behind. Returns what was written."""
    from site_agent.plan.artifact import PLAN_FILE, save_plan
    from site_agent.stages.preflight import run_preflight

    if not any(stage.name in PLAN_READERS for stage in stages):
        return None
    if plan is None:
        plan = run_preflight(config, from_stage=from_stage, mode=knobs.mode if knobs else None)
    if plan is None:
        (config.work_dir / PLAN_FILE).unlink(missing_ok=True)
        return None
    save_plan(plan, config.work_dir)
    return plan


def remove_partial_bundles(outbox: Path) -> list[Path]:
    """Delete the hidden folders an interrupted export left in ``outbox`` (``.<id>.*.tmp``
    being built, ``.<id>.old`` being replaced); called under the work-dir lock."""
    if outbox.is_symlink() or not outbox.is_dir():
        return []  # never delete through a link (refuse_linked_parts names it)
    removed = [p for p in outbox.glob(".*") if p.is_dir() and not p.is_symlink()]
    for folder in removed:
        shutil.rmtree(folder, ignore_errors=True)
    return removed
