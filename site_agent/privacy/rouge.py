"""ROUGE-N recall of real documents by synthetic ones, exact, for many pairs at once.

ROUGE-N recall(real r, synthetic s) = Σ_g min(count_r(g), count_s(g)) / Σ_g count_r(g): the
share of the real document's n-grams (with repetition) that the synthetic one reproduces.

Comparing every synthetic document with every real one is out of reach at scale, so
:func:`rouge_candidates` finds, without missing any, every pair whose recall can exceed a
threshold t (prefix filtering: if s reproduces more than t|r| of r's n-gram occurrences it
must contain one of r's |r| - floor(t|r|) rarest ones), and :func:`rouge_recall` computes
the exact value for the pairs asked for.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from site_agent.privacy.grams import GramTable, RealGrams

_PAIR_CHUNK = 20_000
_SLICE = 1 << 22


def rouge_recall(table: GramTable, synth: np.ndarray, real: np.ndarray) -> np.ndarray:
    """Exact ROUGE-``table.n`` recall for each (synthetic, real) document pair."""
    out = np.zeros(len(synth), dtype=np.float64)
    totals = table.real_totals
    for begin in range(0, len(synth), _PAIR_CHUNK):
        s, r = synth[begin : begin + _PAIR_CHUNK], real[begin : begin + _PAIR_CHUNK]
        shared = table.synth_counts[s].minimum(table.real_counts[r]).sum(axis=1)
        denominator = totals[r]
        out[begin : begin + len(s)] = np.divide(
            np.asarray(shared).ravel(),
            denominator,
            out=np.zeros(len(s)),
            where=denominator > 0,
        )
    return out


def _occurrence_numbers(docs: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """0 for the first occurrence of a column in a document, 1 for the second, ..."""
    positions = np.arange(len(docs))
    starts = np.ones(len(docs), dtype=bool)
    starts[1:] = (docs[1:] != docs[:-1]) | (cols[1:] != cols[:-1])
    return positions - np.maximum.accumulate(np.where(starts, positions, 0))


def _doc_slices(table: RealGrams, size: int) -> list[tuple[int, int]]:
    """Runs of whole real documents holding about ``size`` occurrences each, as ranges of
    the occurrence arrays (``real_docs`` is sorted)."""
    if np.any(np.diff(table.real_docs) < 0):
        raise ValueError("the real occurrences must be in document order (as real_grams makes)")
    ends = np.cumsum(table.real_totals)
    bounds, begin = [], 0
    while begin < len(table.real_docs):
        doc = int(table.real_docs[begin])
        cut = int(np.searchsorted(ends, begin + size, "right"))
        end = int(ends[max(cut - 1, doc)])
        bounds.append((begin, end))
        begin = end
    return bounds


def _occurrences(table: RealGrams, lo: int, hi: int) -> tuple[np.ndarray, ...]:
    """The occurrences ``lo:hi`` (whole documents) sorted by (document, column): documents,
    columns, occurrence numbers, and each one's element, (column, occurrence number) as one
    int64 ordered like the pair."""
    docs, cols = table.real_docs[lo:hi], table.real_cols[lo:hi]
    order = np.lexsort((cols, docs))
    docs, cols = docs[order], cols[order]
    occurrence = _occurrence_numbers(docs, cols)
    return docs, cols, occurrence, (cols.astype(np.int64) << 32) | occurrence


class _ElementFrequency:
    """How many real documents hold each element: for first occurrences (nearly all), the
    document frequency of the column, one count per n-gram; for the repeats within a
    document, a small sorted table."""

    def __init__(self, table: RealGrams, slices: list[tuple[int, int]]) -> None:
        self.first = np.zeros(len(table.vocab), dtype=np.int64)
        repeats: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        for lo, hi in slices:
            _, cols, occurrence, element = _occurrences(table, lo, hi)
            found, counts = np.unique(cols[occurrence == 0], return_counts=True)
            self.first[found] += counts
            repeats.append(element[occurrence > 0])
        self.repeated, self.repeated_counts = np.unique(np.concatenate(repeats), return_counts=True)

    def of(self, cols: np.ndarray, occurrence: np.ndarray, element: np.ndarray) -> np.ndarray:
        out = self.first[cols]
        again = np.flatnonzero(occurrence > 0)
        out[again] = self.repeated_counts[np.searchsorted(self.repeated, element[again])]
        return out


def _prefix_postings(
    table: RealGrams, threshold: float, slice_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """(column, real document) for the rarest n-gram occurrences of each real document.

    An occurrence is an element (column, occurrence number in its document); a document's
    elements are ranked by how many documents hold them, rarest first. The real documents
    are taken a run at a time (a document's ranks need only its elements and their document
    frequencies), so the memory is one run's and one count per n-gram, not the corpus's."""
    slices = _doc_slices(table, slice_size)
    frequency = _ElementFrequency(table, slices)
    totals = table.real_totals
    size = totals - np.floor(threshold * totals - 1e-9).astype(np.int64)
    limit = np.minimum(size, totals)
    first = np.concatenate([[0], np.cumsum(totals)[:-1]])
    cols_out: list[np.ndarray] = [np.zeros(0, dtype=np.int32)]
    docs_out: list[np.ndarray] = [np.zeros(0, dtype=np.int32)]
    for lo, hi in slices:
        docs, cols, occurrence, element = _occurrences(table, lo, hi)
        rarity = frequency.of(cols, occurrence, element)
        by_rarity = np.lexsort((element, rarity, docs))
        docs, cols = docs[by_rarity], cols[by_rarity]
        keep = np.arange(lo, hi) - first[docs] < limit[docs]
        cols_out.append(cols[keep])
        docs_out.append(docs[keep])
    return np.concatenate(cols_out), np.concatenate(docs_out)


def prefix_matrix(real: RealGrams, threshold: float, slice_size: int = _SLICE) -> sparse.csr_matrix:
    """n-grams x real documents: 1 where the n-gram is among a document's rarest occurrences
    that any synthetic document above ``threshold`` must share (built once per audit, from
    runs of real documents of about ``slice_size`` n-grams each)."""
    cols, docs = _prefix_postings(real, threshold, slice_size)
    return sparse.csr_matrix(
        (np.ones(len(cols), dtype=np.float32), (cols, docs)), shape=(len(real.vocab), real.n_real)
    )


def rouge_candidates(
    table: GramTable, threshold: float, prefix: sparse.csr_matrix | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every (synthetic, real) pair whose ROUGE-n recall may exceed ``threshold``, sorted.

    The join "synthetic document contains an n-gram of a real document's prefix" is one
    sparse product (synthetic x n-grams) @ (n-grams x real), so a common n-gram shared by
    many pairs costs an accumulation, not a row per pair to deduplicate. ``prefix`` is
    :func:`prefix_matrix` of ``table.real`` at ``threshold``, when already built.
    """
    if prefix is None:
        prefix = prefix_matrix(table.real, threshold)
    vocab = len(table.vocab)
    in_prefix = np.diff(prefix.indptr) > 0
    hit = in_prefix[table.synth_cols]
    contains = sparse.csr_matrix(
        (np.ones(int(hit.sum()), dtype=np.float32), (table.synth_docs[hit], table.synth_cols[hit])),
        shape=(table.n_synth, vocab),
    )
    pairs = (contains @ prefix).tocoo()
    order = np.lexsort((pairs.col, pairs.row))
    return pairs.row[order].astype(np.int64), pairs.col[order].astype(np.int64)
