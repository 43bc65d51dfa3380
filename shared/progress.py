"""One rich progress display per stage; long-running engines add their own bars to it.

Rich draws its bars only on a terminal: with output sent to a file (``synthesize > log``) it
stays silent until the stage ends. There the display is a :class:`PlainProgress`, which
prints one plain line per bar when it starts, every ``every_s`` seconds, and when it ends.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

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

PLAIN_EVERY_S = 30.0


class PlainProgress(Progress):
    """Progress for logs: no live bars; a plain ``progress`` line per bar now and then."""

    def __init__(
        self,
        console: Console,
        every_s: float = PLAIN_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(console=console, disable=True, get_time=clock)
        self.every_s = every_s
        self.clock = clock
        self._printed: dict[TaskID, float] = {}
        self._finished: set[TaskID] = set()

    def add_task(self, description: str, *args: Any, **kwargs: Any) -> TaskID:
        task_id = super().add_task(description, *args, **kwargs)
        self._report(task_id)
        return task_id

    def update(self, task_id: TaskID, *args: Any, **kwargs: Any) -> None:
        super().update(task_id, *args, **kwargs)
        self._report(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._report(task_id)

    def _report(self, task_id: TaskID) -> None:
        task = self._tasks[task_id]
        now = self.clock()
        done = task.total is not None and task.completed >= task.total
        if task_id in self._finished or not (
            task_id not in self._printed or done or now - self._printed[task_id] >= self.every_s
        ):
            return
        self._printed[task_id] = now
        if done:
            self._finished.add(task_id)
        self.console.print(plain_line(task), markup=False, highlight=False, soft_wrap=True)


def plain_line(task: Any) -> str:
    """``progress annotator training: 120/600 (20%), 1m04s elapsed, about 4m16s left``."""
    count = f"{task.completed:g}" if task.total is None else f"{task.completed:g}/{task.total:g}"
    share = f" ({100 * task.completed / task.total:.0f}%)" if task.total else ""
    line = f"progress {task.description}: {count}{share}, {_duration(task.elapsed)} elapsed"
    left = task.time_remaining if task.total and task.completed < task.total else None
    return line + (f", about {_duration(left)} left" if left is not None else "")


def _duration(seconds: float | None) -> str:
    minutes, secs = divmod(int(seconds or 0), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def new_progress(console: Console | None = None) -> Progress:
    """Rich bars on a terminal; plain periodic lines when the output goes to a file or pipe."""
    console = console or Console(stderr=True)
    if not console.is_terminal:
        return PlainProgress(console)
    return Progress(
        TextColumn("[bold blue]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
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
            # a resumed run's first line shows what was already done, not 0
            self._tasks[name] = self.progress.add_task(name, total=total or None, completed=done)
        self.progress.update(self._tasks[name], completed=done, total=total or None)

    def count(self, done: int, total: int) -> None:
        self.phase(self.default, done, total)
