"""Corpus-level counts over the synthetic notes, before and after filtering, without keeping
what each note holds.

A corpus figure such as n-gram recall asks which real n-grams *some* kept note contains.
Keeping every note's n-grams would make the audit's memory grow with the synthetic corpus, so
a count per real n-gram (how many notes hold it) is kept instead: the figures before
filtering read it as it is, and once the filters have decided, the dropped notes are read
again and subtracted, leaving the counts over the kept notes.
"""

from __future__ import annotations

import numpy as np


class KeptCounts:
    """One count per column (a real n-gram, a secret's n-gram) over every synthetic note,
    then, after :meth:`subtract` of the dropped notes, over the kept notes only."""

    def __init__(self, width: int, dtype: type[np.integer] = np.int64) -> None:
        self.values = np.zeros(width, dtype=dtype)
        self._dropped: np.ndarray | None = None

    def add(self, columns: np.ndarray) -> None:
        """Count one more for each entry of ``columns`` (repeats count repeatedly)."""
        self._change(columns, 1)

    def add_counts(self, counts: np.ndarray) -> None:
        self.values += counts.astype(self.values.dtype)

    def subtract(self, columns: np.ndarray, dropped: np.ndarray) -> None:
        """Take back the counts of dropped notes; ``dropped`` marks every dropped note."""
        self._note_dropped(dropped)
        self._change(columns, -1)

    def subtract_counts(self, counts: np.ndarray, dropped: np.ndarray) -> None:
        self._note_dropped(dropped)
        self.values -= counts.astype(self.values.dtype)

    def of(self, kept: np.ndarray) -> np.ndarray:
        """The counts over the notes where ``kept``: all notes before any subtraction, the kept
        ones after; any other subset is refused (its counts were never taken)."""
        if self._dropped is None and kept.all():
            return self.values
        if self._dropped is not None and np.array_equal(~kept, self._dropped):
            return self.values
        raise ValueError(
            "corpus counts are held for all synthetic notes, then for the kept ones once the "
            "dropped notes are subtracted; asked for another subset of notes"
        )

    def _change(self, columns: np.ndarray, sign: int) -> None:
        values, repeats = np.unique(columns, return_counts=True)
        if sign > 0:
            self.values[values] += repeats.astype(self.values.dtype)
        else:
            self.values[values] -= repeats.astype(self.values.dtype)

    def _note_dropped(self, dropped: np.ndarray) -> None:
        if self._dropped is None:
            self._dropped = dropped.copy()
        elif not np.array_equal(self._dropped, dropped):
            raise ValueError("dropped notes were subtracted for two different filter outcomes")
