"""Foundation metrics with document-bootstrap CIs: token F1, span-overlap F1, leakage, recall.

Definitions (the metrics engineer's ``shared.metrics`` is the reference once merged):
- token F1: micro F1 over word tokens labelled by the span they fall in (label-aware);
- span overlap F1: a span matches when it overlaps a span of the same label on the other side;
- document leakage: share of documents where some gold PII character is left unmasked;
- label recall: per gold label, share of gold spans overlapped by a same-label prediction.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from protocol import Corpus, Document, LabelMapping, Span
from protocol.rounds import Estimate, ModelMetrics

TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass
class DocCounts:
    """Sufficient statistics of one document; metrics are sums of these."""

    tok_tp: int = 0
    tok_fp: int = 0
    tok_fn: int = 0
    pred_matched: int = 0
    n_pred: int = 0
    gold_matched: int = 0
    n_gold: int = 0
    leaked: int = 0
    per_label: dict[str, tuple[int, int]] = field(default_factory=dict)


def _label_at(spans: tuple[Span, ...], start: int, end: int) -> str:
    return next((s.label for s in spans if s.start < end and start < s.end), "O")


def _overlaps(span: Span, others: tuple[Span, ...]) -> bool:
    return any(o.label == span.label and o.start < span.end and span.start < o.end for o in others)


def _covered(span: Span, others: tuple[Span, ...]) -> bool:
    masked: set[int] = set()
    for o in others:
        masked.update(range(max(o.start, span.start), min(o.end, span.end)))
    return len(masked) == span.end - span.start


def document_counts(gold: Document, pred: Document) -> DocCounts:
    counts = DocCounts()
    for match in TOKEN.finditer(gold.text):
        g = _label_at(gold.spans, match.start(), match.end())
        p = _label_at(pred.spans, match.start(), match.end())
        counts.tok_tp += int(g == p != "O")
        counts.tok_fp += int(p != "O" and p != g)
        counts.tok_fn += int(g != "O" and g != p)
    counts.n_pred = len(pred.spans)
    counts.pred_matched = sum(_overlaps(s, gold.spans) for s in pred.spans)
    counts.n_gold = len(gold.spans)
    per_label: dict[str, list[int]] = {}
    for span in gold.spans:
        hit = _overlaps(span, pred.spans)
        counts.gold_matched += int(hit)
        entry = per_label.setdefault(span.label, [0, 0])
        entry[0] += int(hit)
        entry[1] += 1
    counts.per_label = {k: (v[0], v[1]) for k, v in per_label.items()}
    counts.leaked = int(any(not _covered(s, pred.spans) for s in gold.spans))
    return counts


def _f1(tp_p: int, n_p: int, tp_r: int, n_r: int) -> float:
    precision = tp_p / n_p if n_p else 1.0
    recall = tp_r / n_r if n_r else 1.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _figures(docs: list[DocCounts]) -> tuple[float, float, float]:
    tp = sum(d.tok_tp for d in docs)
    token = _f1(tp, tp + sum(d.tok_fp for d in docs), tp, tp + sum(d.tok_fn for d in docs))
    span = _f1(
        sum(d.pred_matched for d in docs),
        sum(d.n_pred for d in docs),
        sum(d.gold_matched for d in docs),
        sum(d.n_gold for d in docs),
    )
    leakage = sum(d.leaked for d in docs) / len(docs) if docs else 0.0
    return token, span, leakage


def _map(corpus: Corpus, mapping: LabelMapping | None) -> dict[str, Document]:
    if mapping is None:
        return corpus.by_id()
    return {
        d.id: Document.model_validate(
            {
                **d.model_dump(),
                "spans": [{**s.model_dump(), "label": mapping.map_label(s.label)} for s in d.spans],
            }
        )
        for d in corpus.documents
    }


def evaluate(
    gold: Corpus,
    pred: Corpus,
    mapping: LabelMapping | None = None,
    n_bootstrap: int = 200,
    seed: int = 13,
) -> ModelMetrics:
    """Score ``pred`` against ``gold`` (both mapped through ``mapping`` when given)."""
    gold_docs, pred_docs = _map(gold, mapping), _map(pred, mapping)
    docs = [
        document_counts(g, pred_docs.get(doc_id, g.model_copy(update={"spans": ()})))
        for doc_id, g in gold_docs.items()
    ]
    point = _figures(docs)
    rng = random.Random(seed)
    samples = [_figures(rng.choices(docs, k=len(docs))) for _ in range(n_bootstrap)] if docs else []

    def estimate(i: int) -> Estimate:
        values = sorted(s[i] for s in samples) or [point[i]]
        low = values[int(0.025 * (len(values) - 1))]
        high = values[round(0.975 * (len(values) - 1))]
        return Estimate(value=point[i], low=low, high=high)

    totals: dict[str, list[int]] = {}
    for d in docs:
        for label, (hit, n) in d.per_label.items():
            entry = totals.setdefault(label, [0, 0])
            entry[0] += hit
            entry[1] += n
    return ModelMetrics(
        token_f1=estimate(0),
        span_overlap_f1=estimate(1),
        document_leakage=estimate(2),
        label_recall={k: v[0] / v[1] for k, v in sorted(totals.items())},
        n_documents=len(docs),
    )
