"""Corpus n-gram recall |R ∩ S| / |R| and its PII-sensitive variant over R* ⊆ R.

R is the set of unique n-grams of the real training corpus, S that of the synthetic corpus,
and R* the n-grams of R that overlap a gold PII span in at least one occurrence. Computed for
every n of the policy and every unit (words; the generator's tokens when a tokenizer is given).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from site_agent.audit.context import AuditContext
from site_agent.audit.registry import register_measure
from site_agent.privacy.grams import GramTable


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def recall_figures(
    table: GramTable, kept: np.ndarray, identifying: np.ndarray | None = None
) -> dict[str, Any]:
    found = table.synth_hits(kept)
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


def docs_with_sensitive_ngrams(table: GramTable, columns: np.ndarray) -> np.ndarray:
    """Synthetic documents that contain at least one of the real n-grams ``columns`` marks
    (``table.sensitive``: R*; :func:`identifying_columns`: what the filter counts)."""
    flagged = np.zeros(table.n_synth, dtype=bool)
    flagged[table.synth_docs[columns[table.synth_cols]]] = True
    return flagged


@dataclass(frozen=True)
class NgramRecallResult:
    tables: dict[tuple[str, int], GramTable]
    identifying: dict[tuple[str, int], np.ndarray]

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for (unit, n), table in sorted(self.tables.items()):
            figures = recall_figures(table, kept, self.identifying[(unit, n)])
            out.setdefault(unit, {})[str(n)] = figures
        return out


@register_measure("ngram_recall")
def measure_ngram_recall(context: AuditContext) -> NgramRecallResult:
    """Recall over R (all), R* (any PII overlap, as in the paper) and the identifying n-grams
    of R* (at least the policy's share of one identifier), per unit and n."""
    keys = [(unit, n) for unit in context.units for n in context.policy.ngram_recall.sizes]
    return NgramRecallResult(
        {key: context.gram_table(*key) for key in keys},
        {key: context.identifying(*key) for key in keys},
    )
