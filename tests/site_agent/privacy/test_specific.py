"""Which identifiers point at one person, and what that changes in the sensitive n-grams."""

from __future__ import annotations

import pytest

from protocol import Document, Span
from site_agent.audit.policy import FilterSettings
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.privacy.specific import is_specific, span_specificity


@pytest.mark.parametrize(
    ("surface", "label", "specific"),
    [
        ("Ana Ruiz", "NOMBRE_SUJETO_ASISTENCIA", True),
        ("Calle Mayor", "CALLE", True),
        ("ana@example.org", "CORREO_ELECTRONICO", True),
        ("1234567", "ID_SUJETO_ASISTENCIA", True),
        ("Reino Unido", None, True),  # two capitalised words, label unknown
        ("Reino Unido", "PAIS", False),  # a country is shared by millions
        ("San Sebastián", "TERRITORIO", False),
        ("12/03/2015", "FECHAS", False),
        ("12 de Marzo de 2015", "FECHAS", False),
        ("45 años", "EDAD_SUJETO_ASISTENCIA", False),
        ("Ana", "NOMBRE_SUJETO_ASISTENCIA", False),
    ],
)
def test_specific_surfaces_point_at_one_person(
    surface: str, label: str | None, specific: bool
) -> None:
    assert is_specific(surface, label) is specific


def _doc(doc_id: str, text: str, *marked: tuple[str, str]) -> Document:
    spans = []
    for surface, label in marked:
        start = text.index(surface)
        spans.append(Span(start=start, end=start + len(surface), label=label))
    return Document(id=doc_id, text=text, spans=tuple(spans))


REAL = [
    _doc("r0", "fecha de ingreso 12 03 2015 en urgencias", ("12 03 2015", "FECHAS")),
    _doc(
        "r1",
        "paciente varón de 45 años que acude",
        ("varón", "SEXO_SUJETO_ASISTENCIA"),
        ("45 años", "EDAD_SUJETO_ASISTENCIA"),
    ),
    _doc(
        "r2",
        "la paciente Ana Ruiz Pérez refiere dolor",
        ("Ana Ruiz Pérez", "NOMBRE_SUJETO_ASISTENCIA"),
    ),
]


def test_a_random_date_sharing_day_and_month_counts_only_under_all_identifiers() -> None:
    """Day and month after the same header hold half the date: 'all' drops the note, the
    default does not; two identifiers at once and a full name drop it under both."""
    synth = [
        Document(id="date", text="fecha de ingreso 12 03 2021 en planta"),
        Document(id="two", text="paciente varón de 45 años que ingresa"),
        Document(id="name", text="la paciente Ana Ruiz Pérez refiere fiebre"),
        Document(id="none", text="fecha de alta sin incidencias"),
    ]
    assert span_specificity(REAL).tolist() == [False, False, False, True]
    default = FilterSettings(sensitive_ngram_n=4, sensitive_ngram_min_share=0.5)
    every = default.model_copy(update={"sensitive_ngram_identifiers": "all"})
    assert (IdentifyingIndex.build(REAL, every).hits(synth) > 0).tolist() == [
        True, True, True, False,
    ]  # fmt: skip
    assert (IdentifyingIndex.build(REAL, default).hits(synth) > 0).tolist() == [
        False, True, True, False,
    ]  # fmt: skip
