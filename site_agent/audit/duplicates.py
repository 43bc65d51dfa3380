"""Exact and near duplicates, within the synthetic corpus and against the real documents.

Exact: two documents are duplicates when their normalised word sequences are equal (case,
punctuation and spacing ignored), compared by a 64-bit hash. Near: Jaccard similarity of the
sets of word shingles >= the policy threshold (default 0.90), found with MinHash/LSH and
verified exactly. Within the synthetic corpus the earliest retained document of a group stays.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from site_agent.audit.context import AuditContext
from site_agent.audit.registry import register_measure
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


def _near_pairs(
    context: AuditContext, representatives: np.ndarray
) -> tuple[set[int], dict[int, set[int]]]:
    """Synthetic representatives near a real document, and near links between representatives."""
    settings = context.policy.duplicates
    real, synth = context.stream("real"), context.stream("synthetic")
    real_sigs, real_ok = signatures(real, settings.shingle, settings.num_perm, settings.seed)
    synth_sigs, synth_ok = signatures(synth, settings.shingle, settings.num_perm, settings.seed)
    bands, rows = lsh_params(settings.threshold, settings.num_perm)
    keys = band_keys(np.concatenate([real_sigs, synth_sigs]), bands, rows)
    offset = real.n_docs
    members = np.concatenate(
        [np.flatnonzero(real_ok), offset + representatives[synth_ok[representatives]]]
    )
    shingles = {
        "real": _Shingles(real, settings.shingle),
        "synth": _Shingles(synth, settings.shingle),
    }
    near_real: set[int] = set()
    neighbours: dict[int, set[int]] = {}
    for i, j in sorted(candidate_pairs(keys, members)):
        if j < offset:
            continue
        s = j - offset
        if i < offset:
            if (
                s not in near_real
                and exact_jaccard(shingles["real"].get(i), shingles["synth"].get(s))
                >= settings.threshold
            ):
                near_real.add(s)
        elif (
            exact_jaccard(shingles["synth"].get(i - offset), shingles["synth"].get(s))
            >= settings.threshold
        ):
            neighbours.setdefault(i - offset, set()).add(s)
            neighbours.setdefault(s, set()).add(i - offset)
    return near_real, neighbours


@register_measure("duplicates")
def measure_duplicates(context: AuditContext) -> DuplicateResult:
    synth_hash = document_hashes(context.stream("synthetic"))
    real_hash = document_hashes(context.stream("real"))
    _, first, inverse = np.unique(synth_hash, return_index=True, return_inverse=True)
    group = first[inverse].astype(np.int64)
    representatives = np.sort(first)
    near_real_groups, neighbours = _near_pairs(context, representatives)
    near_real = np.isin(
        group, np.fromiter(near_real_groups, dtype=np.int64, count=len(near_real_groups))
    )
    return DuplicateResult(
        group=group,
        exact_real=np.isin(synth_hash, real_hash),
        near_real=near_real,
        neighbours=neighbours,
    )
