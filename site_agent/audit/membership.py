"""Membership inference from the synthetic corpus alone, on the site's membership canaries.

The adversary sees only the synthetic text. For each canary secret (planted or kept out) it
computes two scores, higher meaning "more likely planted":

- ``ngram_match``: the longest run of the secret's words that some synthetic document
  contains, as a share of the secret (1.0 = the secret was written verbatim);
- ``lm_ratio``: the log-likelihood of the secret under a smoothed word trigram model fit to
  the synthetic corpus, minus its log-likelihood under the unigram model alone, so that
  common words do not make a secret look familiar; only word *sequences* the generator
  learned raise it.

How well each score separates members from non-members gives ROC AUC and TPR at 1% and 0.1%
FPR with bootstrap intervals; exposure ranks each true secret among random candidate
secrets drawn the same way (Secret Sharer). All of it is computed from one index: every
occurrence, in the synthetic corpus, of a word n-gram of a secret, found with sorted-array
lookups over the audit's hashed word stream (no per-canary scan), so a subset of documents
(the export) only re-counts occurrences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from protocol.audit import MembershipCanarySet
from site_agent.audit.context import AuditContext, SyntheticChunk
from site_agent.audit.kept_counts import KeptCounts
from site_agent.audit.membership_metrics import exposure, separation
from site_agent.audit.ngrams_found import NgramsFound
from site_agent.audit.policy import MembershipSettings
from site_agent.audit.registry import Reread, register_measure
from site_agent.canaries.membership import draw_secret
from site_agent.privacy.grams import ngrams_at, ngrams_of
from site_agent.privacy.tokens import TokenStream, reference_words, word_hash

ATTACKS = ("ngram_match", "lm_ratio")
_SLICE = 1 << 22


def secret_matrix(secrets: list[str]) -> np.ndarray:
    """Word hashes of the secrets, one row each (all secrets have the same number of words)."""
    rows = [[word_hash(w) for w in reference_words(s)] for s in secrets]
    if len({len(r) for r in rows}) > 1:
        raise ValueError("membership secrets must all have the same number of words")
    return np.array(rows, dtype=np.uint64)


def _lookup(queries: np.ndarray, grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which grams are queries, their query index) for sorted unique ``queries``."""
    index = np.minimum(np.searchsorted(queries, grams), len(queries) - 1)
    return queries[index] == grams, index


@dataclass(frozen=True)
class SecretIndex:
    """Every occurrence of a secret's word n-gram (n = 1 .. secret length) in the corpus.

    Per order n (list index n - 1): ``grams`` maps each secret's n-grams to query columns,
    ``hits`` gives the query column and document of every occurrence.
    """

    grams: list[np.ndarray]
    n_queries: list[int]
    hit_query: list[np.ndarray]
    hit_doc: list[np.ndarray]
    doc_lengths: np.ndarray
    vocabulary_size: int

    @property
    def secret_words(self) -> int:
        return len(self.grams)

    def counts(self, order: int, kept: np.ndarray) -> np.ndarray:
        """Occurrences of each order-``order`` query in the documents where ``kept``."""
        hits = kept[self.hit_doc[order - 1]]
        return np.bincount(self.hit_query[order - 1][hits], minlength=self.n_queries[order - 1])


def secret_queries(secrets: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per order n: each secret's n-grams as query columns, and the sorted unique queries."""
    grams, queries = [], []
    for n in range(1, secrets.shape[1] + 1):
        per_row = np.stack([ngrams_of(row, n) for row in secrets])
        unique = np.unique(per_row)
        grams.append(np.searchsorted(unique, per_row))
        queries.append(unique)
    return grams, queries


def find_hits(
    stream: TokenStream, queries: list[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per order: the query column and the document of every occurrence in ``stream``."""
    offsets = stream.doc_offsets
    hit_query, hit_doc = [], []
    found: list[np.ndarray] = []
    for begin in range(0, stream.n_tokens, _SLICE):  # slices bound the memory used
        positions = np.arange(begin, min(begin + _SLICE, stream.n_tokens), dtype=np.int64)
        match, _ = _lookup(queries[0], ngrams_at(stream.hashes, positions, 1))
        found.append(positions[match])
    positions = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    docs = np.searchsorted(offsets, positions, side="right") - 1
    ends = offsets[docs + 1]
    for n in range(1, len(queries) + 1):
        inside = positions + n <= ends
        positions, docs, ends = positions[inside], docs[inside], ends[inside]
        match, index = _lookup(queries[n - 1], ngrams_at(stream.hashes, positions, n))
        positions, docs, ends = positions[match], docs[match], ends[match]
        hit_query.append(index[match])
        hit_doc.append(docs.astype(np.int64))
    return hit_query, hit_doc


def build_index(stream: TokenStream, secrets: np.ndarray) -> SecretIndex:
    """Index the word stream of a corpus for the secrets (rows of word hashes)."""
    grams, queries = secret_queries(secrets)
    hit_query, hit_doc = find_hits(stream, queries)
    return SecretIndex(
        grams=grams,
        n_queries=[len(q) for q in queries],
        hit_query=hit_query,
        hit_doc=hit_doc,
        doc_lengths=stream.lengths,
        vocabulary_size=int(pd.unique(stream.hashes).size) if stream.n_tokens else 0,
    )


class SecretCounts:
    """The counts of a :class:`SecretIndex`, summed over the chunks of a corpus read a chunk
    at a time: per order, the occurrences of each query over all notes, then over the kept
    notes once the dropped ones are subtracted (:class:`KeptCounts`)."""

    def __init__(self, secrets: np.ndarray) -> None:
        self.grams, self.queries = secret_queries(secrets)
        self.per_order = [KeptCounts(len(q)) for q in self.queries]
        self._lengths: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        self._vocabulary = np.zeros(0, dtype=np.uint64)

    @property
    def secret_words(self) -> int:
        return len(self.grams)

    @property
    def doc_lengths(self) -> np.ndarray:
        self._lengths = [np.concatenate(self._lengths)]
        return self._lengths[0]

    @property
    def vocabulary_size(self) -> int:
        return len(self._vocabulary)

    def _per_query(self, stream: TokenStream) -> list[np.ndarray]:
        hit_query, _ = find_hits(stream, self.queries)
        return [
            np.bincount(hits, minlength=len(q))
            for hits, q in zip(hit_query, self.queries, strict=True)
        ]

    def add(self, stream: TokenStream) -> None:
        for counts, found in zip(self.per_order, self._per_query(stream), strict=True):
            counts.add_counts(found)
        self._lengths.append(stream.lengths)
        self._vocabulary = np.union1d(self._vocabulary, stream.hashes)

    def subtract(self, stream: TokenStream, dropped: np.ndarray) -> None:
        for counts, found in zip(self.per_order, self._per_query(stream), strict=True):
            counts.subtract_counts(found, dropped)

    def counts(self, order: int, kept: np.ndarray) -> np.ndarray:
        """Occurrences of each order-``order`` query in the documents where ``kept``."""
        return self.per_order[order - 1].of(kept)


class SecretOccurrences(Protocol):
    """What the attacks read: a :class:`SecretIndex` or :class:`SecretCounts`."""

    @property
    def grams(self) -> list[np.ndarray]: ...

    @property
    def secret_words(self) -> int: ...

    @property
    def doc_lengths(self) -> np.ndarray: ...

    @property
    def vocabulary_size(self) -> int: ...

    def counts(self, order: int, kept: np.ndarray) -> np.ndarray: ...


def ngram_match_scores(index: SecretOccurrences, kept: np.ndarray) -> np.ndarray:
    """Longest run of each secret's words found in a kept document, over the secret length."""
    longest = np.zeros(index.grams[0].shape[0])
    for n in range(1, index.secret_words + 1):
        present = (index.counts(n, kept)[index.grams[n - 1]] > 0).any(axis=1)
        longest[present] = n
    return longest / index.secret_words


def lm_ratio_scores(
    index: SecretOccurrences, kept: np.ndarray, weights: tuple[float, float, float]
) -> np.ndarray:
    """log P(secret) under the interpolated word trigram model of the kept documents minus
    log P(secret) under its unigram model (add-one smoothed over the vocabulary of the whole
    synthetic corpus, so that both stages share it). The first word cancels out; a higher
    order whose context never occurs gives its weight to the others."""
    c1 = index.counts(1, kept)[index.grams[0]].astype(float)
    c2 = index.counts(2, kept)[index.grams[1]].astype(float)
    c3 = index.counts(3, kept)[index.grams[2]].astype(float) if index.secret_words > 2 else None
    total = float(index.doc_lengths[kept].sum()) + index.vocabulary_size + 1
    unigram = (c1 + 1) / total
    score = np.zeros(c1.shape[0])
    for i in range(1, index.secret_words):
        mass = weights[0] * unigram[:, i]
        weight = np.full(c1.shape[0], weights[0])
        seen = c1[:, i - 1] > 0
        mass[seen] += weights[1] * c2[seen, i - 1] / c1[seen, i - 1]
        weight[seen] += weights[1]
        if c3 is not None and i >= 2:
            seen = c2[:, i - 2] > 0
            mass[seen] += weights[2] * c3[seen, i - 2] / c2[seen, i - 2]
            weight[seen] += weights[2]
        score += np.log(mass / weight) - np.log(unigram[:, i])
    return score


def candidate_secrets(canaries: MembershipCanarySet, count: int, seed: int) -> list[str]:
    """``count`` random secrets drawn like the canaries' (none equal to a canary secret)."""
    rng = random.Random(seed)
    taken = {c.secret for c in canaries.canaries}
    drawn: list[str] = []
    while len(drawn) < count:
        secret = draw_secret(rng, canaries.vocabulary, canaries.secret_words)
        if secret not in taken:
            drawn.append(secret)
    return drawn


@dataclass(frozen=True)
class MembershipResult:
    """The index of every secret (canaries first, then candidates) and who is a member."""

    index: SecretOccurrences
    member: np.ndarray
    n_candidates: int
    settings: MembershipSettings

    def subtract(self, chunk: SyntheticChunk, dropped: np.ndarray) -> None:
        """Take back the dropped notes of ``chunk`` (the index counts over all notes)."""
        if not isinstance(self.index, SecretCounts):
            raise TypeError("a SecretIndex answers any subset of notes; nothing to subtract")
        self.index.subtract(chunk.stream("words"), dropped)

    def scores(self, kept: np.ndarray) -> dict[str, np.ndarray]:
        """Each attack's score of every canary and candidate, on the kept documents."""
        return {
            "ngram_match": ngram_match_scores(self.index, kept),
            "lm_ratio": lm_ratio_scores(self.index, kept, self.settings.lm_weights),
        }

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        scores = self.scores(kept)
        n = len(self.member)
        attacks = {
            name: separation(
                values[:n][self.member],
                values[:n][~self.member],
                samples=self.settings.bootstrap_samples,
                confidence=self.settings.confidence,
                seed=self.settings.seed,
            ).figures()
            for name, values in scores.items()
        }
        reproduced = scores["ngram_match"][:n] == 1.0
        lm = scores["lm_ratio"]
        exposures = exposure(lm[:n], lm[n:])
        strongest = max(ATTACKS, key=lambda a: attacks[a]["auc"])
        return {
            "members": int(self.member.sum()),
            "non_members": int((~self.member).sum()),
            "secrets_reproduced": int(reproduced.sum()),
            "members_reproduced": int(reproduced[self.member].sum()),
            "non_members_reproduced": int(reproduced[~self.member].sum()),
            "strongest_attack": strongest,
            "auc": attacks[strongest]["auc"],
            "auc_ci_low": attacks[strongest]["auc_ci_low"],
            "auc_ci_high": attacks[strongest]["auc_ci_high"],
            "tpr_at_1pct_fpr": max(a["tpr_at_1pct_fpr"] for a in attacks.values()),
            "tpr_at_0_1pct_fpr": max(a["tpr_at_0_1pct_fpr"] for a in attacks.values()),
            "attacks": attacks,
            "exposure": {
                "candidates": self.n_candidates,
                "max_possible": float(np.log2(self.n_candidates + 1)),
                "members_mean": float(exposures[self.member].mean()),
                "members_max": float(exposures[self.member].max()),
                "non_members_mean": float(exposures[~self.member].mean()),
            },
        }


def membership_result(
    stream: TokenStream, canaries: MembershipCanarySet, settings: MembershipSettings
) -> MembershipResult:
    """Index ``stream`` for the canaries' secrets and for random candidate secrets."""
    candidates = candidate_secrets(canaries, settings.exposure_candidates, settings.seed)
    secrets = [c.secret for c in canaries.canaries] + candidates
    return MembershipResult(
        index=build_index(stream, secret_matrix(secrets)),
        member=np.array([c.member for c in canaries.canaries], dtype=bool),
        n_candidates=len(candidates),
        settings=settings,
    )


class _Membership:
    """The secrets' queries built once; each chunk adds its occurrence counts."""

    def __init__(self, canaries: MembershipCanarySet, settings: MembershipSettings) -> None:
        candidates = candidate_secrets(canaries, settings.exposure_candidates, settings.seed)
        self.counts = SecretCounts(
            secret_matrix([c.secret for c in canaries.canaries] + candidates)
        )
        self.member = np.array([c.member for c in canaries.canaries], dtype=bool)
        self.n_candidates = len(candidates)
        self.settings = settings

    def add(self, chunk: SyntheticChunk) -> None:
        self.counts.add(chunk.stream("words"))

    def finish(self, reread: Reread) -> MembershipResult:
        return MembershipResult(self.counts, self.member, self.n_candidates, self.settings)


MEMBERSHIP_FIGURES = (
    "members",
    "non_members",
    "secrets_reproduced",
    "members_reproduced",
    "non_members_reproduced",
    "auc",
    "auc_ci_low",
    "auc_ci_high",
    "tpr_at_1pct_fpr",
    "tpr_at_0_1pct_fpr",
    "attacks.*.auc*",
    "attacks.*.tpr_at_*",
    "exposure.candidates",
    "exposure.max_possible",
    "exposure.members_mean",
    "exposure.members_max",
    "exposure.non_members_mean",
)


@register_measure("membership", MEMBERSHIP_FIGURES)
def measure_membership(context: AuditContext, found: NgramsFound) -> _Membership | None:
    canaries = context.membership_canaries
    if canaries is None or not canaries.members or not canaries.non_members:
        return None
    return _Membership(canaries, context.policy.membership)
