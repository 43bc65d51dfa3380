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
from dataclasses import dataclass, replace

import numpy as np
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
    in_pii = stream.in_pii
    for begin in range(0, starts, slice_size):
        end = min(begin + slice_size, starts)
        count = end - begin
        window = stream.hashes[begin : end + n - 1]
        valid = doc_of[begin:end] == doc_of[begin + n - 1 : end + n - 1]
        sensitive = None
        if in_pii is not None:  # PII tokens per window, from this slice's running count
            prefix = np.concatenate([[0], np.cumsum(in_pii[begin : end + n - 1], dtype=np.int64)])
            sensitive = (prefix[n : count + n] - prefix[:count] > 0)[valid]
        yield NgramSlice(
            _combine(window, n, count)[valid],
            doc_of[begin:end][valid],
            sensitive,
            np.flatnonzero(valid) + begin,
        )


def _sorted_lookup(vocab: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Column of each hash in the sorted ``vocab`` (-1 where absent). The queries are sorted
    first: a binary search of sorted keys stays in cache, and no hash table the size of the
    vocabulary is built or kept."""
    columns = np.full(len(hashes), -1, dtype=np.int64)
    if not len(vocab) or not len(hashes):
        return columns
    order = np.argsort(hashes)
    ordered = hashes[order]
    where = np.minimum(np.searchsorted(vocab, ordered), len(vocab) - 1)
    found = vocab[where] == ordered
    columns[order[found]] = where[found]
    return columns


@dataclass(frozen=True)
class RealGrams:
    """The unique n-grams of a real corpus (the vocabulary, sorted) and their occurrences.

    Built once per audit and shared by every chunk of synthetic notes looked up in it. The
    occurrence arrays (``real_docs``, ``real_cols``, ``real_starts``) are what the derived
    tables are built from; :meth:`slim` drops them once those are built (they are the bulk).
    """

    n: int
    vocab: np.ndarray
    sensitive: np.ndarray
    real_docs: np.ndarray
    real_cols: np.ndarray
    real_starts: np.ndarray
    n_real: int
    real_totals: np.ndarray
    counts: sparse.csr_matrix | None = None

    @property
    def real_counts(self) -> sparse.csr_matrix:
        """n-gram counts per real document (the ROUGE-N numerators' other side)."""
        if self.counts is not None:
            return self.counts
        return _counts(self.real_docs, self.real_cols, (self.n_real, len(self.vocab)))

    def with_counts(self) -> RealGrams:
        """A copy that keeps :attr:`real_counts` (built now) for every later lookup."""
        return replace(self, counts=self.real_counts)

    def slim(self) -> RealGrams:
        """A copy without the occurrence arrays (vocabulary, flags, totals and counts kept)."""
        empty = np.zeros(0, dtype=np.int32)
        return replace(self, real_docs=empty, real_cols=empty, real_starts=empty.astype(np.int64))

    def columns(self, hashes: np.ndarray) -> np.ndarray:
        """Column of each n-gram hash in the vocabulary, -1 where it is not a real n-gram."""
        return _sorted_lookup(self.vocab, hashes)


def unique_columns(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(hashes, return_inverse=True)`` with the inverse as int32, built with a
    third less memory at the peak (no int64 inverse beside its int32 copy)."""
    order = np.argsort(hashes)
    ordered = hashes[order]
    first = np.ones(len(ordered), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    vocab = ordered[first]
    del ordered
    ranks = np.cumsum(first, dtype=np.int32)
    ranks -= 1
    cols = np.empty(len(hashes), dtype=np.int32)
    cols[order] = ranks
    return vocab, cols


def real_grams(real: TokenStream, n: int) -> RealGrams:
    """The real n-grams of ``real``: vocabulary, PII flags and every occurrence (in stream
    order, so ``real_docs`` is sorted). The occurrences are written into arrays sized once,
    not gathered in slices and joined: at 100,000 notes that copy alone was gigabytes."""
    width = max(real.n_tokens - n + 1, 0)
    hashes = np.empty(width, dtype=U64)
    docs = np.empty(width, dtype=np.int32)
    starts = np.empty(width, dtype=np.int64)
    flags = np.zeros(width if real.in_pii is not None else 0, dtype=bool)
    filled = 0
    for piece in iter_ngrams(real, n):
        end = filled + len(piece.hashes)
        hashes[filled:end], docs[filled:end] = piece.hashes, piece.docs
        starts[filled:end] = piece.positions
        if piece.sensitive is not None:
            flags[filled:end] = piece.sensitive
        filled = end
    vocab, cols = unique_columns(hashes[:filled])
    del hashes
    sensitive = np.zeros(len(vocab), dtype=bool)
    if real.in_pii is not None:
        sensitive[cols[flags[:filled]]] = True
    del flags
    docs = docs[:filled]
    return RealGrams(
        n=n,
        vocab=vocab,
        sensitive=sensitive,
        real_docs=docs,
        real_cols=cols,
        real_starts=starts[:filled],
        n_real=real.n_docs,
        real_totals=np.bincount(docs, minlength=real.n_docs),
    )


@dataclass(frozen=True)
class GramTable:
    """Real n-grams (the vocabulary) and where they occur in both corpora.

    ``real`` is shared by every synthetic corpus (or chunk of one) looked up in it; the
    ``synth_*`` arrays are this corpus's occurrences of real n-grams, in stream order.
    """

    real: RealGrams
    synth_docs: np.ndarray
    synth_cols: np.ndarray
    synth_starts: np.ndarray
    n_synth: int

    @property
    def n(self) -> int:
        return self.real.n

    @property
    def vocab(self) -> np.ndarray:
        return self.real.vocab

    @property
    def sensitive(self) -> np.ndarray:
        return self.real.sensitive

    @property
    def real_docs(self) -> np.ndarray:
        return self.real.real_docs

    @property
    def real_cols(self) -> np.ndarray:
        return self.real.real_cols

    @property
    def real_starts(self) -> np.ndarray:
        return self.real.real_starts

    @property
    def n_real(self) -> int:
        return self.real.n_real

    @property
    def real_totals(self) -> np.ndarray:
        """n-grams per real document, counted with repetition (ROUGE-N denominators)."""
        return self.real.real_totals

    @functools.cached_property
    def real_counts(self) -> sparse.csr_matrix:
        return self.real.real_counts

    @functools.cached_property
    def synth_counts(self) -> sparse.csr_matrix:
        return _counts(self.synth_docs, self.synth_cols, (self.n_synth, len(self.vocab)))

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


def _require_spans(stream: TokenStream) -> None:
    if stream.pii_span is None or stream.pii_chars is None:
        raise ValueError("a window's spans need a real stream (with_pii=True)")


def window_runs(stream: TokenStream, starts: np.ndarray, n: int) -> Iterator[WindowRuns]:
    """The n-token windows starting at ``starts`` of a real stream, a slice of rows at a
    time: each token's span (-1 for none) and the share of that span held so far along the
    window (at a span's last token in the window: all the window holds of it)."""
    _require_spans(stream)
    spans, chars = stream.pii_span, stream.pii_chars
    assert spans is not None and chars is not None  # _require_spans
    rows = _SLICE // max(n, 1)
    for begin in range(0, len(starts), rows):
        index = starts[begin : begin + rows, None] + np.arange(n)
        span = spans[index]
        run = chars[index].astype(np.int64)
        for j in range(1, n):  # characters of the span so far, along each window
            same = (span[:, j] == span[:, j - 1]) & (span[:, j] >= 0)
            run[:, j] += np.where(same, run[:, j - 1], 0)
        whole = np.where(span >= 0, stream.span_chars[np.maximum(span, 0)], 1)
        yield WindowRuns(slice(begin, begin + len(index)), span, run / whole)


@dataclass(frozen=True)
class WindowRuns:
    """Rows ``rows`` of the windows: their tokens' spans and the share of each held so far."""

    rows: slice
    span: np.ndarray
    share: np.ndarray


def window_shares(stream: TokenStream, starts: np.ndarray, n: int) -> np.ndarray:
    """For each n-token window starting at ``starts``: the largest share of one gold span's
    characters (as held by the stream's tokens) that the window holds; 0 outside PII."""
    _require_spans(stream)
    best = np.zeros(len(starts), dtype=np.float64)
    if not len(stream.span_chars):  # no token holds a span
        return best
    for part in window_runs(stream, starts, n):
        best[part.rows] = part.share.max(axis=1)
    return best


def lookup_grams(
    real: RealGrams, synthetic: TokenStream, base: GramTable | None = None
) -> GramTable:
    """Look the synthetic n-grams up among the real ones.

    With a ``base`` table of shorter n-grams of the same synthetic stream, only the windows
    whose sub-windows all occur in the real corpus are hashed and looked up (the rest cannot
    match).
    """
    n = real.n
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
        found = real.columns(piece.hashes)
        hit = found >= 0
        docs.append(piece.docs[hit])
        cols.append(found[hit].astype(np.int32))
        starts.append(piece.positions[hit])
    return GramTable(
        real=real,
        synth_docs=np.concatenate(docs),
        synth_cols=np.concatenate(cols),
        synth_starts=np.concatenate(starts),
        n_synth=synthetic.n_docs,
    )


def build_gram_table(
    real: TokenStream, synthetic: TokenStream, n: int, base: GramTable | None = None
) -> GramTable:
    """Collect the real n-grams, then look the synthetic n-grams up in them
    (see :func:`lookup_grams` for ``base``)."""
    return lookup_grams(real_grams(real, n), synthetic, base)


def window_identifying(
    stream: TokenStream, starts: np.ndarray, n: int, min_share: float, specific: np.ndarray
) -> np.ndarray:
    """For each n-token window starting at ``starts``: whether it holds ``min_share`` or
    more of one specific gold span's characters (``specific``: a flag per span of the
    stream), or that share of each of two spans at once."""
    _require_spans(stream)
    found = np.zeros(len(starts), dtype=bool)
    if not len(stream.span_chars):
        return found
    for part in window_runs(stream, starts, n):
        inside = part.span >= 0
        held = inside & (part.share >= min_share)
        # a span's tokens are consecutive: count each span once, where its run in the window ends
        ends = np.ones_like(inside)
        ends[:, :-1] = part.span[:, 1:] != part.span[:, :-1]
        one_specific = (held & specific[np.maximum(part.span, 0)]).any(axis=1)
        found[part.rows] = one_specific | ((held & ends).sum(axis=1) >= 2)
    return found


def identifying_columns(
    table: RealGrams | GramTable,
    real: TokenStream,
    min_share: float,
    specific: np.ndarray | None = None,
) -> np.ndarray:
    """The n-grams of R* that, in at least one real occurrence, hold ``min_share`` or more of
    one gold span's characters (0: all of R*). With digit-by-digit tokenizers, a header line
    plus the first digit of a date is in R* but says nothing about the date.

    With ``specific`` (a flag per gold span of ``real``, ``privacy.specific``), only that
    share of a specific span, or of two spans at once, counts: a date's day and month after
    a form header, or an age, is shared by many patients and is not enough on its own."""
    if min_share <= 0:
        return table.sensitive
    occurrences = np.flatnonzero(table.sensitive[table.real_cols])
    starts = table.real_starts[occurrences]
    if specific is None:
        hit = window_shares(real, starts, table.n) >= min_share
    else:
        hit = window_identifying(real, starts, table.n, min_share, specific)
    chosen = np.zeros(len(table.vocab), dtype=bool)
    chosen[table.real_cols[occurrences[hit]]] = True
    return chosen
