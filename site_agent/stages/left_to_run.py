"""What a resumed run still has to do: the plan's hours less what its work dir already holds
under the current settings (read, never written)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from site_agent.config import SiteConfig
from site_agent.pipeline.stage import StageRecord, read_record
from site_agent.stages.pipeline import folder_of
from site_agent.stages.registry import STAGES

if TYPE_CHECKING:
    from site_agent.plan.estimate import RunPlan


@dataclass(frozen=True)
class LeftToRun:
    """What of a planned run is still to do in its work dir: hours and what is done."""

    hours: float
    done: tuple[str, ...]
    partly: tuple[str, ...]


def left_to_run(plan: RunPlan, config: SiteConfig, from_stage: str | None = None) -> LeftToRun:
    """The plan's hours less the stages already completed in ``config.work_dir`` under the
    current settings (their ``stage.json``) and the share of the notes a generation saved
    (its store is kept when only settings it does not depend on changed); stages from
    ``from_stage`` on, and stages reading an artifact of a stage still to run, count in full
    (their inputs will change). An estimate: an upstream input that changed on disk is found
    only when the run gets there. Reads, never writes."""
    from site_agent.stages.generate import PARTIAL_FILE

    inputs = {stage.name: {key.split(".")[0] for key in stage.inputs} for stage in STAGES}
    hours, done, partly = 0.0, list[str](), list[str]()
    for estimate in plan.stages:
        rerun, record, same = _last_run(config, estimate.stage, from_stage)
        upstream = bool(inputs.get(estimate.stage, set()) - set(done))
        if same and not upstream and record is not None and record.status == "completed":
            done.append(estimate.stage)
            continue
        share = 1.0
        partial = folder_of(config.work_dir, estimate.stage) / PARTIAL_FILE
        saved = _saved_notes(partial) if estimate.stage == "generate" else 0
        if saved > 0 and not rerun and not upstream and _store_kept(record, same, config):
            share = max(0.0, 1.0 - saved / max(plan.generation.notes, 1))
            partly.append(f"{estimate.stage}: {saved} of {plan.generation.notes} notes on disk")
        hours += estimate.hours * share
    return LeftToRun(hours, tuple(done), tuple(partly))


def _store_kept(record: StageRecord | None, same: bool, config: SiteConfig) -> bool:
    """Whether a generation store goes on: a stopped run of these settings, or a finished
    one whose generator settings (``generator_digest``) are the current ones."""
    from site_agent.stages.generate import generator_digest

    if record is None or same:
        return True
    return record.summary.get("generator_digest") in (None, generator_digest(config))


def _last_run(
    config: SiteConfig, name: str, from_stage: str | None
) -> tuple[bool, StageRecord | None, bool]:
    """Whether ``from_stage`` runs stage ``name`` again; its record in ``config.work_dir``
    (None then, or when there is none); whether that record is for the current settings."""
    from site_agent.pipeline.stage_loop import settings_digest

    names = [s.name for s in STAGES]
    index = names.index(name)
    if from_stage in names and index >= names.index(from_stage):
        return True, None, False
    record = read_record(folder_of(config.work_dir, name))
    same = record is not None and record.config_digest == settings_digest(STAGES[index], config)
    return False, record, same


def audited_notes(config: SiteConfig, from_stage: str | None = None) -> int | None:
    """The notes the audit kept in ``config.work_dir``, when its stage completed under the
    current settings and ``from_stage`` does not run it again; None otherwise."""
    _, record, same = _last_run(config, "audit", from_stage)
    kept = record.summary.get("kept") if record is not None else None
    if not same or record is None or record.status != "completed" or not isinstance(kept, int):
        return None
    return kept


def _saved_notes(path: Path) -> int:
    """Complete lines in a generation's partial store (a torn last one is not counted)."""
    try:
        with path.open("rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    except OSError:
        return 0
