"""A stall restart of the annotator is said on screen, not only in annotator.json."""

from __future__ import annotations

from datetime import UTC, datetime

from site_agent.cli.summary import annotator_notes
from site_agent.pipeline.stage import StageRecord
from site_agent.pipeline.stage_loop import StageRun


def _run(name: str, summary: dict[str, object]) -> StageRun:
    now = datetime.now(UTC)
    record = StageRecord(
        stage=name, status="completed", config_digest="d", input_hashes={}, summary=summary,
        tool_version="0", started_at=now, finished_at=now, seconds=1.0,
    )  # fmt: skip
    return StageRun(name=name, status="ran", seconds=1.0, record=record)


def test_a_stall_restart_is_announced() -> None:
    runs = [_run("split", {}), _run("annotator", {"base_model": "m", "stall_restarts": 1})]
    (line,) = annotator_notes(runs)
    assert "restarted 1 time(s)" in line and "trained 2 times" in line


def test_no_restart_no_note() -> None:
    assert annotator_notes([_run("annotator", {"base_model": "m", "recall": 0.9})]) == []
