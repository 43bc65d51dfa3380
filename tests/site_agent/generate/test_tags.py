"""In-text PHI tags (seed 003): insertion, parsing back to exact spans, repair of bad tags."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import Document, Span
from site_agent.generate.tags import insert_tags, read_tags

LABELS = ("NOMBRE_SUJETO_ASISTENCIA", "FECHAS", "EDAD_SUJETO_ASISTENCIA")
ALLOWED = frozenset(LABELS)
PLAIN = st.text(st.sampled_from("abc ,.\n0123/áñ"), max_size=8)
SURFACE = st.text(st.sampled_from("abcXYZ 0123/áñ"), min_size=1, max_size=8).filter(
    lambda s: s.strip() == s and s
)


@st.composite
def documents(draw: st.DrawFn) -> Document:
    """A note of alternating plain text and labelled surfaces (no leading/trailing blanks in a
    surface: a tag's inner whitespace is trimmed when read back)."""
    pieces: list[str] = []
    spans: list[Span] = []
    length = 0
    for _ in range(draw(st.integers(0, 4))):
        before, surface = draw(PLAIN), draw(SURFACE)
        start = length + len(before)
        spans.append(
            Span(start=start, end=start + len(surface), label=draw(st.sampled_from(LABELS)))
        )
        pieces += [before, surface]
        length = start + len(surface)
    pieces.append(draw(PLAIN))
    return Document(id="d", text="".join(pieces), spans=tuple(spans))


@given(documents())
def test_tags_read_back_to_the_same_text_and_spans(doc: Document) -> None:
    reading = read_tags(insert_tags(doc), ALLOWED)
    assert reading.text == doc.text
    assert tuple(reading.spans) == doc.spans
    assert (reading.well_formed, reading.malformed) == (len(doc.spans), 0)


def test_inserted_tags_wrap_each_surface() -> None:
    doc = Document(id="d", text="Dr. Ana vio a Luis", spans=(Span(start=4, end=7, label="FECHAS"),))
    assert insert_tags(doc) == "Dr. <FECHAS>Ana</FECHAS> vio a Luis"


@pytest.mark.parametrize(
    ("generated", "text", "spans", "malformed"),
    [
        ("Vino <FECHAS> 3/4/20 </FECHAS>.", "Vino  3/4/20 .", [(6, 12, "FECHAS")], 0),
        ("a </FECHAS> b", "a  b", [], 1),  # closing tag with no open one
        ("a <FECHAS> b", "a  b", [], 1),  # never closed
        ("<FECHAS>a <FECHAS>b</FECHAS>", "a b", [(2, 3, "FECHAS")], 1),  # re-opened
        ("<FECHAS>a</EDAD_SUJETO_ASISTENCIA> b", "a b", [], 2),  # closed as another label
        ("<OTRO>a</OTRO> b", "a b", [], 0),  # outside the allow-list: counted apart
        ("<FECHAS> </FECHAS>b", " b", [], 2),  # empty
        ("ok <FECHAS>1</FECHAS> then <NOMBRE_SU", "ok 1 then ", [(3, 4, "FECHAS")], 1),
        ("cut </", "cut ", [], 1),
        ("dosis <5 mg y >2", "dosis <5 mg y >2", [], 0),  # not tags at all
    ],
)
def test_malformed_tags_are_dropped_and_counted(
    generated: str, text: str, spans: list[tuple[int, int, str]], malformed: int
) -> None:
    reading = read_tags(generated, ALLOWED)
    assert reading.text == text
    assert [(s.start, s.end, s.label) for s in reading.spans] == spans
    assert reading.malformed == malformed
    assert reading.tags == 2 * (len(spans) + sum(reading.unknown.values())) + malformed
    assert reading.unknown == ({"OTRO": 1} if "OTRO" in generated else {})
    for span in reading.spans:
        assert reading.text[span.start : span.end].strip() == reading.text[span.start : span.end]


def test_a_pair_of_an_unknown_label_is_counted_apart_and_a_lone_tag_is_malformed() -> None:
    """Issue 46: ``<Nombre>Ana</Nombre>`` names a label outside the scheme (the tagged mode
    drops its note); a lone ``<br>`` is only a malformed tag, removed as before."""
    reading = read_tags("Vio a <Nombre>Ana</Nombre> hoy.<br> Bien.", ALLOWED)
    assert reading.unknown == {"Nombre": 1} and reading.malformed == 1
    assert (reading.text, reading.spans, reading.tags) == ("Vio a Ana hoy. Bien.", [], 3)
