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

from site_agent.privacy.grams import GramTable

_PAIR_CHUNK = 20_000


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


def _prefix_postings(table: GramTable, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(column, real document) for the rarest n-gram occurrences of each real document."""
    width = np.int64(max(len(table.vocab), 1))
    order = np.argsort(table.real_docs.astype(np.int64) * width + table.real_cols)
    docs, cols = table.real_docs[order], table.real_cols[order]
    if not len(docs):
        return cols, docs
    occurrence = _occurrence_numbers(docs, cols)
    element = cols.astype(np.int64) * (int(occurrence.max()) + 1) + occurrence
    _, inverse, counts = np.unique(element, return_inverse=True, return_counts=True)
    by_rarity = np.lexsort((element, counts[inverse], docs))
    docs, cols = docs[by_rarity], cols[by_rarity]
    totals = table.real_totals
    first = np.concatenate([[0], np.cumsum(totals)[:-1]])
    rank = np.arange(len(docs)) - first[docs]
    size = totals - np.floor(threshold * totals - 1e-9).astype(np.int64)
    keep = rank < np.minimum(size, totals)[docs]
    return cols[keep], docs[keep]


def rouge_candidates(table: GramTable, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Every (synthetic, real) pair whose ROUGE-n recall may exceed ``threshold``, sorted.

    The join "synthetic document contains an n-gram of a real document's prefix" is one
    sparse product (synthetic x n-grams) @ (n-grams x real), so a common n-gram shared by
    many pairs costs an accumulation, not a row per pair to deduplicate.
    """
    cols, docs = _prefix_postings(table, threshold)
    vocab, n_real = len(table.vocab), table.n_real
    prefix = sparse.csr_matrix(
        (np.ones(len(cols), dtype=np.float32), (cols, docs)), shape=(vocab, n_real)
    )
    in_prefix = np.diff(prefix.indptr) > 0
    hit = in_prefix[table.synth_cols]
    contains = sparse.csr_matrix(
        (np.ones(int(hit.sum()), dtype=np.float32), (table.synth_docs[hit], table.synth_cols[hit])),
        shape=(table.n_synth, vocab),
    )
    pairs = (contains @ prefix).tocoo()
    order = np.lexsort((pairs.col, pairs.row))
    return pairs.row[order].astype(np.int64), pairs.col[order].astype(np.int64)
