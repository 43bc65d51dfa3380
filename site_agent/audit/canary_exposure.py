"""Canary exposure: how many of the planted identifier canaries (``site_agent.canaries``), and
of the 5-word contexts around them, the synthetic corpus reproduces.

Each canary value is searched as a whole-word sequence (the Aho-Corasick automaton of
``privacy.surfaces``); its contexts are the word 5-grams of the planted copy that overlap the
canary's span, looked up in the audit's real/synthetic n-gram table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from protocol import Document
from protocol.audit import Canary, CanarySet
from shared.errors import ConfigError
from site_agent.audit.context import AuditContext, SyntheticChunk
from site_agent.audit.ngrams_found import NgramsFound
from site_agent.audit.registry import Reread, register_measure
from site_agent.audit.surface_hits import SurfaceHits
from site_agent.privacy.grams import ngrams_of
from site_agent.privacy.surfaces import SurfaceMatcher
from site_agent.privacy.tokens import word_hash

CONTEXT_N = 5


def context_hashes(doc: Document, canary: Canary) -> np.ndarray:
    """Hashes of the word 5-grams of ``doc`` that overlap the canary's span."""
    from site_agent.privacy.reference import word_spans

    spans = word_spans(doc.text)
    hashes = np.array([word_hash(w) for w, _, _ in spans], dtype=np.uint64)
    grams = ngrams_of(hashes, CONTEXT_N)
    overlap = [
        i
        for i in range(len(grams))
        if any(ws < canary.end and canary.start < we for _, ws, we in spans[i : i + CONTEXT_N])
    ]
    return grams[overlap]


@dataclass(frozen=True)
class CanaryResult:
    kinds: tuple[str, ...]
    match_docs: np.ndarray
    match_keys: np.ndarray
    context_columns: tuple[np.ndarray, ...]
    context_totals: tuple[int, ...]
    found: NgramsFound
    n_docs: int

    def docs_with_canary(self) -> np.ndarray:
        flagged = np.zeros(self.n_docs, dtype=bool)
        flagged[self.match_docs] = True
        return flagged

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        keys = self.match_keys[kept[self.match_docs]]
        found = np.zeros(len(self.kinds), dtype=bool)
        found[keys] = True
        contexts = self.found.found(("words", CONTEXT_N), kept)
        return {
            "planted": len(self.kinds),
            "found": int(found.sum()),
            "found_by_kind": {
                k: int(found[[x == k for x in self.kinds]].sum()) for k in sorted(set(self.kinds))
            },
            "documents_with_canary": int((self.docs_with_canary() & kept).sum()),
            "context_5grams": int(sum(self.context_totals)),
            "context_5grams_found": int(sum(contexts[c].sum() for c in self.context_columns)),
        }


def _context_columns(context: AuditContext, canary: Canary, doc: Document) -> np.ndarray:
    """The columns (real word 5-grams) of the canary's contexts; every context 5-gram is one,
    as it comes from the planted copy of the real corpus."""
    vocab = context.real_grams("words", CONTEXT_N).vocab
    grams = context_hashes(doc, canary)
    cols = np.searchsorted(vocab, grams)
    if not len(vocab):
        return cols[:0]
    return cols[(cols < len(vocab)) & (vocab[np.minimum(cols, len(vocab) - 1)] == grams)]


class _Canaries:
    """The canaries' automaton and context columns built once; each chunk adds its matches
    (the contexts are counted by the shared :class:`NgramsFound`)."""

    def __init__(self, context: AuditContext, canaries: CanarySet, found: NgramsFound) -> None:
        by_id = context.real.by_id()
        self.columns: list[np.ndarray] = []
        self.totals: list[int] = []
        for canary in canaries.canaries:
            if canary.document_id not in by_id:
                raise ConfigError(
                    f"canary document {canary.document_id!r} is not in the real corpus; fix: "
                    "audit against the planted copy the canaries were recorded for"
                )
            doc = by_id[canary.document_id]
            self.columns.append(_context_columns(context, canary, doc))
            self.totals.append(len(context_hashes(doc, canary)))
        self.kinds = tuple(c.kind for c in canaries.canaries)
        self.hits = SurfaceHits(SurfaceMatcher.build([c.value for c in canaries.canaries]))
        self.found = found

    def add(self, chunk: SyntheticChunk) -> None:
        self.hits.add(chunk)

    def finish(self, reread: Reread) -> CanaryResult:
        docs, keys = self.hits.arrays()
        return CanaryResult(
            kinds=self.kinds,
            match_docs=docs,
            match_keys=keys,
            context_columns=tuple(self.columns),
            context_totals=tuple(self.totals),
            found=self.found,
            n_docs=self.hits.n_docs,
        )


CANARY_FIGURES = (
    "planted",
    "found",
    "found_by_kind.*",
    "documents_with_canary",
    "context_5grams",
    "context_5grams_found",
)


@register_measure("canaries", CANARY_FIGURES)
def measure_canaries(context: AuditContext, found: NgramsFound) -> _Canaries | None:
    if context.canaries is None:
        return None
    return _Canaries(context, context.canaries, found)
