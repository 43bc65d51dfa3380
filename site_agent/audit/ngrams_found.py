"""Which real n-grams the synthetic notes hold: what n-gram recall, canary contexts and the
sensitive n-gram filter share, accumulated a chunk of notes at a time.

Per counted table (unit, n): how many notes contain each real n-gram (:class:`KeptCounts`,
so the figures after filtering subtract the dropped notes). For the filter's tables: per
note, whether it holds an identifying real n-gram.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from site_agent.audit.context import AuditContext, SyntheticChunk, Table
from site_agent.audit.kept_counts import KeptCounts
from site_agent.privacy.grams import GramTable

__all__ = ["NgramsFound", "Table", "docs_with_sensitive_ngrams"]


def docs_with_sensitive_ngrams(table: GramTable, columns: np.ndarray) -> np.ndarray:
    """Synthetic documents that contain at least one of the real n-grams ``columns`` marks
    (``table.sensitive``: R*; the identifying columns: what the filter counts)."""
    flagged = np.zeros(table.n_synth, dtype=bool)
    flagged[table.synth_docs[columns[table.synth_cols]]] = True
    return flagged


def _distinct_columns(table: GramTable) -> np.ndarray:
    """The column of every (document, real n-gram) pair of the table, each pair once."""
    width = np.int64(max(len(table.vocab), 1))
    pairs = np.unique(table.synth_docs.astype(np.int64) * width + table.synth_cols)
    return pairs % width


class NgramsFound:
    """Real n-grams found in the synthetic notes, for the ``counted`` tables, and the notes
    holding an identifying n-gram of a ``flagged`` table."""

    def __init__(
        self, context: AuditContext, counted: Iterable[Table], flagged: Iterable[Table]
    ) -> None:
        self.counted = sorted(set(counted))
        self.flagged_tables = sorted(set(flagged))
        self.counts = {
            key: KeptCounts(len(context.real_grams(*key).vocab), np.uint32) for key in self.counted
        }
        self._identifying = {key: context.identifying(*key) for key in self.flagged_tables}
        self._flags: list[np.ndarray] = []

    @property
    def tables(self) -> list[Table]:
        """Every table a chunk must look up for this."""
        return sorted({*self.counted, *self.flagged_tables})

    def add(self, chunk: SyntheticChunk) -> None:
        for key, counts in self.counts.items():
            counts.add(_distinct_columns(chunk.table(*key)))
        flags = np.zeros(chunk.n_docs, dtype=bool)
        for key, columns in self._identifying.items():
            flags |= docs_with_sensitive_ngrams(chunk.table(*key), columns)
        self._flags.append(flags)

    def subtract(self, chunk: SyntheticChunk, dropped: np.ndarray) -> None:
        """Take back what the dropped notes of ``chunk`` held (``dropped``: every dropped note)."""
        for key, counts in self.counts.items():
            counts.subtract(_distinct_columns(chunk.table(*key)), dropped)

    def found(self, key: Table, kept: np.ndarray) -> np.ndarray:
        """Per real n-gram of ``key``: whether a note where ``kept`` holds it."""
        return self.counts[key].of(kept) > 0

    def flagged(self) -> np.ndarray:
        """Per synthetic note: it holds an identifying n-gram of a flagged table."""
        self._flags = [np.concatenate(self._flags)] if self._flags else []
        return self._flags[0] if self._flags else np.zeros(0, dtype=bool)
