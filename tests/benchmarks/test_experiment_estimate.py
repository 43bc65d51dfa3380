"""benchmarks/experiment_estimate.py --measured: the stage times of a finished experiment,
each store folder counted once however many runs link to it."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.experiment_estimate import measured
from site_agent.pipeline.stage import STAGE_RECORD, StageRecord
from studies.experiment import plan_runs
from studies.spec import load_experiment
from studies.specs import spec_path
from tests.conftest import REPO


def stored(store: Path, stage: str, key: str, seconds: float, status: str = "completed") -> Path:
    folder = store / stage / key
    folder.mkdir(parents=True)
    now = datetime.now(UTC)
    record = StageRecord(
        stage=stage, status=status, config_digest="d", input_hashes={}, tool_version="t",
        started_at=now, finished_at=now, seconds=seconds,
    )  # fmt: skip
    (folder / STAGE_RECORD).write_text(record.model_dump_json(), encoding="utf-8")
    return folder


def linked(out: Path, run: str, name: str, target: Path) -> None:
    link = out / "runs" / run / "work" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent), target_is_directory=True)


def fake_experiment(out: Path, runs: tuple[str, str, str]) -> None:
    """Three runs sharing an adapter and a generation, one of them failed, and a run of
    another experiment file in the same folder."""
    store = out / "store"
    adapter = stored(store, "adapt", "k1", 600.0)
    generated = stored(store, "generate", "k2", 300.0)
    failed = stored(store, "generate", "k3", 50.0, status="failed")
    stored(store, "generate", "k4", 999.0)  # in the store, linked by no run of this one
    for run, generation in zip(runs, (generated, failed, generated), strict=True):
        linked(out, run, "05-adapt", adapter)
        linked(out, run, "06-generate", generation)
    linked(out, "other/00-r0", "06-generate", stored(store, "generate", "k5", 70.0))


def test_measured_counts_each_linked_completed_folder_once(tmp_path: Path) -> None:
    runs = ("s/00-r0", "s/01-r0", "t/00-r0")
    fake_experiment(tmp_path, runs)
    assert measured(tmp_path, runs) == {"adapt": (1, 600.0), "generate": (1, 300.0)}
    assert measured(tmp_path, [*runs, "other/00-r0"])["generate"] == (2, 370.0)


def test_measured_column_beside_the_estimate(tmp_path: Path) -> None:
    path = spec_path("quick.toml")
    spec, _ = load_experiment(path)
    planned = [r.run_id for r in plan_runs(spec)]
    fake_experiment(tmp_path, (planned[0], planned[1], planned[-1]))
    script = REPO / "benchmarks" / "experiment_estimate.py"
    done = subprocess.run(
        [sys.executable, str(script), str(path), "--measured", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "COLUMNS": "200"},
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if "│" in line}
    assert rows["adapt"].split("│")[-2].strip() == "0.17"  # 600 s
    assert rows["generate"].split("│")[-2].strip() == "0.08"  # 300 s
    assert rows["total"].split("│")[-2].strip() == "0.25"
