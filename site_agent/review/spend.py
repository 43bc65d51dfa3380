"""The hook where an evaluation accountant shows what the federation's evaluations spent.

An accountant (the privacy budget a site grants the coordinator's evaluations of its test
split) registers a reader with :func:`register_spend_reader`; the reader takes the site's work
dir and returns the lines to show (figure name, value, what it means), or None when it has
nothing recorded there. The review page shows every reader's lines under *Audit*, and says
plainly when no accountant is installed, so the absence of figures is never read as zero spend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SpendLine:
    """One figure of an accountant: its name, its value as shown, and what it means."""

    figure: str
    value: str
    meaning: str = ""


SpendReader = Callable[[Path], list[SpendLine] | None]
SPEND_READERS: dict[str, SpendReader] = {}
"""Accountant name -> reader over the work dir. None are built in yet."""


def register_spend_reader(name: str, reader: SpendReader) -> SpendReader:
    SPEND_READERS[name] = reader
    return reader


def evaluation_spend(work_dir: Path) -> dict[str, list[SpendLine]]:
    """Every registered accountant's lines for this work dir (those with something to say)."""
    found = {name: reader(work_dir) for name, reader in SPEND_READERS.items()}
    return {name: lines for name, lines in found.items() if lines}
