"""BM25 retrieval of the nearest real documents for every synthetic one, as sparse products.

The scoring is bm25s's Lucene variant (idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
tf / (tf + k1 (1 - b + b |d| / avgdl))), summed over query tokens with repetition; the tests
check the scores against bm25s itself. Instead of scoring one query at a time, a batch of
synthetic documents becomes a sparse term-count matrix and one product with the
terms x real-documents weight matrix scores the whole batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from site_agent.privacy.grams import unique_columns
from site_agent.privacy.tokens import TokenStream


@dataclass(frozen=True)
class Bm25Index:
    """BM25 weights, one row per term, rows ordered from the rarest term to the commonest."""

    vocab: pd.Index
    rank_of_term: np.ndarray
    weights: sparse.csr_matrix
    doc_freq: np.ndarray
    n_docs: int


def build_bm25(real: TokenStream, k1: float = 1.2, b: float = 0.75) -> Bm25Index:
    """Index the real documents: one weight per (term, document)."""
    vocab, terms = unique_columns(real.hashes)
    shape = (real.n_docs, len(vocab))
    rows = np.repeat(np.arange(real.n_docs, dtype=np.int32), real.lengths)
    counts = sparse.csr_matrix((np.ones(len(terms), dtype=np.float32), (rows, terms)), shape=shape)
    del rows, terms
    counts.sum_duplicates()
    doc_freq = np.bincount(counts.indices, minlength=len(vocab))
    lengths = real.lengths.astype(np.float32)
    average = float(lengths.mean()) if real.n_docs and lengths.mean() > 0 else 1.0
    rows = np.repeat(np.arange(real.n_docs), np.diff(counts.indptr))
    idf = np.log1p((real.n_docs - doc_freq + 0.5) / (doc_freq + 0.5)).astype(np.float32)
    tf = counts.data
    norm = k1 * (1 - b + b * lengths[rows] / average)
    data = idf[counts.indices] * tf / (tf + norm)
    weights = sparse.csr_matrix((data.astype(np.float32), counts.indices, counts.indptr), shape)
    by_rarity = np.argsort(doc_freq, kind="stable")
    rank_of_term = np.empty(len(vocab), dtype=np.int64)
    rank_of_term[by_rarity] = np.arange(len(vocab))
    return Bm25Index(
        pd.Index(vocab),
        rank_of_term,
        weights.T.tocsr()[by_rarity],
        doc_freq[by_rarity],
        real.n_docs,
    )


def query_matrix(
    index: Bm25Index,
    stream: TokenStream,
    begin: int,
    end: int,
    max_df: float = 1.0,
    query_terms: int | None = None,
) -> sparse.csr_matrix:
    """Term counts of documents ``begin:end``, columns in the index's rarity order.

    Terms in more than ``max_df`` of the real documents are cut, and with ``query_terms`` only
    that many of each document's rarest terms are kept: rare terms decide the ranking, and
    the cost of a query is then bounded by their (small) document frequencies, not by the
    size of the real corpus. Columns are rarity ranks, so the rarest terms of a row are
    simply its first entries.
    """
    lo, hi = stream.doc_offsets[begin], stream.doc_offsets[end]
    cols = index.vocab.get_indexer(stream.hashes[lo:hi])
    rows = stream.doc_of_token[lo:hi] - begin
    known = cols >= 0
    ranks = index.rank_of_term[cols[known]]
    cutoff = np.searchsorted(index.doc_freq, max_df * index.n_docs, side="right")
    keep = ranks < cutoff
    shape = (end - begin, len(index.vocab))
    ones = np.ones(int(keep.sum()), dtype=np.float32)
    query = sparse.csr_matrix((ones, (rows[known][keep], ranks[keep])), shape=shape)
    query.sum_duplicates()
    if query_terms is None:
        return query
    owner = np.repeat(np.arange(shape[0]), np.diff(query.indptr))
    chosen = np.arange(len(owner)) - query.indptr[owner] < query_terms
    return sparse.csr_matrix(
        (query.data[chosen], (owner[chosen], query.indices[chosen])), shape=shape
    )


def bm25_scores(index: Bm25Index, stream: TokenStream, max_df: float = 1.0) -> np.ndarray:
    """Dense scores (synthetic x real), every query term kept; for tests and small corpora."""
    query = query_matrix(index, stream, 0, stream.n_docs, max_df)
    return np.asarray((query @ index.weights).toarray())


def top_k_per_row(scores: sparse.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest positive entries of each row of a sparse score matrix (ties: lowest
    column first) as (columns, values); -1 / 0 where a row has fewer. O(nnz) per rank, so the
    dense synthetic x real score matrix is never built."""
    n, width = scores.shape
    ids = np.full((n, k), -1, dtype=np.int32)
    values = np.zeros((n, k), dtype=np.float32)
    data = scores.data.astype(np.float64)
    rows = np.repeat(np.arange(n), np.diff(scores.indptr))
    nonempty = np.diff(scores.indptr) > 0
    starts = scores.indptr[:-1][nonempty]
    for rank in range(k):
        best = np.full(n, -np.inf)
        if data.size:
            best[nonempty] = np.maximum.reduceat(data, starts)
        hits = np.flatnonzero((data == best[rows]) & (best[rows] > 0))
        if not hits.size:
            break
        key = rows[hits].astype(np.int64) * width + scores.indices[hits]
        first = np.flatnonzero(np.diff(rows[hits], prepend=-1))
        chosen = hits[np.argsort(key)][first] if len(first) < len(hits) else hits
        ids[rows[chosen], rank] = scores.indices[chosen]
        values[rows[chosen], rank] = data[chosen]
        data[chosen] = -np.inf
    return ids, values


def nearest_real(
    index: Bm25Index,
    stream: TokenStream,
    k: int,
    max_df: float = 1.0,
    batch: int = 2048,
    query_terms: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` real documents per synthetic one: (ids, scores); id -1 where score is 0."""
    k = min(k, index.n_docs)
    ids = np.full((stream.n_docs, k), -1, dtype=np.int32)
    scores = np.zeros((stream.n_docs, k), dtype=np.float32)
    for begin in range(0, stream.n_docs, batch):
        end = min(begin + batch, stream.n_docs)
        query = query_matrix(index, stream, begin, end, max_df, query_terms)
        ids[begin:end], scores[begin:end] = top_k_per_row(query @ index.weights, k)
    return ids, scores
