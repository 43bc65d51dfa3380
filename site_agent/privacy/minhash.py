"""MinHash signatures and LSH banding over word shingles, vectorised over whole corpora.

Signatures use one-permutation hashing with rotation densification: a shingle's 64-bit hash
picks one of ``num_perm`` bins and competes for that bin's minimum, so a corpus costs one
pass over its shingles rather than ``num_perm`` passes. Banding is datasketch's MinHashLSH
scheme (b bands of r rows; documents whose band values are equal in some band become
candidates), done with sorting instead of dict inserts; the tests check the candidate sets
against ``datasketch.MinHashLSH``. Candidates are then verified with the exact Jaccard
similarity of their shingle sets, so LSH only decides what is compared.
"""

from __future__ import annotations

import itertools

import numpy as np

from site_agent.privacy.grams import iter_ngrams
from site_agent.privacy.tokens import U64, TokenStream, mix64

EMPTY = np.iinfo(np.uint64).max
_ROTATION = U64(0x2545F4914F6CDD1D)
_BAND_BASE = U64(0xC2B2AE3D27D4EB4F)


def lsh_params(threshold: float, num_perm: int, min_recall: float = 0.999) -> tuple[int, int]:
    """(bands, rows): the most rows per band that still make a pair at ``threshold`` a
    candidate with probability >= ``min_recall`` (fewer false candidates, few misses)."""
    best = (num_perm, 1)
    for rows in range(1, num_perm + 1):
        bands = num_perm // rows
        if 1 - (1 - threshold**rows) ** bands >= min_recall:
            best = (bands, rows)
    return best


def signatures(
    stream: TokenStream, shingle: int, num_perm: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(signatures ``n_docs x num_perm``, whether the document has any shingle)."""
    flat = np.full(stream.n_docs * num_perm, EMPTY, dtype=U64)
    salt = mix64(np.array([seed], dtype=U64))[0]
    perm = U64(num_perm)
    for piece in iter_ngrams(stream, shingle):
        hashed = mix64(piece.hashes ^ salt)
        slots = piece.docs.astype(np.int64) * num_perm + (hashed % perm).astype(np.int64)
        np.minimum.at(flat, slots, hashed // perm)
    sigs = flat.reshape(stream.n_docs, num_perm)
    present = (sigs != EMPTY).any(axis=1)
    for begin in range(0, stream.n_docs, 8192):
        _densify(sigs[begin : begin + 8192])
    return sigs, present


def _densify(sigs: np.ndarray) -> None:
    """Fill each empty bin from the next non-empty bin to its right (circularly), salted by
    the distance, so two documents with the same non-empty bins get the same fill."""
    empty = sigs == EMPTY
    rows = empty.any(axis=1) & ~empty.all(axis=1)
    if not rows.any():
        return
    block, holes = sigs[rows], empty[rows]
    width = block.shape[1]
    position = np.arange(2 * width)
    source = np.where(np.tile(~holes, 2), position, 4 * width)
    following = np.minimum.accumulate(source[:, ::-1], axis=1)[:, ::-1][:, :width]
    distance = (following - position[:width]).astype(U64)
    borrowed = np.take_along_axis(block, following % width, axis=1)
    block[holes] = mix64(borrowed + distance * _ROTATION)[holes]
    sigs[rows] = block


def band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One 64-bit key per (document, band): equal keys mean equal band values."""
    keys = np.empty((sigs.shape[0], bands), dtype=U64)
    for band in range(bands):
        key = np.full(sigs.shape[0], U64(band + 1), dtype=U64)
        for column in range(band * rows, (band + 1) * rows):
            key = key * _BAND_BASE + sigs[:, column]
        keys[:, band] = mix64(key)
    return keys


def candidate_pairs(
    keys: np.ndarray, members: np.ndarray, max_bucket: int = 256, anchors: int = 32
) -> set[tuple[int, int]]:
    """Pairs (i, j), i < j, of ``members`` that share a key in some band.

    A bucket of more than ``max_bucket`` documents (a generator repeating itself) pairs each
    of them only with the bucket's ``anchors`` lowest indices - the real documents and the
    earliest synthetic ones, which are what duplicates are judged against - so the number of
    pairs stays linear.
    """
    pairs: set[tuple[int, int]] = set()
    for band in range(keys.shape[1]):
        column = keys[members, band]
        order = np.argsort(column, kind="stable")
        sorted_keys = column[order]
        boundaries = np.flatnonzero(np.diff(sorted_keys)) + 1
        starts = np.concatenate([[0], boundaries])
        ends = np.concatenate([boundaries, [len(sorted_keys)]])
        for start, end in zip(starts[ends - starts > 1], ends[ends - starts > 1], strict=True):
            group = sorted(members[order[start:end]].tolist())
            if len(group) <= max_bucket:
                pairs.update(itertools.combinations(group, 2))
            else:
                pairs.update((a, b) for a in group[:anchors] for b in group if a < b)
    return pairs
