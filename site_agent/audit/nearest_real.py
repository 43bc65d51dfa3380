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

from site_agent.audit.context import AuditContext, SyntheticChunk
from site_agent.audit.document_ids import DocumentIds
from site_agent.audit.ngrams_found import NgramsFound
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.registry import Reread, register_measure
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
    synth_ids: DocumentIds
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


def rouge_sizes(policy: AuditPolicy) -> set[int]:
    """The n of every ROUGE-N recall computed (reported sizes and the filter's)."""
    return {*policy.nearest_real.rouge_sizes, policy.filters.rouge_n}


class _NearestReal:
    """The real side (BM25 index, ROUGE tables and prefixes) built once; each chunk adds its
    candidate pairs and their exact ROUGE-N recall."""

    def __init__(self, context: AuditContext) -> None:
        settings, filters = context.policy.nearest_real, context.policy.filters
        self.context = context
        self.index = build_bm25(context.stream("words"), settings.k1, settings.b)
        self.sizes = sorted(rouge_sizes(context.policy))
        self.prefix = context.prefix(filters.rouge_n, filters.rouge_threshold)
        self.pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, np.ndarray]]] = []

    def _candidates(self, chunk: SyntheticChunk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(synthetic, real, BM25 score) of every pair to score, chunk-local, sorted."""
        settings, filters = self.context.policy.nearest_real, self.context.policy.filters
        ids, scores = nearest_real(
            self.index,
            chunk.stream("words"),
            settings.top_k,
            settings.max_df,
            settings.batch_size,
            settings.query_terms,
        )
        n_real = max(len(self.context.real.documents), 1)
        rows = np.repeat(np.arange(ids.shape[0]), ids.shape[1])
        valid = ids.ravel() >= 0
        bm25_keys = rows[valid].astype(np.int64) * n_real + ids.ravel()[valid]
        table = chunk.table("words", filters.rouge_n)
        cand_s, cand_r = rouge_candidates(table, filters.rouge_threshold, self.prefix)
        keys = np.union1d(bm25_keys, cand_s * n_real + cand_r)
        bm25 = np.full(len(keys), np.nan)
        bm25[np.searchsorted(keys, bm25_keys)] = scores.ravel()[valid]
        return keys // n_real, keys % n_real, bm25

    def add(self, chunk: SyntheticChunk) -> None:
        synth, real, bm25 = self._candidates(chunk)
        rouge = {n: rouge_recall(chunk.table("words", n), synth, real) for n in self.sizes}
        self.pairs.append((chunk.positions[synth], real, bm25, rouge))

    def finish(self, reread: Reread) -> NearestRealResult:
        filters = self.context.policy.filters
        parts = self.pairs or [(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), {})]
        return NearestRealResult(
            synth=np.concatenate([p[0] for p in parts]),
            real=np.concatenate([p[1] for p in parts]),
            bm25=np.concatenate([p[2] for p in parts]),
            rouge={
                n: np.concatenate([p[3].get(n, np.zeros(0)) for p in parts]) for n in self.sizes
            },
            synth_ids=self.context.synthetic_ids,
            real_ids=tuple(d.id for d in self.context.real.documents),
            filter_n=filters.rouge_n,
            threshold=filters.rouge_threshold,
            report_pairs=self.context.policy.nearest_real.report_pairs,
        )


NEAREST_REAL_FIGURES = (
    "pairs_examined",
    "rouge_*.max",
    "rouge_*.mean",
    "rouge_*.median",
    "rouge_*.documents_above_threshold",
    "threshold.n",
    "threshold.rouge_recall",
)


@register_measure("nearest_real", NEAREST_REAL_FIGURES)
def measure_nearest_real(context: AuditContext, found: NgramsFound) -> _NearestReal:
    return _NearestReal(context)
