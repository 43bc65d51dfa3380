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

from site_agent.audit.tokens import TokenStream


@dataclass(frozen=True)
class Bm25Index:
    vocab: pd.Index
    weights: sparse.csr_matrix
    doc_freq: np.ndarray
    n_docs: int


def build_bm25(real: TokenStream, k1: float = 1.2, b: float = 0.75) -> Bm25Index:
    """Index the real documents: one weight per (term, document)."""
    vocab, terms = np.unique(real.hashes, return_inverse=True)
    shape = (real.n_docs, len(vocab))
    counts = sparse.csr_matrix(
        (np.ones(len(terms), dtype=np.float32), (real.doc_of_token, terms)), shape=shape
    )
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
    return Bm25Index(pd.Index(vocab), weights.T.tocsr(), doc_freq, real.n_docs)


def query_matrix(
    index: Bm25Index, stream: TokenStream, begin: int, end: int, max_df: float
) -> sparse.csr_matrix:
    """Term counts of documents ``begin:end`` over the index vocabulary (common terms cut)."""
    lo, hi = stream.doc_offsets[begin], stream.doc_offsets[end]
    cols = index.vocab.get_indexer(stream.hashes[lo:hi])
    rows = stream.doc_of_token[lo:hi] - begin
    keep = cols >= 0
    keep[keep] = index.doc_freq[cols[keep]] <= max_df * index.n_docs
    ones = np.ones(int(keep.sum()), dtype=np.float32)
    return sparse.csr_matrix(
        (ones, (rows[keep], cols[keep])), shape=(end - begin, len(index.vocab))
    )


def bm25_scores(index: Bm25Index, stream: TokenStream, max_df: float = 1.0) -> np.ndarray:
    """Dense scores (synthetic x real); for tests and small corpora."""
    query = query_matrix(index, stream, 0, stream.n_docs, max_df)
    return np.asarray((query @ index.weights).toarray())


def nearest_real(
    index: Bm25Index, stream: TokenStream, k: int, max_df: float = 1.0, batch: int = 2048
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` real documents per synthetic one: (ids, scores); id -1 where score is 0."""
    k = min(k, index.n_docs)
    ids = np.full((stream.n_docs, k), -1, dtype=np.int32)
    scores = np.zeros((stream.n_docs, k), dtype=np.float32)
    if k == 0:
        return ids, scores
    for begin in range(0, stream.n_docs, batch):
        end = min(begin + batch, stream.n_docs)
        dense = (query_matrix(index, stream, begin, end, max_df) @ index.weights).toarray()
        top = np.argpartition(-dense, k - 1, axis=1)[:, :k]
        top_scores = np.take_along_axis(dense, top, axis=1)
        order = np.lexsort((top, -top_scores), axis=1)
        top = np.take_along_axis(top, order, axis=1)
        top_scores = np.take_along_axis(top_scores, order, axis=1)
        ids[begin:end] = np.where(top_scores > 0, top, -1)
        scores[begin:end] = np.where(top_scores > 0, top_scores, 0)
    return ids, scores
