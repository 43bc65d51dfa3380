"""Every corpus rule, each with a failing input and the exact message it must produce."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from protocol import Corpus, Document, LabelMapping, Span

TEXT = "Juan vive en Madrid."


def make(spans: list[tuple[int, int, str]], doc_id: str = "d1") -> Document:
    return Document(
        id=doc_id, text=TEXT, spans=[Span(start=s, end=e, label=lab) for s, e, lab in spans]
    )


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        (
            [(4, 4, "PER")],
            "document 'd1': span [4, 4) 'PER' has end <= start; "
            "fix: end is exclusive and must be greater than start",
        ),
        (
            [(13, 40, "LOC")],
            "document 'd1': span [13, 40) 'LOC' lies outside the text (length 20); "
            "fix: offsets are character offsets with 0 <= start < end <= 20",
        ),
        (
            [(-1, 4, "PER")],
            "document 'd1': span [-1, 4) 'PER' lies outside the text (length 20); "
            "fix: offsets are character offsets with 0 <= start < end <= 20",
        ),
        (
            [(0, 8, "PER"), (5, 10, "LOC")],
            "document 'd1': spans [0, 8) 'PER' and [5, 10) 'LOC' overlap; "
            "fix: keep one of them (e.g. the longest) so that no character has two labels",
        ),
        (
            [(0, 4, "")],
            "document 'd1': span [0, 4) '' has an empty label; "
            "fix: give every span a non-empty label from the corpus label set",
        ),
        (
            [(0, 4, "  ")],
            "document 'd1': span [0, 4) '  ' has an empty label; "
            "fix: give every span a non-empty label from the corpus label set",
        ),
    ],
)
def test_span_rule_message(spans: list[tuple[int, int, str]], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        make(spans)
    assert message in str(info.value)


def test_duplicate_document_ids_rejected() -> None:
    docs = [make([], "a"), make([], "b"), make([], "a")]
    with pytest.raises(ValidationError) as info:
        Corpus(documents=docs)
    assert (
        "duplicate document id 'a' at documents 1, 3; fix: give every document a unique id"
        in str(info.value)
    )


def test_valid_document_sorts_spans_and_gives_surface() -> None:
    doc = make([(13, 19, "LOC"), (0, 4, "PER")])
    assert [s.label for s in doc.spans] == ["PER", "LOC"]
    assert [doc.surface(s) for s in doc.spans] == ["Juan", "Madrid"]


def test_adjacent_spans_are_not_overlapping() -> None:
    doc = Document(
        id="x", text="AB", spans=[Span(start=0, end=1, label="A"), Span(start=1, end=2, label="B")]
    )
    assert len(doc.spans) == 2


def test_unknown_field_rejected() -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Document.model_validate({"id": "a", "text": "x", "spans": [], "colour": 1})


def test_corpus_label_set_derived_and_checked() -> None:
    corpus = Corpus(documents=[make([(0, 4, "PER"), (13, 19, "LOC")])])
    assert corpus.labels == ("LOC", "PER")
    with pytest.raises(ValidationError, match="label 'PER' is not in the corpus label set"):
        Corpus(documents=[make([(0, 4, "PER")])], labels=("LOC",))


def test_models_are_frozen() -> None:
    doc = make([])
    with pytest.raises(ValidationError):
        doc.id = "other"  # type: ignore[misc]


def test_label_mapping_rejects_unknown_target_and_names_missing_label() -> None:
    with pytest.raises(ValidationError, match="maps to labels outside its coarse scheme"):
        LabelMapping(name="m", coarse_labels=("PER",), mapping={"NOMBRE": "PERSON"})
    mapping = LabelMapping(name="m", coarse_labels=("PER", "LOC"), mapping={"NOMBRE": "PER"})
    assert mapping.map_label("NOMBRE") == "PER"
    with pytest.raises(LookupError, match="label 'PAIS' has no entry in label mapping 'm'"):
        mapping.map_label("PAIS")
