"""Progress when the output is not a terminal: plain periodic lines instead of silence."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from shared.progress import PlainProgress, ProgressBars, new_progress

REPO = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_file_gets_plain_lines_at_start_every_interval_and_end() -> None:
    out = io.StringIO()
    clock = Clock()
    progress = PlainProgress(Console(file=out, width=200), every_s=30, clock=clock)
    bars = ProgressBars(progress)
    with progress:
        for step in range(0, 601, 10):  # 600 steps, one every 2 s
            clock.now = step / 5
            bars.phase("annotator training", step, 600)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("progress annotator training: 0/600 (0%)")
    assert lines[-1].startswith("progress annotator training: 600/600 (100%), 2m00s elapsed")
    # 120 s of training: the start, one line per 30 s, and the end; never the end twice
    assert len(lines) == 1 + 120 // 30
    assert "about 1m00s left" in lines[2]  # 60 s in, 300 of 600 done


def test_a_resumed_count_starts_its_first_line_at_what_was_done() -> None:
    out = io.StringIO()
    progress = PlainProgress(Console(file=out, width=200), every_s=30, clock=Clock())
    with progress:
        ProgressBars(progress, "generated notes").count(1832, 2000)
    assert out.getvalue().splitlines() == ["progress generated notes: 1832/2000 (92%), 0s elapsed"]


def test_terminals_keep_rich_bars_and_files_get_plain_lines() -> None:
    assert isinstance(new_progress(Console(file=io.StringIO())), PlainProgress)
    terminal = new_progress(Console(file=io.StringIO(), force_terminal=True))
    assert not isinstance(terminal, PlainProgress)


def test_stage_progress_prints_to_a_redirected_stderr() -> None:
    """As a site runs it: ``synthesize 2> log``; the log shows the bar's lines."""
    script = (
        "from shared.progress import ProgressBars, stage_progress\n"
        "with stage_progress() as progress:\n"
        "    bars = ProgressBars(progress, 'generated notes')\n"
        "    for done in range(5):\n"
        "        bars.count(done, 4)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60,
        check=True,
    )  # fmt: skip
    lines = done.stderr.splitlines()
    assert lines[0].startswith("progress generated notes: 0/4 (0%)")
    assert lines[-1].startswith("progress generated notes: 4/4 (100%)")
