"""Exact and near duplicates, within the synthetic corpus and against the real documents.

Exact: two documents are duplicates when their normalised word sequences are equal (case,
punctuation and spacing ignored), compared by a 64-bit hash. Near: Jaccard similarity of the
sets of word shingles >= the policy threshold (default 0.90), found with MinHash/LSH and
verified exactly. Within the synthetic corpus the earliest retained document of a group stays.

The synthetic corpus is read a chunk at a time: per note only its hash and its LSH band keys
are kept; the notes of candidate pairs are read again to verify them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from site_agent.audit.context import AuditContext, SyntheticChunk
from site_agent.audit.ngrams_found import NgramsFound
from site_agent.audit.registry import Reread, register_measure
from site_agent.privacy.grams import ngrams_of
from site_agent.privacy.minhash import band_keys, candidate_pairs, lsh_params, signatures
from site_agent.privacy.tokens import U64, TokenStream, mix64

_POSITION_SALT = U64(0x632BE59BD9B4E019)
_DOC_CHUNK = 4096


def document_hashes(stream: TokenStream) -> np.ndarray:
    """A 64-bit hash of each document's word sequence (order-sensitive)."""
    out = np.zeros(stream.n_docs, dtype=U64)
    for begin in range(0, stream.n_docs, _DOC_CHUNK):
        end = min(begin + _DOC_CHUNK, stream.n_docs)
        lo, hi = stream.doc_offsets[begin], stream.doc_offsets[end]
        position = np.arange(lo, hi) - np.repeat(
            stream.doc_offsets[begin:end], stream.lengths[begin:end]
        )
        values = mix64(stream.hashes[lo:hi] + position.astype(U64) * _POSITION_SALT)
        prefix = np.concatenate([np.zeros(1, dtype=U64), np.cumsum(values, dtype=U64)])
        local = stream.doc_offsets[begin : end + 1] - lo
        sums = prefix[local[1:]] - prefix[local[:-1]]
        out[begin:end] = mix64(sums + stream.lengths[begin:end].astype(U64))
    return out


class _Shingles:
    """Exact shingle sets of single documents, computed when a candidate pair needs them."""

    def __init__(self, stream: TokenStream, n: int) -> None:
        self.stream, self.n = stream, n

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - one instance per audit run
    def get(self, doc: int) -> np.ndarray:
        return np.unique(ngrams_of(self.stream.doc_tokens(doc), self.n))


def exact_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    union = len(np.union1d(a, b))
    return len(np.intersect1d(a, b, assume_unique=True)) / union if union else 0.0


@dataclass(frozen=True)
class DuplicateResult:
    group: np.ndarray
    exact_real: np.ndarray
    near_real: np.ndarray
    neighbours: dict[int, set[int]] = field(default_factory=dict)

    def synthetic_duplicates(self, alive: np.ndarray, near: bool) -> np.ndarray:
        """Alive documents that duplicate an earlier alive, retained document."""
        dropped = np.zeros(len(self.group), dtype=bool)
        present: set[int] = set()
        for doc in np.flatnonzero(alive).tolist():
            group = int(self.group[doc])
            linked = near and not present.isdisjoint(self.neighbours.get(group, ()))
            if group in present or linked:
                dropped[doc] = True
            else:
                present.add(group)
        return dropped

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        groups = self.group[kept]
        present = set(groups.tolist())
        near_pairs = sum(
            1
            for g, others in self.neighbours.items()
            for h in others
            if g < h and g in present and h in present
        )
        return {
            "exact_real_documents": int((self.exact_real & kept).sum()),
            "near_real_documents": int((self.near_real & kept).sum()),
            "exact_synthetic_duplicates": int(len(groups) - len(np.unique(groups))),
            "near_synthetic_groups_linked": near_pairs,
        }


def _shingle_sets(stream: TokenStream, n: int, docs: np.ndarray) -> list[np.ndarray]:
    return [np.unique(ngrams_of(stream.doc_tokens(d), n)) for d in docs.tolist()]


class _Duplicates:
    """Per chunk: each note's exact hash, whether it copies a real note, and its LSH band keys
    (a few hundred bytes a note). At the end: the exact groups, the candidate pairs over all
    band keys, and their exact Jaccard similarity, with the candidate notes read again."""

    def __init__(self, context: AuditContext) -> None:
        settings = context.policy.duplicates
        self.context, self.settings = context, settings
        real = context.stream("words")
        self.real_hash = document_hashes(real)
        sigs, self.real_ok = signatures(real, settings.shingle, settings.num_perm, settings.seed)
        self.bands, self.rows = lsh_params(settings.threshold, settings.num_perm)
        self.real_keys = band_keys(sigs, self.bands, self.rows)
        self.hashes: list[np.ndarray] = []
        self.exact_real: list[np.ndarray] = []
        self.keys: list[np.ndarray] = []
        self.ok: list[np.ndarray] = []

    def add(self, chunk: SyntheticChunk) -> None:
        settings, stream = self.settings, chunk.stream("words")
        hashes = document_hashes(stream)
        sigs, ok = signatures(stream, settings.shingle, settings.num_perm, settings.seed)
        self.hashes.append(hashes)
        self.exact_real.append(np.isin(hashes, self.real_hash))
        self.keys.append(band_keys(sigs, self.bands, self.rows))
        self.ok.append(ok)

    def finish(self, reread: Reread) -> DuplicateResult:
        synth_hash = _joined(self.hashes, np.uint64)
        _, first, inverse = np.unique(synth_hash, return_index=True, return_inverse=True)
        group = first[inverse].astype(np.int64)
        near_real_groups, neighbours = self._near_pairs(np.sort(first), reread)
        near_real = np.isin(
            group, np.fromiter(near_real_groups, dtype=np.int64, count=len(near_real_groups))
        )
        return DuplicateResult(
            group=group,
            exact_real=_joined(self.exact_real, bool),
            near_real=near_real,
            neighbours=neighbours,
        )

    def _near_pairs(
        self, representatives: np.ndarray, reread: Reread
    ) -> tuple[set[int], dict[int, set[int]]]:
        """Synthetic representatives near a real document, and near links between them."""
        settings = self.settings
        real = self.context.stream("words")
        synth_ok = _joined(self.ok, bool)
        synth_keys = _joined(self.keys, np.uint64).reshape(-1, self.bands)
        self.keys = []
        keys = np.concatenate([self.real_keys, synth_keys])
        offset = real.n_docs
        members = np.concatenate(
            [np.flatnonzero(self.real_ok), offset + representatives[synth_ok[representatives]]]
        )
        pairs = sorted(candidate_pairs(keys, members))
        del keys, synth_keys
        needed = np.unique([k - offset for pair in pairs for k in pair if k >= offset])
        synth_shingles: dict[int, np.ndarray] = {}
        for chunk in reread(needed.astype(np.int64)):
            sets = _shingle_sets(chunk.stream("words"), settings.shingle, np.arange(chunk.n_docs))
            synth_shingles.update(zip(chunk.positions.tolist(), sets, strict=True))
        real_shingles = _Shingles(real, settings.shingle)
        near_real: set[int] = set()
        neighbours: dict[int, set[int]] = {}
        for i, j in pairs:
            if j < offset:
                continue
            s = j - offset
            if i < offset:
                if (
                    s not in near_real
                    and exact_jaccard(real_shingles.get(i), synth_shingles[s]) >= settings.threshold
                ):
                    near_real.add(s)
            elif exact_jaccard(synth_shingles[i - offset], synth_shingles[s]) >= settings.threshold:
                neighbours.setdefault(i - offset, set()).add(s)
                neighbours.setdefault(s, set()).add(i - offset)
        return near_real, neighbours


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


DUPLICATE_FIGURES = (
    "exact_real_documents",
    "near_real_documents",
    "exact_synthetic_duplicates",
    "near_synthetic_groups_linked",
)


@register_measure("duplicates", DUPLICATE_FIGURES)
def measure_duplicates(context: AuditContext, found: NgramsFound) -> _Duplicates:
    return _Duplicates(context)
