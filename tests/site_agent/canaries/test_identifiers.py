"""Identifier canaries: planted as unique gold spans, absent from the original, seeded."""

from __future__ import annotations

import pytest

from protocol import Corpus
from shared.errors import UsageError
from site_agent.canaries.identifiers import kind_of, plant_canaries
from site_agent.privacy.digest import corpus_sha256
from tests.site_agent.audit.builders import corpus, make_doc, random_corpus


@pytest.fixture(scope="module")
def planted() -> tuple[Corpus, Corpus, object]:
    original = random_corpus(11, 24, "r", words=50)
    copy, record = plant_canaries(original, 6, seed=3)
    return original, copy, record


def test_canaries_are_unique_gold_spans_absent_from_the_original(planted: tuple) -> None:
    original, copy, record = planted
    by_id = copy.by_id()
    values = [c.value for c in record.canaries]
    assert len(values) == len(set(values)) == 6
    assert {c.kind for c in record.canaries} == {"name", "id", "date"}
    original_text = "\n".join(d.text for d in original.documents).lower()
    for canary in record.canaries:
        doc = by_id[canary.document_id]
        assert doc.text[canary.start : canary.end] == canary.value
        assert any(
            (s.start, s.end, s.label) == (canary.start, canary.end, canary.label) for s in doc.spans
        )
        assert canary.value.lower() not in original_text
    assert record.source_corpus_sha256 == corpus_sha256(original)
    assert record.planted_corpus_sha256 == corpus_sha256(copy)
    assert len(copy) == len(original)


def test_planting_is_seeded(planted: tuple) -> None:
    original, _, record = planted
    again = plant_canaries(original, 6, seed=3)[1]
    assert [c.value for c in again.canaries] == [c.value for c in record.canaries]


@pytest.mark.parametrize(
    ("label", "surface", "kind"),
    [
        ("NOMBRE_SUJETO_ASISTENCIA", "Ernesto Rivera", "name"),
        ("ID_SUJETO_ASISTENCIA", "368503", "id"),
        ("NUMERO_TELEFONO", "912 345 678", "phone"),
        ("FECHAS", "12/12/2016", "date"),
        ("FECHAS", "marzo de 2016", None),
        ("TERRITORIO", "Madrid", None),
        # issue 46: a label's words whatever its case, separators or script
        ("PatientName", "Ernesto Rivera", "name"),
        ("patient-name", "Ernesto Rivera", "name"),
        ("Fecha_Día", "12/12/2016", "date"),
        ("phone.number", "912 345 678", "phone"),
        ("MRN", "368503", "id"),
        ("Idnum", "368503", "id"),  # one word: IDNUM
    ],
)
def test_kind_of_span(label: str, surface: str, kind: str | None) -> None:
    assert kind_of(label, surface) == kind


def test_no_carrier_spans_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="no gold span can carry a canary"):
        plant_canaries(corpus(make_doc("d", "sin", ("Madrid", "TERRITORIO"))), 2)
