"""Machine annotation returns exact, non-overlapping, word-aligned spans for every document."""

from __future__ import annotations

from pathlib import Path

import pytest

from ner.infer import machine_annotate
from protocol import Corpus, Document, Span
from protocol.annotator import AnnotatorResult
from shared.errors import ConfigError, ModelUnavailableError
from shared.ner_tokens import split_words
from tests.ner.conftest import synthetic_corpus


def _span_overlap_recall(gold: Corpus, pred: Corpus) -> float:
    found = total = 0
    predicted = pred.by_id()
    for doc in gold.documents:
        for g in doc.spans:
            total += 1
            found += any(
                p.label == g.label and p.start < g.end and g.start < p.end
                for p in predicted[doc.id].spans
            )
    return found / total


def test_annotations_are_exact_and_non_overlapping(trained: AnnotatorResult) -> None:
    notes = synthetic_corpus(10, 7, "syn")
    extra = Document(id="empty", text="   ")
    long_text = " ".join(d.text for d in notes.documents)  # ~10 chunks of 24 words
    corpus = Corpus(
        documents=(*notes.documents, extra, Document(id="long", text=long_text)),
        labels=notes.labels,
    )
    annotated = machine_annotate(trained.model_dir, corpus, batch_size=4)
    assert [d.id for d in annotated.documents] == [d.id for d in corpus.documents]
    assert [d.text for d in annotated.documents] == [d.text for d in corpus.documents]
    assert annotated.labels == trained.record.labels
    for doc in annotated.documents:
        starts = {a for a, _ in split_words(doc.text)}
        ends = {b for _, b in split_words(doc.text)}
        for left, right in zip(doc.spans, doc.spans[1:], strict=False):
            assert left.end <= right.start
        for span in doc.spans:
            assert span.start in starts and span.end in ends
            assert doc.surface(span) == doc.surface(span).strip()
    assert annotated.by_id()["empty"].spans == ()
    # a model that learnt the patterns finds most gold spans, also across chunk borders
    assert _span_overlap_recall(notes, annotated) > 0.6
    long_doc = annotated.by_id()["long"]
    assert len(long_doc.spans) > 0.6 * sum(len(d.spans) for d in notes.documents)


def test_input_spans_are_replaced_and_provenance_names_the_annotator(
    trained: AnnotatorResult,
) -> None:
    doc = Document(id="d", text="Paciente Ana Gil.", spans=(Span(start=0, end=8, label="X"),))
    annotated = machine_annotate(trained.model_dir, Corpus(documents=(doc,)))
    assert all(s.label != "X" for s in annotated.documents[0].spans)
    notes = annotated.provenance.notes
    assert notes["stage"] == "machine_annotate"
    assert notes["annotator"] == str(trained.model_dir)
    assert len(notes["annotator_weights_sha256"]) == 64
    assert annotated.provenance.config_digest == trained.record.settings_digest


def test_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    corpus = Corpus(documents=(Document(id="d", text="hola"),))
    with pytest.raises(ModelUnavailableError, match=r"no trained annotator"):
        machine_annotate(tmp_path, corpus)


def test_broken_annotator_record_names_the_file(trained: AnnotatorResult, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(trained.model_dir, copy)
    (copy / "annotator.json").write_text('{"base_model": 3}')
    corpus = Corpus(documents=(Document(id="d", text="hola"),))
    with pytest.raises(ConfigError, match=r"annotator\.json: not a valid annotator record"):
        machine_annotate(copy, corpus)
