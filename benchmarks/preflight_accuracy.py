"""How close the pre-flight's estimate came to a finished (or resumed) site run, stage by stage.

    python benchmarks/preflight_accuracy.py runs/site
    python benchmarks/preflight_accuracy.py runs/site --paused annotator=500 --paused adapt=60

Reads the work dir's ``run-plan.json`` (the estimate ``site-agent synthesize`` printed first)
and each stage's ``stage.json`` (wall seconds and peak RSS of the run that completed it), and
prints one row per stage: estimated and measured hours, measured / estimated, whether that is
within 30% (issue 29's bar), and the two peaks. ``--paused STAGE=SECONDS`` takes out the time
the stage's process was stopped (SIGSTOP) while another job had the cores. ``--site-config
site.toml`` prices the run again with this checkout's pre-flight (the same corpus, machine and
work dir state, e.g. the notes the audit kept) instead of reading the saved plan. A generate stage
resumed over several invocations adds its earlier invocations' generating seconds (its
``seconds_earlier_runs``); ``--extra STAGE=SECONDS`` adds time no record holds (a run from a
version that did not keep it). Stages that were
skipped, failed or have not run show as such. Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from site_agent.pipeline.running_marker import RUNNING_FILE
from site_agent.pipeline.stage import StageRecord, read_record
from site_agent.plan.artifact import read_plan
from site_agent.plan.estimate import RunPlan
from site_agent.stages.pipeline import folder_of

BAR = 0.30
"""Issue 29: each stage's estimate within 30% of its measured wall time."""


def stage_records(plan: RunPlan, work: Path) -> dict[str, StageRecord | str]:
    """Each planned stage's ``stage.json`` in ``work``, or "running" when only its running
    marker is there (in progress, or killed: the next run says which)."""
    out: dict[str, StageRecord | str] = {}
    for estimate in plan.stages:
        folder = folder_of(work, estimate.stage)
        record = read_record(folder)
        if record is not None:
            out[estimate.stage] = record
        elif (folder / RUNNING_FILE).is_file():
            out[estimate.stage] = "running"
    return out


def accuracy_rows(
    plan: RunPlan,
    records: dict[str, StageRecord | str],
    paused: dict[str, float],
    extra: dict[str, float],
) -> list[dict[str, Any]]:
    """One row per planned stage: estimate, measurement (seconds less pauses plus earlier
    invocations), their ratio and whether it is within :data:`BAR`."""
    rows = []
    for estimate in plan.stages:
        name = estimate.stage
        record = records.get(name, "not run")
        row: dict[str, Any] = {
            "stage": name,
            "estimated_h": estimate.hours,
            "estimated_gb": estimate.peak_gb,
            "measured_h": None,
            "measured_gb": None,
            "ratio": None,
            "within": None,
            "status": record if isinstance(record, str) else record.status,
        }
        if isinstance(record, StageRecord) and record.status == "completed":
            earlier = float(record.summary.get("seconds_earlier_runs", 0.0))  # resumed stages
            seconds = record.seconds + earlier - paused.get(name, 0.0) + extra.get(name, 0.0)
            hours = seconds / 3600
            row.update(measured_h=hours, measured_gb=record.peak_rss_gb)
            if estimate.hours > 0:
                row["ratio"] = hours / estimate.hours
                row["within"] = abs(row["ratio"] - 1) <= BAR
        rows.append(row)
    return rows


def _replan(site_config: Path) -> RunPlan | None:
    """This checkout's pre-flight of the run ``site_config`` describes, as ``synthesize``
    would price it now (its work dir as it stands)."""
    from site_agent.config import load_site_config
    from site_agent.stages.preflight import run_preflight

    return run_preflight(load_site_config(site_config))


def _duration(hours: float | None) -> str:
    if hours is None:
        return ""
    return f"{hours:.2f} h" if hours >= 0.1 else f"{hours * 3600:.0f} s"


def _pairs(values: list[str], flag: str) -> dict[str, float]:
    out = {}
    for value in values:
        stage, sep, seconds = value.partition("=")
        try:
            out[stage] = float(seconds)
        except ValueError:
            sep = ""
        if not sep:
            raise SystemExit(f"{flag} {value!r}: expected STAGE=SECONDS, e.g. annotator=120")
    return out


def _fmt(value: float | None, pattern: str) -> str:
    return "" if value is None else pattern.format(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="the site's work dir (holds run-plan.json)")
    parser.add_argument("--paused", action="append", default=[], metavar="STAGE=SECONDS")
    parser.add_argument("--extra", action="append", default=[], metavar="STAGE=SECONDS")
    parser.add_argument(
        "--site-config", type=Path, help="price the run again with this code's pre-flight"
    )
    args = parser.parse_args(argv)
    plan = read_plan(args.work) if args.site_config is None else _replan(args.site_config)
    if plan is None:
        print(
            f"{args.work}: no readable run-plan.json; fix: pass the work dir of a run",
            file=sys.stderr,
        )
        return 2
    records = stage_records(plan, args.work)
    rows = accuracy_rows(
        plan, records, _pairs(args.paused, "--paused"), _pairs(args.extra, "--extra")
    )
    table = Table(title=f"pre-flight estimate against the run, {args.work}")
    for column in ("stage", "status", "estimate", "measured", "measured / estimate",
                   f"within {BAR:.0%}", "estimate GB", "peak GB"):  # fmt: skip
        table.add_column(column)
    for row in rows:
        within = {True: "yes", False: "no", None: ""}[row["within"]]
        table.add_row(
            row["stage"], row["status"], _duration(row["estimated_h"]),
            _duration(row["measured_h"]), _fmt(row["ratio"], "{:.2f}"), within,
            f"{row['estimated_gb']:.1f}", _fmt(row["measured_gb"], "{:.1f}"),
        )  # fmt: skip
    Console(width=140).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
