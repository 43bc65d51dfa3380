"""Score the Presidio pipeline on a test split beside the bare encoder, with the same metrics.

Both are scored in Presidio's entity names (``entities``): the gold spans and the bare
encoder's predictions are mapped onto them, the analyzer returns them. The bare encoder is the
project's own inference (``ner.infer.machine_annotate``); the Presidio pipeline is the
analyzer of ``engines`` (the encoder as a Hugging Face recognizer, plus Presidio's pattern
recognizers when asked). Any difference between the two rows is what the integration adds or
loses (decoding, chunking, score threshold, extra recognizers).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import Corpus, Document, Span
from protocol.evaluation import EvaluationReport
from shared.metrics import BootstrapSettings, evaluate
from site_agent.presidio.entities import to_presidio_entities

ENCODER = "bare encoder"
PRESIDIO = "Presidio analyzer"


@dataclass(frozen=True)
class Found:
    """One analyzer result: where, what, how sure."""

    start: int
    end: int
    entity: str
    score: float


def non_overlapping(found: list[Found], text_length: int) -> tuple[Span, ...]:
    """The spans a document may hold: most confident first, then longest; no two overlap.

    Presidio's analyzer may return overlapping results of different recognizers; a corpus
    gives each character at most one label.
    """
    kept: list[Found] = []
    for item in sorted(found, key=lambda f: (-f.score, -(f.end - f.start), f.start)):
        inside = 0 <= item.start < item.end <= text_length
        if inside and all(item.end <= k.start or k.end <= item.start for k in kept):
            kept.append(item)
    return tuple(Span(start=k.start, end=k.end, label=k.entity) for k in kept)


def presidio_annotate(analyzer: Any, corpus: Corpus, language: str) -> Corpus:
    """A copy of ``corpus`` whose spans are the analyzer's results (input spans dropped)."""
    documents = []
    for doc in corpus.documents:
        results = analyzer.analyze(text=doc.text, language=language)
        found = [Found(r.start, r.end, r.entity_type, float(r.score)) for r in results]
        spans = non_overlapping(found, len(doc.text))
        documents.append(Document(id=doc.id, text=doc.text, spans=spans, source=doc.source))
    labels = tuple(sorted({s.label for d in documents for s in d.spans}))
    return Corpus(documents=tuple(documents), labels=labels)


def score_pipelines(
    model_dir: Path,
    gold: Corpus,
    *,
    language: str = "en",
    builtin_recognizers: bool = False,
    threshold: float = 0.3,
    bootstrap: BootstrapSettings | None = None,
) -> dict[str, EvaluationReport]:
    """The bare encoder and the Presidio pipeline around it, each scored against ``gold``."""
    from ner.infer import machine_annotate
    from site_agent.presidio.engines import analyzer_engine

    analyzer = analyzer_engine(
        model_dir, language, builtin_recognizers=builtin_recognizers, threshold=threshold
    )
    unlabelled = Corpus(
        documents=tuple(d.model_copy(update={"spans": ()}) for d in gold.documents),
        labels=gold.labels,
    )
    gold_entities = to_presidio_entities(gold)
    predictions = {
        ENCODER: to_presidio_entities(machine_annotate(model_dir, unlabelled)),
        PRESIDIO: presidio_annotate(analyzer, unlabelled, language),
    }
    return {
        name: evaluate(gold_entities, predicted, None, bootstrap)
        for name, predicted in predictions.items()
    }
