"""One rich progress display per stage; long-running engines add their own bars to it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def new_progress(console: Console | None = None) -> Progress:
    return Progress(
        TextColumn("[bold blue]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
    )


@contextlib.contextmanager
def stage_progress(console: Console | None = None) -> Iterator[Progress]:
    """A started progress display, stopped when the stage ends (also on failure)."""
    progress = new_progress(console)
    with progress:
        yield progress


class ProgressBars:
    """Adapts engine callbacks onto one rich display: one bar per named phase.

    The annotator reports ``(phase, done, total)``; adaptation and generation report
    ``(done, total)`` and get a bar named after the stage.
    """

    def __init__(self, progress: Progress | None, default: str = "working") -> None:
        self.progress = progress
        self.default = default
        self._tasks: dict[str, TaskID] = {}

    def phase(self, name: str, done: int, total: int) -> None:
        if self.progress is None:
            return
        if name not in self._tasks:
            self._tasks[name] = self.progress.add_task(name, total=total or None)
        self.progress.update(self._tasks[name], completed=done, total=total or None)

    def count(self, done: int, total: int) -> None:
        self.phase(self.default, done, total)
