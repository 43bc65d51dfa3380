"""A stage killed without a record (the kernel's OOM killer) is reported on the next run with
its peak memory, its minutes and the fix; a stage that ends leaves no marker behind."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import psutil
import pytest
from rich.console import Console

from site_agent.cli.summary import summary_table
from site_agent.config import build_site_config
from site_agent.pipeline.running_marker import (
    RUNNING_FILE,
    RunningMarker,
    killed_marker,
    running_marker,
)
from site_agent.pipeline.stage import Stage, StageContext, StageOutput, read_record
from site_agent.stages.pipeline import run_pipeline


def _adapt(ctx: StageContext) -> StageOutput:
    assert (ctx.stage_dir / RUNNING_FILE).is_file()  # written before the stage body runs
    out = ctx.stage_dir / "adapter.txt"
    out.write_text("lora")
    return StageOutput(artifacts={"adapter": out})


TOY = (Stage("adapt", _adapt, lambda c: {}, memory_fix="lower [adapt] batch_size"),)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_stale_marker_is_reported_with_memory_minutes_and_fix(tmp_path: Path) -> None:
    config = build_site_config(
        {"site_id": "toy", "corpus": {"path": "c"}, "work_dir": str(tmp_path / "work")}
    )
    folder = tmp_path / "work" / "01-adapt"
    folder.mkdir(parents=True)
    start = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
    stale = RunningMarker(
        stage="adapt", pid=_dead_pid(), process_started=1.0, started_at=start,
        sampled_at=start + timedelta(minutes=31), peak_rss_gb=23.6,
    )  # fmt: skip
    (folder / RUNNING_FILE).write_text(stale.model_dump_json(), encoding="utf-8")
    shown = StringIO()
    console = Console(file=shown, width=400)
    runs = run_pipeline(config, TOY, console=console)  # type: ignore[arg-type]
    out = " ".join(shown.getvalue().split())
    assert "the adapt stage was killed at 23.6 GB after 31 min" in out
    assert "fix: lower [adapt] batch_size" in out
    assert [r.status for r in runs] == ["ran"]
    assert not (folder / RUNNING_FILE).exists()  # the new run ended: no marker left
    shown.truncate(0)
    run_pipeline(config, TOY, console=console)  # type: ignore[arg-type]
    assert "killed" not in shown.getvalue()


def test_the_marker_of_a_live_process_is_not_a_kill(tmp_path: Path) -> None:
    me = psutil.Process()
    with running_marker(tmp_path, "generate", every=0.05):
        marker = RunningMarker.model_validate_json((tmp_path / RUNNING_FILE).read_text())
        assert marker.pid == me.pid and marker.peak_rss_gb > 0
        assert killed_marker(tmp_path) is None
    assert not (tmp_path / RUNNING_FILE).exists()


def test_a_reused_pid_is_not_the_stage_process(tmp_path: Path) -> None:
    me = psutil.Process()
    now = datetime.now(UTC)
    other = RunningMarker(
        stage="adapt", pid=me.pid, process_started=me.create_time() - 100, started_at=now,
        sampled_at=now, peak_rss_gb=1.0,
    )  # fmt: skip
    (tmp_path / RUNNING_FILE).write_text(other.model_dump_json(), encoding="utf-8")
    assert killed_marker(tmp_path) == other


def test_stage_json_records_the_peak_memory_the_stage_reached(tmp_path: Path) -> None:
    """A stage that holds 300 MB for a moment has a peak at least that far above the
    process's memory before it, in its record and in the summary table."""
    before = psutil.Process().memory_info().rss / 1024**3

    def _allocate(ctx: StageContext) -> StageOutput:
        block = bytearray(300 * 2**20)  # zero-filled: resident at once
        block[::4096] = b"x" * len(block[::4096])
        out = ctx.stage_dir / "adapter.txt"
        out.write_text(str(len(block)))
        return StageOutput(artifacts={"adapter": out})

    config = build_site_config(
        {"site_id": "toy", "corpus": {"path": "c"}, "work_dir": str(tmp_path / "work")}
    )
    stages = (Stage("adapt", _allocate, lambda c: {}),)
    shown = StringIO()
    runs = run_pipeline(config, stages, console=Console(file=shown, width=200))  # type: ignore[arg-type]
    record = runs[0].record
    assert record is not None and record.peak_rss_gb is not None
    assert record.peak_rss_gb >= before + 0.25
    on_disk = read_record(tmp_path / "work" / "01-adapt")
    assert on_disk is not None and on_disk.peak_rss_gb == record.peak_rss_gb
    table = StringIO()
    Console(file=table, width=200).print(summary_table(runs))
    assert "peak memory" in table.getvalue()
    assert f"{record.peak_rss_gb:.1f} GB" in table.getvalue()


def test_freed_heap_pages_go_back_before_the_next_stage() -> None:
    """Pages an earlier stage freed inside the heap stay resident until trimmed; the marker a
    stage starts with trims them, so they do not count towards the next stage's peak."""
    import sys

    from site_agent.pipeline.running_marker import release_memory

    if not sys.platform.startswith("linux"):
        return
    me = psutil.Process()
    big, keep = [], []
    for _ in range(8_000):  # 32 KB blocks (glibc heap, not mmap) pinned apart by small ones
        big.append(bytearray(32_000))
        keep.append(bytearray(600))
    held = me.memory_info().rss
    del big
    freed = me.memory_info().rss
    assert release_memory()
    trimmed = me.memory_info().rss
    assert held - trimmed > 150 * 2**20  # ~250 MB were freed; most of it goes back
    assert freed - trimmed > 100 * 2**20  # and it was still resident before the trim
    assert len(keep) == 8_000


STOPPABLE = """
import sys, time
from pathlib import Path
from site_agent.pipeline.running_marker import running_marker
with running_marker(Path(sys.argv[1]), "adapt", every=0.05):
    print("running", flush=True)
    time.sleep(60)
"""


def test_a_run_stopped_by_sigterm_leaves_no_marker_and_no_false_kill_report(
    tmp_path: Path,
) -> None:
    """``kill PID`` (SIGTERM) unwinds the stage: exit 143, no marker, so the next run does not
    report an out-of-memory kill that never happened."""
    import signal

    from site_agent.pipeline.running_marker import TERMINATED_EXIT

    child = subprocess.Popen(
        [sys.executable, "-c", STOPPABLE, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "running"
        assert (tmp_path / RUNNING_FILE).is_file()
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == TERMINATED_EXIT == 143
    finally:
        if child.poll() is None:
            child.kill()
    assert not (tmp_path / RUNNING_FILE).exists()
    assert killed_marker(tmp_path) is None


def _marker(**fields: object) -> RunningMarker:
    start = datetime(2026, 11, 27, 11, 2, tzinfo=UTC)
    base: dict[str, object] = {
        "stage": "annotator", "pid": 11726, "process_started": 1.0, "started_at": start,
        "sampled_at": start + timedelta(minutes=98), "peak_rss_gb": 4.83,
    }  # fmt: skip
    return RunningMarker.model_validate(base | fields)


def test_the_kernels_evidence_names_the_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OOM count moved: memory, with the fix. It did not move: stopped from outside, and
    no memory fix (it would be wrong). The machine booted since: a restart. A marker from an
    older version (no evidence) keeps the old 'most likely' wording."""
    from site_agent.pipeline import running_marker as running

    monkeypatch.setattr(running, "boot_time", lambda: 1_000.0)
    monkeypatch.setattr(running, "oom_kills", lambda: 7)
    fix = "lower [annotator.training] batch_size"

    moved = running.killed_message(_marker(boot_time=1_000.0, oom_kills=6), fix)
    assert "killed at 4.8 GB after 98 min" in moved
    assert "out-of-memory killer fired while it ran" in moved and f"fix: {fix}" in moved

    still = running.killed_message(_marker(boot_time=1_000.4, oom_kills=7), fix)
    assert "stopped from outside" in still and "not by memory" in still
    assert "fix:" not in still and "98 min at 4.8 GB" in still

    rebooted = running.killed_message(_marker(boot_time=400.0, oom_kills=7), fix)
    assert "machine restarted" in rebooted and "fix:" not in rebooted

    old = running.killed_message(_marker(), fix)
    assert "most likely the kernel's out-of-memory killer" in old and f"fix: {fix}" in old

    monkeypatch.setattr(running, "oom_kills", lambda: None)  # a kernel that does not count
    unknown = running.killed_message(_marker(boot_time=1_000.0, oom_kills=7), fix)
    assert "most likely" in unknown and f"fix: {fix}" in unknown


def test_a_sigkilled_stage_is_reported_as_stopped_from_outside(tmp_path: Path) -> None:
    """A real SIGKILL (what ends a session or a container) on a machine whose kernel counts
    OOM kills: the next run's message says it was not memory, from the kernel's own count."""
    import signal

    from site_agent.pipeline.running_marker import killed_message, oom_kills

    if oom_kills() is None:
        pytest.skip("this kernel does not count OOM kills (/proc/vmstat oom_kill)")
    child = subprocess.Popen(
        [sys.executable, "-c", STOPPABLE, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "running"
        before = oom_kills()
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    marker = killed_marker(tmp_path)
    assert marker is not None and marker.oom_kills is not None
    message = killed_message(marker, "lower [adapt] batch_size")
    if oom_kills() != before:  # some other process was OOM-killed meanwhile: memory is possible
        assert "fix: lower [adapt] batch_size" in message
    else:
        assert "stopped from outside" in message and "fix:" not in message
