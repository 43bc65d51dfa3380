"""Score the annotator on the validation corpus after each epoch.

Word-tag scores (token-level and seqeval entity-level) come from the first sub-token of each
word; span scores (exact/overlap F1, document leakage) come from ``shared.metrics.evaluate`` on
the spans decoded exactly as ``machine_annotate`` decodes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ner.features import EncodedChunk, predicted_documents
from ner.loop import predict, resolve_bf16
from ner.scoring import score_tags
from protocol import Corpus
from protocol.annotator import AnnotatorMetrics, AnnotatorSettings
from shared.ner_tokens import IGNORE


@dataclass(frozen=True)
class ValidationSet:
    """The validation corpus and its encoded, labelled chunks."""

    corpus: Corpus
    chunks: list[EncodedChunk]


def _span_scores(gold: Corpus, pred: Corpus) -> dict[str, float]:
    from shared.metrics import evaluate

    report = evaluate(gold, pred)
    return {
        "exact_f1": report.exact.micro.f1,
        "overlap_precision": report.overlap.micro.precision,
        "overlap_recall": report.overlap.micro.recall,
        "overlap_f1": report.overlap.micro.f1,
        "doc_leakage": report.leakage.leakage_rate,
    }


def validation_metrics(
    model: Any, data: ValidationSet, tags: list[str], settings: AnnotatorSettings, pad: int
) -> AnnotatorMetrics:
    """Token, entity and span scores of ``model`` on ``data``."""
    bf16 = resolve_bf16(settings.bf16, next(model.parameters()).device)
    chunks = data.chunks
    predicted = predict(
        model, chunks, batch_size=settings.eval_batch_size, pad_id=pad, bf16=bf16,
        decoder=settings.decoding, tags=tags,
    )  # fmt: skip
    gold_seqs, pred_seqs = [], []
    for chunk, pred in zip(chunks, predicted, strict=True):
        labels = chunk.labels or []
        keep = [i for i, lab in enumerate(labels) if lab != IGNORE]
        gold_seqs.append([tags[labels[i]] for i in keep])
        pred_seqs.append([tags[pred[i]] for i in keep])
    words = score_tags(gold_seqs, pred_seqs)
    entity_labels = tuple(sorted({t[2:] for t in tags if t != "O"}))
    documents = predicted_documents(data.corpus, chunks, predicted, dict(enumerate(tags)))
    spans = _span_scores(data.corpus, Corpus(documents=documents, labels=entity_labels))
    return words.model_copy(update=spans)
