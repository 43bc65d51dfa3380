"""Drop synthetic notes that repeat one another or the seed notes (seed 002).

Exact duplicates are found by a hash of the normalised text (case-folded, whitespace
collapsed); near duplicates by MinHash LSH over word 3-gram shingles (datasketch) with the
Jaccard threshold of ``[generation] near_duplicate_jaccard``. Run on filled notes, so that
templates which differ only in their placeholders are caught too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol import Document

SHINGLE_WORDS = 3
NUM_PERM = 64


def normalised(text: str) -> str:
    return " ".join(text.casefold().split())


def text_hash(text: str) -> str:
    return hashlib.sha256(normalised(text).encode()).hexdigest()


def _shingles(text: str) -> set[bytes]:
    words = normalised(text).split()
    if len(words) < SHINGLE_WORDS:
        return {" ".join(words).encode()}
    return {
        " ".join(words[i : i + SHINGLE_WORDS]).encode()
        for i in range(len(words) - SHINGLE_WORDS + 1)
    }


WIDE_BANDS = (NUM_PERM // 4, 4)
"""Bands x rows for thresholds so high that datasketch's own choice has under two bands
(about 0.97 and up at 64 permutations): candidates from about Jaccard 0.5, every one then
checked with the exact Jaccard, so a wider net costs time, never a wrong drop."""


def _index(threshold: float) -> Any:
    from datasketch import MinHashLSH

    try:
        return MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
    except ValueError:  # "The number of bands are too small (b < 2)"
        return MinHashLSH(num_perm=NUM_PERM, params=WIDE_BANDS)


@dataclass(frozen=True)
class Deduplicated:
    """The notes kept, and how many were dropped for each reason."""

    kept: list[Document]
    exact: int
    near: int


def deduplicate(
    notes: Sequence[Document], seed_texts: Sequence[str], threshold: float
) -> Deduplicated:
    """Keep each note unless its text equals, or nearly equals, a seed note or an earlier kept
    note."""
    from datasketch import MinHash

    shingles: dict[str, set[bytes]] = {}

    def signature(key: str, text: str) -> MinHash:
        shingles[key] = _shingles(text)
        sig = MinHash(num_perm=NUM_PERM, seed=1)
        sig.update_batch(list(shingles[key]))
        return sig

    def near_any(key: str, candidates: list[str]) -> bool:
        """LSH proposes, the exact Jaccard of the shingle sets decides."""
        mine = shingles[key]
        return any(
            len(mine & shingles[c]) / len(mine | shingles[c]) >= threshold for c in candidates
        )

    lsh = _index(threshold)
    seen = {text_hash(t) for t in seed_texts}
    for index, text in enumerate(seed_texts):
        lsh.insert(f"seed-{index}", signature(f"seed-{index}", text))
    kept: list[Document] = []
    exact = near = 0
    for doc in notes:
        digest = text_hash(doc.text)
        if digest in seen:
            exact += 1
            continue
        key = f"syn-{doc.id}"
        sig = signature(key, doc.text)
        if near_any(key, lsh.query(sig)):
            near += 1
            continue
        seen.add(digest)
        lsh.insert(key, sig)
        kept.append(doc)
    return Deduplicated(kept=kept, exact=exact, near=near)
