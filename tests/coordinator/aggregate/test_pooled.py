"""Harmonising and pooling site corpora, checked against a hand-relabelled oracle."""

from __future__ import annotations

import pytest

from coordinator.aggregate.pooled import pool
from protocol import Corpus, Document, LabelMapping, Span
from protocol.corpus import UnmappedLabelError
from shared.label_mapping import harmonise, shared_labels

MAPPING = LabelMapping(
    name="coarse",
    coarse_labels=("PER", "LOC"),
    mapping={"PATIENT": "PER", "NAME": "PER", "CITY": "LOC", "LOCATION": "LOC"},
)


def corpus(*docs: tuple[str, str, list[tuple[int, int, str]]]) -> Corpus:
    documents = tuple(
        Document(id=i, text=t, spans=tuple(Span(start=a, end=b, label=lab) for a, b, lab in s))
        for i, t, s in docs
    )
    labels = tuple(sorted({lab for _, _, s in docs for *_, lab in s}))
    return Corpus(documents=documents, labels=labels)


SITE_A = corpus(("n1", "Ana en Madrid", [(0, 3, "PATIENT"), (7, 13, "CITY")]))
SITE_B = corpus(("n1", "Luis", [(0, 4, "NAME")]), ("n2", "Bilbao", [(0, 6, "LOCATION")]))


def test_harmonise_relabels_every_span_and_keeps_text_and_offsets() -> None:
    labels = shared_labels(MAPPING, [SITE_A, SITE_B])
    assert labels == ("LOC", "PER")
    oracle = corpus(("n1", "Ana en Madrid", [(0, 3, "PER"), (7, 13, "LOC")]))
    got = harmonise(SITE_A, MAPPING, labels)
    assert got.documents == oracle.documents and got.labels == labels


def test_without_a_mapping_labels_are_the_union_and_spans_untouched() -> None:
    labels = shared_labels(None, [SITE_A, SITE_B])
    assert labels == ("CITY", "LOCATION", "NAME", "PATIENT")
    assert harmonise(SITE_B, None, labels).documents == SITE_B.documents


def test_an_unmapped_label_is_refused() -> None:
    odd = corpus(("n1", "x", [(0, 1, "AGE")]))
    with pytest.raises(UnmappedLabelError):
        harmonise(odd, MAPPING, ("LOC", "PER"))


def test_pool_prefixes_ids_with_the_site_and_keeps_every_document() -> None:
    labels = ("LOC", "PER")
    union = pool(
        {"b": harmonise(SITE_B, MAPPING, labels), "a": harmonise(SITE_A, MAPPING, labels)}, labels
    )
    assert [d.id for d in union.documents] == ["a/n1", "b/n1", "b/n2"]
    assert [s.label for d in union.documents for s in d.spans] == ["PER", "LOC", "PER", "LOC"]
    assert union.labels == labels and union.provenance.parents == ("a", "b")
