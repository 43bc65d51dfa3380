"""Per synthetic document: its nearest real documents and how much of them it reproduces.

Candidates are the BM25 top-k real documents of each synthetic document, plus every pair that
prefix filtering cannot rule out above the ROUGE filter threshold; ROUGE-N recall (n = 3, 5 by
default) is exact for every candidate pair. So a document's max ROUGE-N recall is exact
whenever it exceeds the filter threshold, and a lower bound (over the candidates) otherwise.
The report lists the highest-risk pairs by document id and score, never by text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from site_agent.audit.context import AuditContext
from site_agent.audit.registry import register_measure
from site_agent.privacy.bm25 import build_bm25, nearest_real
from site_agent.privacy.rouge import rouge_candidates, rouge_recall


def _per_doc_max(docs: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Largest value per document and the pair index where it was reached (-1 if none)."""
    best = np.zeros(size)
    where = np.full(size, -1, dtype=np.int64)
    if not len(docs):
        return best, where
    order = np.lexsort((-values, docs))
    first = np.ones(len(order), dtype=bool)
    first[1:] = docs[order][1:] != docs[order][:-1]
    chosen = order[first]
    best[docs[chosen]] = values[chosen]
    where[docs[chosen]] = chosen
    return best, where


@dataclass(frozen=True)
class NearestRealResult:
    synth: np.ndarray
    real: np.ndarray
    bm25: np.ndarray
    rouge: dict[int, np.ndarray]
    synth_ids: tuple[str, ...]
    real_ids: tuple[str, ...]
    filter_n: int
    threshold: float
    report_pairs: int

    def max_rouge(self, n: int) -> np.ndarray:
        return _per_doc_max(self.synth, self.rouge[n], len(self.synth_ids))[0]

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        out: dict[str, Any] = {"pairs_examined": int(kept[self.synth].sum())}
        for n in sorted(self.rouge):
            best = self.max_rouge(n)[kept]
            out[f"rouge_{n}"] = {
                "max": float(best.max()) if best.size else 0.0,
                "mean": float(best.mean()) if best.size else 0.0,
                "median": float(np.median(best)) if best.size else 0.0,
                "documents_above_threshold": int((best > self.threshold).sum())
                if n == self.filter_n
                else None,
            }
        out["threshold"] = {"n": self.filter_n, "rouge_recall": self.threshold}
        out["highest_risk_pairs"] = self._top_pairs(kept)
        return out

    def _top_pairs(self, kept: np.ndarray) -> list[dict[str, Any]]:
        score = self.rouge[self.filter_n]
        chosen = np.flatnonzero(kept[self.synth])
        chosen = chosen[np.lexsort((-self.bm25[chosen], -score[chosen]))][: self.report_pairs]
        return [
            {
                "synthetic_id": self.synth_ids[self.synth[i]],
                "real_id": self.real_ids[self.real[i]],
                "bm25": None if np.isnan(self.bm25[i]) else round(float(self.bm25[i]), 4),
                **{f"rouge_{n}": round(float(self.rouge[n][i]), 4) for n in sorted(self.rouge)},
            }
            for i in chosen
        ]


def _candidate_pairs(context: AuditContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    settings, filters = context.policy.nearest_real, context.policy.filters
    index = build_bm25(context.stream("real"), settings.k1, settings.b)
    ids, scores = nearest_real(
        index,
        context.stream("synthetic"),
        settings.top_k,
        settings.max_df,
        settings.batch_size,
        settings.query_terms,
    )
    n_real = max(len(context.real.documents), 1)
    rows = np.repeat(np.arange(ids.shape[0]), ids.shape[1])
    valid = ids.ravel() >= 0
    bm25_keys = rows[valid].astype(np.int64) * n_real + ids.ravel()[valid]
    table = context.gram_table("words", filters.rouge_n)
    cand_s, cand_r = rouge_candidates(table, filters.rouge_threshold)
    keys = np.union1d(bm25_keys, cand_s * n_real + cand_r)
    bm25 = np.full(len(keys), np.nan)
    bm25[np.searchsorted(keys, bm25_keys)] = scores.ravel()[valid]
    return keys // n_real, keys % n_real, bm25


@register_measure("nearest_real")
def measure_nearest_real(context: AuditContext) -> NearestRealResult:
    synth, real, bm25 = _candidate_pairs(context)
    filters = context.policy.filters
    sizes = sorted({*context.policy.nearest_real.rouge_sizes, filters.rouge_n})
    rouge = {n: rouge_recall(context.gram_table("words", n), synth, real) for n in sizes}
    return NearestRealResult(
        synth=synth,
        real=real,
        bm25=bm25,
        rouge=rouge,
        synth_ids=tuple(d.id for d in context.synthetic.documents),
        real_ids=tuple(d.id for d in context.real.documents),
        filter_n=filters.rouge_n,
        threshold=filters.rouge_threshold,
        report_pairs=context.policy.nearest_real.report_pairs,
    )
