"""The estimate-against-run table of issue 29: ratios and the 30% bar against values worked by
hand, pauses and earlier invocations taken into account, and a clear error for a wrong dir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.preflight_accuracy import accuracy_rows, main, stage_folders

PLAN = {
    "stages": [
        {"stage": "annotator", "hours": 0.5, "peak_gb": 5.3},
        {"stage": "adapt", "hours": 1.0, "peak_gb": 6.7},
        {"stage": "generate", "hours": 2.0, "peak_gb": 1.4},
        {"stage": "export", "hours": 0.0, "peak_gb": 0.5},
        {"stage": "audit", "hours": 0.1, "peak_gb": 2.9},
    ]
}


def _done(seconds: float, gb: float = 1.0) -> dict[str, object]:
    return {"status": "completed", "seconds": seconds, "peak_rss_gb": gb}


def test_rows_against_hand_worked_ratios() -> None:
    records = {
        "annotator": _done(2_700),  # 0.75 h against 0.5: 1.5, outside the bar
        "adapt": _done(3_600 + 600),  # 600 s paused: 1.0 h, ratio 1.0
        "generate": _done(3_600),  # plus 3,600 s of an earlier invocation: 2.0 h
        "export": _done(5),  # estimated 0 h: no ratio
        "audit": {"status": "failed", "seconds": 10},
    }
    rows = accuracy_rows(PLAN, records, {"adapt": 600}, {"generate": 3_600})
    got = {r["stage"]: (r["ratio"], r["within"], r["status"]) for r in rows}
    assert got["annotator"] == (pytest.approx(1.5), False, "completed")
    assert got["adapt"] == (pytest.approx(1.0), True, "completed")
    assert got["generate"] == (pytest.approx(1.0), True, "completed")
    assert got["export"] == (None, None, "completed")
    assert got["audit"] == (None, None, "failed")


def test_a_stage_without_a_record_is_not_run() -> None:
    rows = accuracy_rows(PLAN, {}, {}, {})
    assert {r["status"] for r in rows} == {"not run"}


def test_reads_a_work_dir_and_refuses_one_without_a_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "03-annotator").mkdir()
    (tmp_path / "03-annotator" / "stage.json").write_text(json.dumps(_done(1_800, 5.0)))
    (tmp_path / "run-plan.json").write_text(json.dumps(PLAN))
    assert stage_folders(tmp_path) == {"annotator": tmp_path / "03-annotator"}
    assert main([str(tmp_path)]) == 0
    assert "annotator" in capsys.readouterr().out
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "preflight_accuracy.py"
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "nowhere")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "no run-plan.json" in done.stderr
    bad = subprocess.run(
        [sys.executable, str(script), str(tmp_path), "--paused", "adapt"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode != 0 and "expected STAGE=SECONDS" in bad.stderr
