"""Template-only generation (seed 002): placeholders, validation, the local filler (exact
offsets), deduplication against the seed notes and the PII mix."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Corpus, Document, Span
from site_agent.generate.dedup import deduplicate
from site_agent.generate.fill import fill_templates, shape_pool
from site_agent.generate.mix import pii_mix
from site_agent.generate.modes.template import identifier_like
from site_agent.generate.placeholders import PLACEHOLDER, insert_placeholders, read_template
from site_agent.pseudonymise import PseudonymiseSettings

NAME, DATE, AGE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS", "EDAD_SUJETO_ASISTENCIA"
TRAIN = Corpus(
    documents=(
        Document(
            id="t1",
            text="Ana Gil, 70 años, vista el 03/04/2019 con Luis Paz.",
            spans=(
                Span(start=0, end=7, label=NAME),
                Span(start=9, end=16, label=AGE),
                Span(start=27, end=37, label=DATE),
                Span(start=42, end=50, label=NAME),
            ),
        ),
        Document(id="t2", text="Sin datos.", spans=()),
    )
)
POOL = shape_pool(TRAIN)
ALLOWED = frozenset(POOL)


def test_placeholders_number_each_label_and_repeat_a_surface() -> None:
    doc = Document(
        id="d",
        text="Ana y Luis; Ana el 1/2/20",
        spans=(
            Span(start=0, end=3, label=NAME),
            Span(start=6, end=10, label=NAME),
            Span(start=12, end=15, label=NAME),
            Span(start=19, end=25, label=DATE),
        ),
    )
    assert insert_placeholders(doc) == (
        f"{{{{{NAME}:1}}}} y {{{{{NAME}:2}}}}; {{{{{NAME}:1}}}} el {{{{{DATE}:1}}}}"
    )


@pytest.mark.parametrize(
    ("generated", "problem"),
    [
        (f"Visto por {{{{{NAME}:1}}}}.", None),
        (f"Cortado {{{{{DATE}:", None),  # cut off by the token budget: dropped
        ("Visto por {{PACIENTE:1}}.", "placeholder label outside the allow-list: ['PACIENTE']"),
        (f"Visto por {{{{{NAME}:1}}.", "malformed placeholder"),
        ("Visto por {{nombre}} ayer.", "malformed placeholder"),
    ],
)
def test_templates_are_validated_against_the_allow_list(
    generated: str, problem: str | None
) -> None:
    assert read_template(generated, ALLOWED).problem == problem


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        (f"{{{{{DATE}:1}}}} ingresa", False),
        ("ingresa el 12/03/2018", True),
        ("llamar al 912 345 678", True),
        ("correo ana@hospital.es", True),
        ("dosis de 500 mg cada 8 horas", False),
    ],
)
def test_identifier_like_text_outside_placeholders_is_flagged(text: str, flagged: bool) -> None:
    assert (identifier_like(read_template(text, ALLOWED)) is not None) == flagged


TEMPLATE_TEXT = st.lists(
    st.one_of(
        st.text(st.sampled_from("abc ,.\nñ{}"), max_size=6).filter(lambda s: "{{" not in s),
        st.builds(
            lambda label, n: f"{{{{{label}:{n}}}}}",
            st.sampled_from(sorted(ALLOWED)),
            st.integers(1, 3),
        ),
    ),
    max_size=8,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(TEMPLATE_TEXT, st.integers(0, 1000))
def test_every_filled_span_is_its_placeholders_surrogate(text: str, seed: int) -> None:
    template = read_template(text, ALLOWED)
    if template.problem is not None:  # stray braces from the plain pieces
        return
    (note,) = fill_templates([("syn-0-0", template)], POOL, PseudonymiseSettings(), seed)
    doc = note.document
    assert len(doc.spans) == len(template.placeholders)
    for span, placeholder in zip(doc.spans, template.placeholders, strict=True):
        assert span.label == placeholder.label
        assert doc.surface(span) == note.surrogates[placeholder.key]
        assert doc.surface(span).strip()
    # the text between placeholders is the template's, untouched
    outside, cursor = [], 0
    for span in doc.spans:
        outside.append(doc.text[cursor : span.start])
        cursor = span.end
    outside.append(doc.text[cursor:])
    assert outside == PLACEHOLDER.split(template.text)[::3]


def test_a_placeholder_keeps_one_surrogate_and_none_is_a_seed_surface() -> None:
    template = read_template(
        f"{{{{{NAME}:1}}}} y {{{{{NAME}:2}}}} ven a {{{{{NAME}:1}}}} el {{{{{DATE}:1}}}}", ALLOWED
    )
    (note,) = fill_templates([("syn-1-0", template)], POOL, PseudonymiseSettings(), 13)
    names = [note.document.surface(s) for s in note.document.spans if s.label == NAME]
    assert names[0] == names[2] != names[1]
    seed_surfaces = {TRAIN.documents[0].surface(s) for s in TRAIN.documents[0].spans}
    assert not {note.document.surface(s) for s in note.document.spans} & seed_surfaces - {"70 años"}


def _doc(i: int, text: str, spans: tuple[Span, ...] = ()) -> Document:
    return Document(id=f"s{i}", text=text, spans=spans)


def test_dedup_drops_exact_and_near_copies_of_seeds_and_of_each_other() -> None:
    seed = "el paciente ingresa por dolor torácico de dos días de evolución sin fiebre"
    notes = [
        _doc(0, "El  paciente ingresa por dolor torácico de dos días de evolución sin fiebre"),
        _doc(1, seed + " ni tos"),  # near the seed
        _doc(2, "la paciente refiere cefalea intensa desde ayer y vómitos alimentarios"),
        _doc(3, "la paciente refiere cefalea intensa desde ayer y vómitos alimentarios."),
        _doc(4, "exploración física normal, auscultación cardiopulmonar sin hallazgos"),
    ]
    result = deduplicate(notes, [seed], threshold=0.7)
    assert [d.id for d in result.kept] == ["s2", "s4"]
    assert (result.exact, result.near) == (1, 2)


def test_pii_mix_keeps_the_most_notes_at_the_asked_share() -> None:
    span = (Span(start=0, end=1, label=NAME),)
    notes = [_doc(i, f"x{i}", span if i % 4 == 0 else ()) for i in range(20)]  # 5 with PII
    half = pii_mix(notes, 0.5)
    assert sum(1 for d in half if d.spans) == 5 and len(half) == 10
    assert [d.id for d in half] == [d.id for d in notes if d in half]  # order kept
    assert all(d.spans for d in pii_mix(notes, 1.0)) and len(pii_mix(notes, 1.0)) == 5
    assert pii_mix(notes, None) == notes
    assert len(pii_mix(notes, 0.25)) == 20  # already the asked share
    few = pii_mix(notes, 0.1)  # every note without PII, and one in ten with
    assert (len(few), sum(1 for d in few if d.spans)) == (17, 2)
