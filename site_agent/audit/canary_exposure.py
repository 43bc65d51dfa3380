"""Canary exposure: how many of the planted identifier canaries (``site_agent.canaries``), and
of the 5-word contexts around them, the synthetic corpus reproduces.

Each canary value is searched as a whole-word sequence (the Aho-Corasick automaton of
``privacy.surfaces``); its contexts are the word 5-grams of the planted copy that overlap the
canary's span, looked up in the audit's real/synthetic n-gram table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocol import Document
from protocol.audit import Canary
from shared.errors import ConfigError
from site_agent.audit.context import AuditContext
from site_agent.audit.registry import register_measure
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
    context_found: Sequence[Callable[[np.ndarray], int]]
    context_totals: tuple[int, ...]
    n_docs: int

    def docs_with_canary(self) -> np.ndarray:
        flagged = np.zeros(self.n_docs, dtype=bool)
        flagged[self.match_docs] = True
        return flagged

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        keys = self.match_keys[kept[self.match_docs]]
        found = np.zeros(len(self.kinds), dtype=bool)
        found[keys] = True
        return {
            "planted": len(self.kinds),
            "found": int(found.sum()),
            "found_by_kind": {
                k: int(found[[x == k for x in self.kinds]].sum()) for k in sorted(set(self.kinds))
            },
            "documents_with_canary": int((self.docs_with_canary() & kept).sum()),
            "context_5grams": int(sum(self.context_totals)),
            "context_5grams_found": int(sum(f(kept) for f in self.context_found)),
        }


def _context_counter(table: Any, cols: np.ndarray) -> Callable[[np.ndarray], int]:
    return lambda kept: int(table.synth_hits(kept)[cols].sum())


@register_measure("canaries")
def measure_canaries(context: AuditContext) -> CanaryResult | None:
    if context.canaries is None:
        return None
    by_id = context.real.by_id()
    table = context.gram_table("words", CONTEXT_N)
    counters, totals = [], []
    for canary in context.canaries.canaries:
        if canary.document_id not in by_id:
            raise ConfigError(
                f"canary document {canary.document_id!r} is not in the real corpus; fix: audit "
                "against the planted copy the canaries were recorded for"
            )
        grams = context_hashes(by_id[canary.document_id], canary)
        cols = np.searchsorted(table.vocab, grams)
        cols = (
            cols[
                (cols < len(table.vocab))
                & (table.vocab[np.minimum(cols, len(table.vocab) - 1)] == grams)
            ]
            if len(table.vocab)
            else cols[:0]
        )
        counters.append(_context_counter(table, cols))
        totals.append(len(grams))
    matcher = SurfaceMatcher.build([c.value for c in context.canaries.canaries])
    docs, keys = matcher.match(context.synthetic.documents)
    return CanaryResult(
        kinds=tuple(c.kind for c in context.canaries.canaries),
        match_docs=docs,
        match_keys=keys,
        context_found=tuple(counters),
        context_totals=tuple(totals),
        n_docs=len(context.synthetic.documents),
    )
