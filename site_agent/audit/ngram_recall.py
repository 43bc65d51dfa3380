"""Corpus n-gram recall |R ∩ S| / |R| and its PII-sensitive variant over R* ⊆ R.

R is the set of unique n-grams of the real training corpus, S that of the synthetic corpus,
and R* the n-grams of R that overlap a gold PII span in at least one occurrence. Computed for
every n of the policy and every unit (words; the generator's tokens when a tokenizer is given),
from the counts of :class:`~site_agent.audit.ngrams_found.NgramsFound`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from site_agent.audit.context import AuditContext, SyntheticChunk, Table
from site_agent.audit.ngrams_found import NgramsFound, docs_with_sensitive_ngrams
from site_agent.audit.registry import Reread, register_measure
from site_agent.privacy.grams import GramTable, RealGrams

__all__ = ["NgramRecallResult", "docs_with_sensitive_ngrams", "recall_figures"]


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def recall_figures(
    table: GramTable | RealGrams,
    found: np.ndarray,
    identifying: np.ndarray | None = None,
) -> dict[str, Any]:
    """The recall figures of one table, given which real n-grams (columns) were ``found``
    (``GramTable.synth_hits``: in a synthetic corpus; ``NgramsFound.found``: in its kept notes)."""
    shared, shared_sensitive = int(found.sum()), int(found[table.sensitive].sum())
    real, real_sensitive = len(table.vocab), int(table.sensitive.sum())
    figures: dict[str, Any] = {
        "real_ngrams": real,
        "shared_ngrams": shared,
        "recall": _ratio(shared, real),
        "real_sensitive_ngrams": real_sensitive,
        "shared_sensitive_ngrams": shared_sensitive,
        "sensitive_recall": _ratio(shared_sensitive, real_sensitive),
    }
    if identifying is not None:
        real_identifying, shared_identifying = int(identifying.sum()), int(found[identifying].sum())
        figures |= {
            "real_identifying_ngrams": real_identifying,
            "shared_identifying_ngrams": shared_identifying,
            "identifying_recall": _ratio(shared_identifying, real_identifying),
        }
    return figures


@dataclass(frozen=True)
class NgramRecallResult:
    context: AuditContext
    tables: tuple[Table, ...]
    found: NgramsFound

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for unit, n in self.tables:
            figures = recall_figures(
                self.context.real_grams(unit, n),
                self.found.found((unit, n), kept),
                self.context.identifying(unit, n),
            )
            out.setdefault(unit, {})[str(n)] = figures
        return out


def counted_tables(context: AuditContext) -> set[Table]:
    """The tables whose recall is reported."""
    return {(u, n) for u in context.units for n in context.policy.ngram_recall.sizes}


@dataclass(frozen=True)
class _NgramRecall:
    """Nothing per chunk: the shared :class:`NgramsFound` counts the tables."""

    result: NgramRecallResult

    def add(self, chunk: SyntheticChunk) -> None:
        pass

    def finish(self, reread: Reread) -> NgramRecallResult:
        return self.result


NGRAM_RECALL_FIGURES = tuple(
    f"*.*.{name}"  # unit (words, tokens) . n
    for name in (
        "real_ngrams", "shared_ngrams", "recall",
        "real_sensitive_ngrams", "shared_sensitive_ngrams", "sensitive_recall",
        "real_identifying_ngrams", "shared_identifying_ngrams", "identifying_recall",
    )
)  # fmt: skip


@register_measure("ngram_recall", NGRAM_RECALL_FIGURES)
def measure_ngram_recall(context: AuditContext, found: NgramsFound) -> _NgramRecall:
    """Recall over R (all), R* (any PII overlap, as in the paper) and the identifying n-grams
    of R* (at least the policy's share of one identifier), per unit and n."""
    return _NgramRecall(NgramRecallResult(context, tuple(sorted(counted_tables(context))), found))
