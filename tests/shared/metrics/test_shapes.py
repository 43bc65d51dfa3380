"""Surface shapes and note positions against hand-written expectations, and the promise that
a shape never spells out an identifier."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.metrics.shapes import (
    MAX_SHAPE_CHARS,
    NoteLayout,
    casing,
    length_bucket,
    note_position,
    surface_shape,
)

SHAPE_ALPHABET = set("Xxad+ ?…") | set(string.punctuation)


@pytest.mark.parametrize(
    ("surface", "shape", "case"),
    [
        ("12/03/2019", "dd/dd/dddd", "none"),
        ("12.03.2019", "dd.dd.dddd", "none"),
        ("Ana García-Pérez", "Xx Xx-Xx", "title"),
        ("GARCÍA PÉREZ", "X X", "upper"),
        ("garcía", "x", "lower"),
        ("McDonald", "XxXx", "mixed"),
        ("600 123 456", "ddd ddd ddd", "none"),
        ("+34 612345678", "+dd dddd+", "none"),
        ("12345678X", "dddd+X", "upper"),
        ("C/ Mayor 3, 2º B", "X/ Xx d, dx X", "mixed"),
        ("nº  12\n", "x dd", "lower"),
        ("张伟", "a", "uncased"),
        ("Jose\u0301", "Xx", "title"),  # a combining accent belongs to its letter
        ("a→b", "x?x", "lower"),  # a non-ASCII symbol is "?"
    ],
)
def test_shape_and_casing_of_hand_picked_identifiers(surface: str, shape: str, case: str) -> None:
    assert surface_shape(surface) == shape
    assert casing(surface) == case


def test_a_long_shape_is_cut_and_marked() -> None:
    shape = surface_shape("A1-" * 30)
    assert len(shape) == MAX_SHAPE_CHARS and shape.endswith("…")
    assert shape.startswith("Xd-Xd-")


@pytest.mark.parametrize(
    ("n_chars", "bucket"),
    [(1, "1-3"), (3, "1-3"), (4, "4-7"), (7, "4-7"), (8, "8-15"), (16, "16-31"), (32, "32+")],
)
def test_length_buckets(n_chars: int, bucket: str) -> None:
    assert length_bucket(n_chars) == bucket


LETTER = """Hospital Central
Servicio de Urgencias
Fecha: 12/03/2019

Estimado Dr. Ruiz:
le remito a la paciente Ana García.
Presenta fiebre.
Sin alergias.
Un saludo,
Dr. Pablo Sanz
"""


@pytest.mark.parametrize(
    ("needle", "where"),
    [
        # 9 non-blank lines: a header of min(3, 9 // 4) = 2 lines and a signature of 2
        ("Central", "header"),
        ("Urgencias", "header"),
        ("12/03", "body"),  # a short line, but it does not end with , or :
        ("Ruiz", "salutation"),  # short, ends with ":", in the first half
        ("Ana", "body"),
        ("Un saludo", "signature"),
        ("Pablo", "signature"),
    ],
)
def test_positions_in_a_letter(needle: str, where: str) -> None:
    assert note_position(LETTER, LETTER.index(needle)) == where


def test_a_salutation_is_short_and_in_the_first_half() -> None:
    note = "Hospital\nUrgencias\nhoy vino la paciente Ana con su madre y su hermana:\n"
    note += "texto\n" * 6 + "Dr. Sanz\n"
    assert note_position(note, note.index("Ana")) == "body"  # over six words
    late = "Hospital\nUrgencias\n" + "texto\n" * 5 + "Visto por Ruiz:\n" + "texto\nfin\nDr. Sanz\n"
    assert note_position(late, late.index("Ruiz")) == "body"  # in the second half
    assert note_position("Querida Ana,", 8) == "salutation"  # one line: no header


def test_short_notes_have_no_header_or_signature() -> None:
    assert note_position("Paciente Ana García, 45 años.", 9) == "body"
    note = "Ana\nBea\nCarla"
    assert {note_position(note, note.index(n)) for n in ("Ana", "Bea", "Carla")} == {"body"}
    assert NoteLayout.of("\n\n  \nAna\n").line_of(4) == 0


@given(st.text(min_size=1, max_size=80))
def test_a_shape_spells_no_letter_or_digit_of_its_surface(surface: str) -> None:
    """Shapes use a fixed alphabet: no letter other than X, x, a, d and no digit at all, so an
    identifier with any other letter or any digit can never be read back from its shape."""
    shape = surface_shape(surface)
    assert set(shape) <= SHAPE_ALPHABET
    assert len(shape) <= MAX_SHAPE_CHARS
