"""One rich progress display per stage; long-running engines add their own bars to it."""

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
