"""The final table ``site-agent synthesize`` prints: each stage, whether it ran, time, result."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from site_agent.pipeline.runner import StageRun
from site_agent.plan.estimate import RunPlan
from site_agent.stages.pipeline import folder_of

STATUS_STYLE = {"ran": "green", "skipped": "dim", "failed": "bold red", "stopped": "yellow"}


def _brief(run: StageRun) -> str:
    if run.record is None:
        return ""
    return escape(", ".join(f"{k}={v}" for k, v in run.record.summary.items()))


def _measured_vs(value: float | None, estimate: float | None, digits: int) -> str:
    """``123.4`` alone, or ``123.4 (est. 150.0)`` when the pre-flight estimated it."""
    if value is None:
        return ""
    shown = f"{value:.{digits}f}"
    return shown if estimate is None else f"{shown} (est. {estimate:.{digits}f})"


def summary_table(runs: Sequence[StageRun], plan: RunPlan | None = None) -> Table:
    """One row a stage; with the pre-flight's ``plan``, its estimates beside what was measured."""
    estimates = {s.stage: s for s in plan.stages} if plan is not None else {}
    table = Table(title="site pipeline")
    table.add_column("stage")
    table.add_column("status")
    table.add_column("seconds", justify="right")
    table.add_column("peak GB", justify="right")
    table.add_column("result", overflow="fold")
    for run in runs:
        style = STATUS_STYLE.get(run.status, "")
        ran = run.record is not None and run.status == "ran"
        seconds = run.record.seconds if run.record and ran else run.seconds
        peak = run.record.peak_rss_gb if run.record and ran else None
        estimate = estimates.get(run.name) if ran else None
        table.add_row(
            escape(run.name),
            f"[{style}]{run.status}[/]",
            _measured_vs(seconds, estimate.hours * 3600 if estimate else None, 1),
            _measured_vs(peak, estimate.peak_gb if estimate else None, 1),
            _brief(run),
        )
    return table


def where_to_look(runs: Sequence[StageRun], work_dir: Path) -> list[str]:
    """Where the site report and the signed bundle are, once the pipeline has finished."""
    records = {run.name: run.record for run in runs if run.record is not None}
    wanted = (("train-synthetic", "report_md", "site report"), ("export", "bundle", "bundle"))
    lines = []
    for stage, artifact, what in wanted:
        record = records.get(stage)
        if record is not None and artifact in record.artifacts:
            path = Path(record.artifacts[artifact])
            path = path if path.is_absolute() else folder_of(work_dir, stage) / path
            lines.append(f"{what}: {path}")
    return lines


def annotator_notes(runs: Sequence[StageRun]) -> list[str]:
    """Lines to say on screen about the annotator stage: a stall restart doubles its time."""
    for run in runs:
        if run.name == "annotator" and run.record is not None:
            restarts = run.record.summary.get("stall_restarts")
            if restarts:
                return [
                    f"annotator: stalled on predicting only O and was restarted {restarts} "
                    f"time(s) with the next seed, so it trained {int(restarts) + 1} times "
                    "(see annotator.json and the site report)"
                ]
    return []
