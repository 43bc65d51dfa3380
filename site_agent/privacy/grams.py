"""n-grams as 64-bit hashes, and the table of real n-grams that every overlap measure shares.

An n-gram is n consecutive tokens of one document (windows never cross documents). The
:class:`GramTable` for one n holds the unique n-grams R of the real corpus (sorted hashes),
which of them overlap a gold PII span (R*), and every occurrence of an R n-gram in the real
and the synthetic corpus as (document, column) pairs. n-gram recall, ROUGE-N and the sensitive
n-gram filter are all computed from it, with hash-table lookups instead of pairwise loops.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from site_agent.privacy.tokens import U64, TokenStream, mix64

_GRAM_BASE = U64(0x9E3779B97F4A7C15)
_SLICE = 1 << 22


@dataclass(frozen=True)
class NgramSlice:
    """n-gram hashes of a run of windows, with their document, start position and PII flag."""

    hashes: np.ndarray
    docs: np.ndarray
    sensitive: np.ndarray | None
    positions: np.ndarray


def _combine(tokens: np.ndarray, n: int, count: int) -> np.ndarray:
    gram = tokens[:count].copy()
    for offset in range(1, n):
        gram = gram * _GRAM_BASE + tokens[offset : offset + count]
    return mix64(gram + U64(n))


def ngrams_of(tokens: np.ndarray, n: int) -> np.ndarray:
    """The n-gram hashes of one token sequence (one document)."""
    count = len(tokens) - n + 1
    if count <= 0:
        return np.zeros(0, dtype=U64)
    return _combine(tokens, n, count)


def ngrams_at(tokens: np.ndarray, positions: np.ndarray, n: int) -> np.ndarray:
    """The n-gram hashes starting at ``positions`` (the caller keeps them inside documents)."""
    gram = tokens[positions]
    for offset in range(1, n):
        gram = gram * _GRAM_BASE + tokens[positions + offset]
    return mix64(gram + U64(n))


def iter_ngrams(stream: TokenStream, n: int, slice_size: int = _SLICE) -> Iterator[NgramSlice]:
    """Every n-gram of ``stream`` in order, in slices that bound the memory used."""
    starts = stream.n_tokens - n + 1
    if starts <= 0:
        return
    doc_of = stream.doc_of_token
    pii_prefix = None
    if stream.in_pii is not None:
        pii_prefix = np.concatenate([[0], np.cumsum(stream.in_pii, dtype=np.int64)])
    for begin in range(0, starts, slice_size):
        end = min(begin + slice_size, starts)
        count = end - begin
        window = stream.hashes[begin : end + n - 1]
        valid = doc_of[begin:end] == doc_of[begin + n - 1 : end + n - 1]
        sensitive = None
        if pii_prefix is not None:
            sensitive = (pii_prefix[begin + n : end + n] - pii_prefix[begin:end] > 0)[valid]
        yield NgramSlice(
            _combine(window, n, count)[valid],
            doc_of[begin:end][valid],
            sensitive,
            np.flatnonzero(valid) + begin,
        )


def windows_per_doc(stream: TokenStream, n: int) -> np.ndarray:
    return np.maximum(stream.lengths - n + 1, 0)


@dataclass(frozen=True)
class GramTable:
    """Real n-grams (the vocabulary) and where they occur in both corpora."""

    n: int
    vocab: np.ndarray
    sensitive: np.ndarray
    real_docs: np.ndarray
    real_cols: np.ndarray
    real_starts: np.ndarray
    synth_docs: np.ndarray
    synth_cols: np.ndarray
    n_real: int
    n_synth: int
    synth_starts: np.ndarray

    def candidate_starts(self, stream: TokenStream, n: int) -> np.ndarray:
        """Window starts where a synthetic n-gram (n > self.n) can be a real one: each of its
        self.n-token sub-windows must be a real self.n-gram, so only starts whose covering
        sub-windows are all hits qualify."""
        hit = np.zeros(stream.n_tokens + n, dtype=bool)
        hit[self.synth_starts] = True
        offsets = sorted({*range(0, n - self.n + 1, self.n), n - self.n})
        starts = self.synth_starts[self.synth_starts + n <= stream.n_tokens]
        for offset in offsets[1:]:
            starts = starts[hit[starts + offset]]
        doc_of = stream.doc_of_token
        return starts[doc_of[starts] == doc_of[starts + n - 1]]

    @functools.cached_property
    def real_totals(self) -> np.ndarray:
        """n-grams per real document, counted with repetition (ROUGE-N denominators)."""
        return np.bincount(self.real_docs, minlength=self.n_real)

    @functools.cached_property
    def real_counts(self) -> sparse.csr_matrix:
        return _counts(self.real_docs, self.real_cols, (self.n_real, len(self.vocab)))

    @functools.cached_property
    def synth_counts(self) -> sparse.csr_matrix:
        return _counts(self.synth_docs, self.synth_cols, (self.n_synth, len(self.vocab)))

    def synth_hits(self, kept: np.ndarray | None = None) -> np.ndarray:
        """Columns of the real n-grams found in the (kept) synthetic documents."""
        found = np.zeros(len(self.vocab), dtype=bool)
        cols = self.synth_cols if kept is None else self.synth_cols[kept[self.synth_docs]]
        found[cols] = True
        return found


def _counts(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sparse.csr_matrix:
    ones = np.ones(len(rows), dtype=np.int32)
    matrix = sparse.csr_matrix((ones, (rows, cols)), shape=shape)
    matrix.sum_duplicates()
    return matrix


def _real_side(
    real: TokenStream, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vocabulary, sensitive flags, and the document, column and start of every real n-gram
    occurrence)."""
    pieces = list(iter_ngrams(real, n))
    hashes = np.concatenate([p.hashes for p in pieces]) if pieces else np.zeros(0, dtype=U64)
    docs = np.concatenate([p.docs for p in pieces]) if pieces else np.zeros(0, np.int32)
    starts = np.concatenate([p.positions for p in pieces]) if pieces else np.zeros(0, np.int64)
    vocab, inverse = np.unique(hashes, return_inverse=True)
    sensitive = np.zeros(len(vocab), dtype=bool)
    if real.in_pii is not None and pieces:
        flags = np.concatenate([p.sensitive for p in pieces if p.sensitive is not None])
        sensitive[inverse[flags]] = True
    return vocab, sensitive, docs, inverse.astype(np.int32), starts


def window_shares(stream: TokenStream, starts: np.ndarray, n: int) -> np.ndarray:
    """For each n-token window starting at ``starts``: the largest share of one gold span's
    characters (as held by the stream's tokens) that the window holds; 0 outside PII."""
    if stream.pii_span is None or stream.pii_chars is None:
        raise ValueError("window_shares needs a real stream (with_pii=True)")
    totals = stream.span_chars
    best = np.zeros(len(starts), dtype=np.float64)
    if not len(totals):  # no token holds a span
        return best
    rows = _SLICE // max(n, 1)
    for begin in range(0, len(starts), rows):
        index = starts[begin : begin + rows, None] + np.arange(n)
        span = stream.pii_span[index]
        run = stream.pii_chars[index].astype(np.int64)
        for j in range(1, n):  # characters of the span so far, along each window
            same = (span[:, j] == span[:, j - 1]) & (span[:, j] >= 0)
            run[:, j] += np.where(same, run[:, j - 1], 0)
        whole = np.where(span >= 0, totals[np.maximum(span, 0)], 1)
        best[begin : begin + len(index)] = (run / whole).max(axis=1)
    return best


def build_gram_table(
    real: TokenStream, synthetic: TokenStream, n: int, base: GramTable | None = None
) -> GramTable:
    """Collect the real n-grams, then look the synthetic n-grams up in them (hash table).

    With a ``base`` table of shorter real n-grams, only the synthetic windows whose
    sub-windows all occur in the real corpus are hashed and looked up (the rest cannot match).
    """
    vocab, sensitive, real_docs, real_cols, real_starts = _real_side(real, n)
    index = pd.Index(vocab)
    docs: list[np.ndarray] = [np.zeros(0, np.int32)]
    cols: list[np.ndarray] = [np.zeros(0, np.int32)]
    starts: list[np.ndarray] = [np.zeros(0, np.int64)]
    pieces: Iterable[NgramSlice]
    if base is not None and base.n < n:
        candidates = base.candidate_starts(synthetic, n)
        pieces = [
            NgramSlice(
                ngrams_at(synthetic.hashes, candidates, n),
                synthetic.doc_of_token[candidates],
                None,
                candidates,
            )
        ]
    else:
        pieces = iter_ngrams(synthetic, n)
    for piece in pieces:
        found = index.get_indexer(piece.hashes)
        hit = found >= 0
        docs.append(piece.docs[hit])
        cols.append(found[hit].astype(np.int32))
        starts.append(piece.positions[hit])
    return GramTable(
        n=n,
        vocab=vocab,
        sensitive=sensitive,
        real_docs=real_docs,
        real_cols=real_cols,
        real_starts=real_starts,
        synth_docs=np.concatenate(docs),
        synth_cols=np.concatenate(cols),
        n_real=real.n_docs,
        n_synth=synthetic.n_docs,
        synth_starts=np.concatenate(starts),
    )


def identifying_columns(table: GramTable, real: TokenStream, min_share: float) -> np.ndarray:
    """The n-grams of R* that, in at least one real occurrence, hold ``min_share`` or more of
    one gold span's characters (0: all of R*). With digit-by-digit tokenizers, a header line
    plus the first digit of a date is in R* but says nothing about the date."""
    if min_share <= 0:
        return table.sensitive
    occurrences = np.flatnonzero(table.sensitive[table.real_cols])
    shares = window_shares(real, table.real_starts[occurrences], table.n)
    chosen = np.zeros(len(table.vocab), dtype=bool)
    chosen[table.real_cols[occurrences[shares >= min_share]]] = True
    return chosen
