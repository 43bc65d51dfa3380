"""Corpus diagnostics that explain real-vs-synthetic shifts (seed 002 Tables 1, 3, 4; seed 000).

Length (words by whitespace, characters), spans per document, label distribution, the share
of PII-bearing documents, PII-bearing documents without a person label, within-document
identifier repetition, and lexical diversity.

Person labels are configurable; by default they are the labels of the ``name`` family in
``shared/label_families.py`` (the table pseudonymisation also reads), so
``NOMBRE_SUJETO_ASISTENCIA``, ``First_Name`` and i2b2's ``HCPName`` are person labels but
``ID_TITULACION_PERSONAL_SANITARIO`` is not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from protocol import Corpus, Document
from protocol.evaluation import CorpusDiagnostics, Distribution, LabelDiagnostics
from shared.label_families import is_person_label
from shared.metrics.diversity import lexical_diversity
from shared.metrics.scores import ratio


def distribution(values: Sequence[float]) -> Distribution:
    """Median, quartiles, mean and range; all zero for no values."""
    if not values:
        return Distribution(median=0.0, q1=0.0, q3=0.0, mean=0.0, minimum=0.0, maximum=0.0)
    array = np.asarray(values, dtype=np.float64)
    q1, median, q3 = np.percentile(array, [25, 50, 75])
    return Distribution(
        median=float(median),
        q1=float(q1),
        q3=float(q3),
        mean=float(array.mean()),
        minimum=float(array.min()),
        maximum=float(array.max()),
    )


def normalise_surface(text: str) -> str:
    """Case- and whitespace-insensitive form of an identifier's surface string."""
    return " ".join(text.casefold().split())


def has_repeated_identifier(doc: Document) -> bool:
    """Whether some normalised surface string occurs as two or more spans of the document."""
    surfaces = Counter(normalise_surface(doc.surface(s)) for s in doc.spans)
    return any(n >= 2 for n in surfaces.values())


def label_diagnostics(pii_docs: Sequence[Document], n_spans: int) -> dict[str, LabelDiagnostics]:
    """Span counts and shares per label, and the share of PII documents containing each."""
    spans = Counter(s.label for d in pii_docs for s in d.spans)
    documents = Counter(label for d in pii_docs for label in {s.label for s in d.spans})
    return {
        label: LabelDiagnostics(
            spans=spans[label],
            span_share=ratio(spans[label], n_spans),
            pii_document_share=ratio(documents[label], len(pii_docs)),
        )
        for label in sorted(spans)
    }


def corpus_diagnostics(
    corpus: Corpus,
    *,
    person_labels: Iterable[str] | None = None,
    language: str | None = None,
    diversity: bool = True,
) -> CorpusDiagnostics:
    """The diagnostics of one corpus; ``diversity=False`` skips the stemming pass."""
    docs = corpus.documents
    pii_docs = [d for d in docs if d.spans]
    n_spans = sum(len(d.spans) for d in docs)
    labels = sorted({s.label for d in docs for s in d.spans} | set(corpus.labels))
    persons = (
        tuple(sorted(person_labels))
        if person_labels is not None
        else tuple(label for label in labels if is_person_label(label))
    )
    without_person = sum(1 for d in pii_docs if not {s.label for s in d.spans} & set(persons))
    fields: dict[str, object] = {}
    if diversity and docs:
        measured = lexical_diversity([d.text for d in docs], language)
        fields = {
            "language": measured.language,
            "n_word_tokens": measured.n_tokens,
            "lexical_diversity": measured.corpus,
            "mean_document_lexical_diversity": measured.mean_document,
        }
    return CorpusDiagnostics(
        n_documents=len(docs),
        n_spans=n_spans,
        n_pii_documents=len(pii_docs),
        pii_document_share=ratio(len(pii_docs), len(docs)),
        words=distribution([len(d.text.split()) for d in docs]),
        chars=distribution([len(d.text) for d in docs]),
        spans_per_document=distribution([len(d.spans) for d in docs]),
        spans_per_pii_document=distribution([len(d.spans) for d in pii_docs]),
        labels=label_diagnostics(pii_docs, n_spans),
        person_labels=persons,
        pii_documents_without_person_share=ratio(without_person, len(pii_docs)),
        pii_documents_with_repetition_share=ratio(
            sum(1 for d in pii_docs if has_repeated_identifier(d)), len(pii_docs)
        ),
        **fields,
    )
