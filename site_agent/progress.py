"""Rich progress bars for long stages, behind a plain ``(done, total, message)`` callable."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from site_agent.stages.base import ProgressSink


@contextlib.contextmanager
def stage_progress(name: str, console: Console | None = None) -> Iterator[ProgressSink]:
    """A progress sink that draws one bar for ``name``; the bar appears at the first update."""
    bar = Progress(
        TextColumn("[bold blue]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[message]}"),
        console=console or Console(stderr=True),
        transient=False,
    )
    task = None

    def update(done: int, total: int, message: str = "") -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(name, total=total or None, message=message)
        bar.update(task, completed=done, total=total or None, message=message)

    try:
        yield update
    finally:
        if task is not None:
            bar.stop()
