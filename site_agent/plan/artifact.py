"""``run-plan.json``: the one plan of a run, written before any stage runs and read by the
stages that apply it (adapt, generate), which never compute it again."""

from __future__ import annotations

from pathlib import Path

from shared.atomic import atomic_write_text
from shared.errors import UsageError
from shared.records import read_record_file
from site_agent.plan.estimate import RunPlan

PLAN_FILE = "run-plan.json"


def save_plan(plan: RunPlan, work_dir: Path) -> Path:
    """The run's plan in the work dir (``run-plan.json``), beside the stage folders whose
    ``stage.json`` records what each stage measured, so estimates can be checked afterwards."""
    work_dir.mkdir(parents=True, exist_ok=True)
    path = work_dir / PLAN_FILE
    atomic_write_text(path, plan.model_dump_json(indent=2) + "\n")
    return path


def read_plan(work_dir: Path) -> RunPlan | None:
    """The plan the last run saved in ``work_dir``; None when there is none."""
    return read_record_file(RunPlan, work_dir / PLAN_FILE)


def plan_of_run(work_dir: Path) -> RunPlan:
    """The plan of the run under way in ``work_dir``: what a stage applies. Refused (exit 64)
    when there is none, rather than computed again from whatever this stage reads."""
    plan = read_plan(work_dir)
    if plan is None:
        raise UsageError(
            f"{work_dir / PLAN_FILE}: no readable run plan; fix: run the stages through "
            "site-agent synthesize (or run_pipeline), which writes it before any stage runs"
        )
    return plan
