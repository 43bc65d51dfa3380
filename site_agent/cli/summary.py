"""The final table ``site-agent synthesize`` prints: each stage, whether it ran, time, result."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from site_agent.cli.key_figures import key_figure
from site_agent.pipeline.stage_loop import StageRun
from site_agent.plan.estimate import RunPlan
from site_agent.stages.pipeline import folder_of

STATUS_STYLE = {"ran": "green", "skipped": "dim", "failed": "bold red", "stopped": "yellow"}


def _brief(run: StageRun) -> str:
    if run.record is None:
        return ""
    return escape(key_figure(run.name, run.record.summary))


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``2 h 07 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def _against(shown: str | None, estimate: str | None) -> str:
    """``42 s`` alone, or ``42 s (est. 1 min 10 s)`` when the pre-flight estimated it."""
    if shown is None:
        return ""
    return shown if estimate is None else f"{shown} (est. {estimate})"


def _gb(value: float | None) -> str | None:
    return None if value is None else f"{value:.1f} GB"


def summary_table(runs: Sequence[StageRun], plan: RunPlan | None = None) -> Table:
    """One row a stage: status, time and peak memory against the pre-flight's estimates when
    there is a ``plan``, and one figure in words (the full record stays in ``stage.json``)."""
    estimates = {s.stage: s for s in plan.stages} if plan is not None else {}
    table = Table(title="site pipeline")
    table.add_column("stage", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("peak memory", justify="right", no_wrap=True)
    table.add_column("result", overflow="fold", min_width=24)
    for run in runs:
        style = STATUS_STYLE.get(run.status, "")
        ran = run.record is not None and run.status == "ran"
        seconds = run.record.seconds if run.record and ran else run.seconds
        peak = run.record.peak_rss_gb if run.record and ran else None
        estimate = estimates.get(run.name) if ran else None
        table.add_row(
            escape(run.name),
            f"[{style}]{run.status}[/]",
            _against(duration(seconds), duration(estimate.hours * 3600) if estimate else None),
            _against(_gb(peak), _gb(estimate.peak_gb) if estimate else None),
            _brief(run),
        )
    return table


LOG_WIDTH_CAP = 160
"""The widest a closing table is written to a file or pipe; its last column folds within."""


def print_table(console: Console, table: Table) -> None:
    """``table`` on ``console``; written to a file or pipe (an operator's redirected log, where
    rich assumes 80 columns) at the width its unwrapped columns need, up to
    :data:`LOG_WIDTH_CAP`, so that no stage, status, time or memory cell is cut to an ellipsis
    and the result column keeps its width."""
    if console.is_terminal:
        console.print(table)
        return
    needed = Measurement.get(console, console.options.update_width(LOG_WIDTH_CAP), table).maximum
    width = console.width  # print(width=...) is clamped to the console's, so set the console's
    console.width = max(width, min(needed, LOG_WIDTH_CAP))
    try:
        console.print(table)
    finally:
        console.width = width


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
