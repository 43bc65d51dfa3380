"""The estimate-against-run table of issue 29: ratios and the 30% bar against values worked by
hand, pauses and earlier invocations taken into account, read from a work dir through the
pipeline's own records, and a clear error for a wrong dir."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmarks.preflight_accuracy import accuracy_rows, main, stage_records
from protocol import Corpus, Document, Span
from shared.atomic import atomic_write_text
from site_agent.adapt.recipe import Machine
from site_agent.config import build_site_config
from site_agent.pipeline.running_marker import RUNNING_FILE
from site_agent.pipeline.stage import STAGE_RECORD, StageRecord
from site_agent.plan.artifact import PLAN_FILE
from site_agent.plan.estimate import RunPlan, StageEstimate, plan_run
from site_agent.stages.pipeline import folder_of

HOURS = {"annotator": 0.5, "adapt": 1.0, "generate": 2.0, "export": 0.0, "audit": 0.1}


def _plan() -> RunPlan:
    """A real pre-flight plan, its stage estimates set to round figures to work by hand."""
    text = "Paciente Ana Ruiz, 54 años, ingresa el 3 de mayo. " * 4
    notes = tuple(
        Document(id=f"n{i}", text=text, spans=(Span(start=9, end=17, label="NOMBRE"),))
        for i in range(8)
    )
    config = build_site_config({"site_id": "h", "corpus": {"path": "c.jsonl"}})
    plan = plan_run(config, Corpus(documents=notes, labels=("NOMBRE",)), Machine(memory_gb=24))
    stages = tuple(
        StageEstimate(stage=name, hours=hours, peak_gb=1.0, basis="by hand")
        for name, hours in HOURS.items()
    )
    return plan.model_copy(update={"stages": stages})


def _record(
    stage: str, seconds: float, status: str = "completed", earlier: float | None = None
) -> StageRecord:
    now = datetime.now(UTC)
    summary = {} if earlier is None else {"seconds_earlier_runs": earlier}
    return StageRecord(
        stage=stage, status=status, config_digest="d", input_hashes={}, tool_version="0",
        started_at=now, finished_at=now, seconds=seconds, peak_rss_gb=2.0, summary=summary,
    )  # fmt: skip


def test_rows_against_hand_worked_ratios() -> None:
    records: dict[str, StageRecord | str] = {
        "annotator": _record("annotator", 2_700),  # 0.75 h against 0.5: 1.5, outside the bar
        "adapt": _record("adapt", 3_600 + 600),  # 600 s paused: 1.0 h, ratio 1.0
        # plus 1,800 s of earlier invocations it recorded and 1,800 s it did not: 2.0 h
        "generate": _record("generate", 3_600, earlier=1_800),
        "export": _record("export", 5),  # estimated 0 h: no ratio
        "audit": _record("audit", 10, "failed"),
    }
    rows = accuracy_rows(_plan(), records, {"adapt": 600}, {"generate": 1_800})
    got = {r["stage"]: (r["ratio"], r["within"], r["status"]) for r in rows}
    assert got["annotator"] == (pytest.approx(1.5), False, "completed")
    assert got["adapt"] == (pytest.approx(1.0), True, "completed")
    assert got["generate"] == (pytest.approx(1.0), True, "completed")
    assert got["export"] == (None, None, "completed")
    assert got["audit"] == (None, None, "failed")


def test_a_stage_without_a_record_is_not_run() -> None:
    rows = accuracy_rows(_plan(), {}, {}, {})
    assert {r["status"] for r in rows} == {"not run"}


def test_reads_a_work_dir_and_refuses_one_without_a_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan()
    atomic_write_text(tmp_path / PLAN_FILE, plan.model_dump_json())
    annotator = folder_of(tmp_path, "annotator")
    annotator.mkdir()
    atomic_write_text(annotator / STAGE_RECORD, _record("annotator", 1_800).model_dump_json())
    adapt = folder_of(tmp_path, "adapt")
    adapt.mkdir()
    (adapt / RUNNING_FILE).write_text("{}")
    records = stage_records(plan, tmp_path)
    assert set(records) == {"annotator", "adapt"} and records["adapt"] == "running"
    assert isinstance(records["annotator"], StageRecord)
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "annotator" in out and "running" in out
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "preflight_accuracy.py"
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "nowhere")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "no readable run-plan.json" in done.stderr
    bad = subprocess.run(
        [sys.executable, str(script), str(tmp_path), "--paused", "adapt"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode != 0 and "expected STAGE=SECONDS" in bad.stderr


def test_the_run_is_priced_again_from_its_site_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--site-config`` needs no saved plan: this code's pre-flight of the same corpus, set
    against the records in the work dir (short stages in seconds)."""
    from shared.corpus_io import write_corpus

    text = "Paciente Ana Ruiz, 54 años, ingresa el 3 de mayo. " * 4
    notes = tuple(
        Document(id=f"n{i}", text=text, spans=(Span(start=9, end=17, label="NOMBRE"),))
        for i in range(20)
    )
    write_corpus(Corpus(documents=notes, labels=("NOMBRE",)), tmp_path / "c.jsonl")
    work = tmp_path / "work"
    site = tmp_path / "site.toml"
    site.write_text(
        f'site_id = "h"\nwork_dir = "{work}"\n[corpus]\npath = "{tmp_path / "c.jsonl"}"\n'
    )
    audit = folder_of(work, "audit")
    audit.mkdir(parents=True)
    atomic_write_text(audit / STAGE_RECORD, _record("audit", 7).model_dump_json())
    assert main([str(work)]) == 2  # nothing saved a plan there
    capsys.readouterr()
    assert main([str(work), "--site-config", str(site)]) == 0
    out = capsys.readouterr().out
    audit_row = next(line for line in out.splitlines() if "│ audit" in line)
    assert "completed" in audit_row and "7 s" in audit_row
    assert not (work / PLAN_FILE).exists()  # priced, not saved
