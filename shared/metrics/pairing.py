"""Pair every gold document with its prediction, optionally on a coarse label scheme.

Predictions are matched to gold documents by id. A gold document without a prediction is
treated as one where nothing was predicted (every gold span is missed); a prediction for an
id that is not in the gold corpus, or whose text differs from the gold text, is an error
because its character offsets cannot be scored.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol import Corpus, Document, LabelMapping, Span
from protocol.corpus import UnmappedLabelError
from shared.errors import ConfigError, CorpusFormatError


@dataclass(frozen=True)
class DocumentPair:
    """A gold document and the spans predicted on its text."""

    gold: Document
    predicted: tuple[Span, ...]

    @property
    def id(self) -> str:
        return self.gold.id


def pair_documents(gold: Corpus, pred: Corpus) -> list[DocumentPair]:
    """Gold documents in gold order, each with its predicted spans (empty if not predicted)."""
    gold_by_id = gold.by_id()
    problems: list[str] = []
    for doc in pred.documents:
        reference = gold_by_id.get(doc.id)
        if reference is None:
            problems.append(
                f"predicted document {doc.id!r} is not in the gold corpus; "
                "fix: predict on the gold documents only (ids must match)"
            )
        elif reference.text != doc.text:
            problems.append(
                f"predicted document {doc.id!r} has a different text from the gold document "
                f"({len(doc.text)} vs {len(reference.text)} characters); fix: predict on the "
                "unchanged gold text so that character offsets agree"
            )
    if problems:
        raise CorpusFormatError(
            f"{len(problems)} prediction(s) cannot be scored against the gold corpus",
            problems=problems,
        )
    pred_by_id = pred.by_id()
    return [
        DocumentPair(doc, pred_by_id[doc.id].spans if doc.id in pred_by_id else ())
        for doc in gold.documents
    ]


def map_labels(corpus: Corpus, mapping: LabelMapping) -> Corpus:
    """The same corpus with every span label replaced by its coarse label."""
    try:
        documents = tuple(
            doc.model_copy(
                update={
                    "spans": tuple(
                        Span(start=s.start, end=s.end, label=mapping.map_label(s.label))
                        for s in doc.spans
                    )
                }
            )
            for doc in corpus.documents
        )
    except UnmappedLabelError as exc:
        raise ConfigError(str(exc)) from None
    return Corpus(
        documents=documents,
        labels=tuple(mapping.coarse_labels),
        provenance=corpus.provenance,
    )


def evaluation_labels(pairs: list[DocumentPair]) -> tuple[str, ...]:
    """Every label seen in gold or prediction, sorted."""
    seen = {s.label for p in pairs for s in p.gold.spans}
    seen.update(s.label for p in pairs for s in p.predicted)
    return tuple(sorted(seen))
