"""Finding known strings (gold PII surfaces, canaries) in a corpus as whole-word sequences.

A surface is its sequence of words (the audit's word unit: lower-cased letters, marks and
digits), identified by the hash of that sequence, the same hash as the n-gram of those words
in a document. Matching a corpus is then a lookup: keep the token positions whose word can
start a surface, and for each surface length k look the k-gram starting there up in a hash
table. Case, punctuation and spacing do not matter, a match always covers whole words, and
the cost is a few passes over the token array, whatever the number of surfaces. The tests
check the matches against a pyahocorasick automaton over the same word sequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from site_agent.audit.grams import ngrams_at
from site_agent.audit.tokens import TokenStream, text_stream


def surface_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(word-sequence hash, number of words, first word's hash) of every text; 0 where the
    text has no words."""
    stream = text_stream(texts)
    lengths = stream.lengths
    hashes = np.zeros(len(texts), dtype=np.uint64)
    first = np.zeros(len(texts), dtype=np.uint64)
    has_words = lengths > 0
    first[has_words] = stream.hashes[stream.doc_offsets[:-1][has_words]]
    for k in np.unique(lengths[has_words]).tolist():
        chosen = np.flatnonzero(lengths == k)
        hashes[chosen] = ngrams_at(stream.hashes, stream.doc_offsets[chosen], k)
    return hashes, lengths, first


@dataclass(frozen=True)
class SurfaceIndex:
    """Surfaces grouped by length in words, as hash tables from sequence hash to surface."""

    first_words: pd.Index
    by_length: dict[int, pd.Index]
    surface_of: dict[int, np.ndarray]

    @classmethod
    def build(cls, texts: Sequence[str]) -> SurfaceIndex:
        """Index ``texts``; a match reports the position of the text in ``texts``."""
        return cls.from_hashes(*surface_hashes(texts))

    @classmethod
    def from_hashes(
        cls, hashes: np.ndarray, lengths: np.ndarray, first_words: np.ndarray
    ) -> SurfaceIndex:
        """Index surfaces already hashed by :func:`surface_hashes`."""
        has_words = lengths > 0
        first = first_words[has_words]
        by_length, surface_of = {}, {}
        for k in np.unique(lengths[has_words]).tolist():
            chosen = np.flatnonzero(lengths == k)
            unique, where = np.unique(hashes[chosen], return_index=True)
            by_length[k], surface_of[k] = pd.Index(unique), chosen[where]
        return cls(pd.Index(np.unique(first)), by_length, surface_of)

    def match(self, stream: TokenStream) -> tuple[np.ndarray, np.ndarray]:
        """(document, surface) for every occurrence of every surface in ``stream``."""
        starts = np.flatnonzero(self.first_words.get_indexer(stream.hashes) >= 0)
        owner = stream.doc_of_token[starts]
        room = stream.doc_offsets[owner + 1] - starts
        docs: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        found: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        for k, table in self.by_length.items():
            fits = room >= k
            where = table.get_indexer(ngrams_at(stream.hashes, starts[fits], k))
            hit = where >= 0
            docs.append(owner[fits][hit].astype(np.int64))
            found.append(self.surface_of[k][where[hit]])
        return np.concatenate(docs), np.concatenate(found)
