"""Surrogates keep the shape class of the original: date format, letter case, titles, kind.

Dates are checked against an oracle: the real date moved by the note's shift and written with
the original's own format string.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable

import pytest
from faker import Faker
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from protocol import Document, Span
from shared.label_families import label_family
from site_agent.pseudonymise.dates import MONTHS, shift_date
from site_agent.pseudonymise.replace import _draw, note_context, surrogate_document
from site_agent.pseudonymise.surrogates import NoteContext


def _note(locale: str, seed: int = 0) -> NoteContext:
    fake = Faker(locale)
    fake.seed_instance(seed)
    return note_context(fake, random.Random(seed))


# how a date is written, which parts it writes, US month-first order, language of month names
DATE_WRITERS = {
    "d/m/Y": (lambda d: d.strftime("%d/%m/%Y"), "ymd", False, "es"),
    "m/d/Y": (lambda d: d.strftime("%m/%d/%Y"), "ymd", True, "en"),
    "ISO": (lambda d: d.isoformat(), "ymd", False, "en"),
    "US m/d": (lambda d: f"{d.month}/{d.day}", "md", True, "en"),
    "German d.m.": (lambda d: f"{d.day}.{d.month}.", "md", False, "de"),
    "d.m.Y": (lambda d: f"{d.day}.{d.month}.{d.year}", "ymd", False, "de"),
    "Month d, Y": (lambda d: f"{d:%B} {d.day}, {d.year}", "ymd", True, "en"),
    "DD-MON-YYYY": (lambda d: d.strftime("%d-%b-%Y").upper(), "ymd", True, "en"),
    "Mon YYYY": (lambda d: d.strftime("%b %Y"), "ym", True, "en"),
    "mm/YYYY": (lambda d: d.strftime("%m/%Y"), "ym", False, "es"),
    "Spanish long": (
        lambda d: f"{d.day} de {MONTHS['es'][d.month - 1]} de {d.year}",
        "ymd",
        False,
        "es",
    ),
}


def _expected(when: dt.date, parts: str, shift: int) -> dt.date:
    """The oracle: unwritten parts take the reference values the surrogate assumes."""
    if parts == "md":
        return dt.date(2000, when.month, when.day) + dt.timedelta(days=shift)
    if parts == "ym":
        return when.replace(day=15) + dt.timedelta(days=shift)
    return when + dt.timedelta(days=shift)


@settings(max_examples=80, deadline=None)
@given(
    when=st.dates(dt.date(1930, 1, 1), dt.date(2030, 12, 31)),
    shift=st.integers(30, 3 * 365).flatmap(lambda n: st.sampled_from((n, -n))),
    writer=st.sampled_from(sorted(DATE_WRITERS)),
)
def test_dates_keep_their_format_and_move_by_the_shift(
    when: dt.date, shift: int, writer: str
) -> None:
    write, parts, month_first, language = DATE_WRITERS[writer]
    small = [n for n in re.findall(r"\d+", write(when)) if len(n) < 4]
    # "15.10." or "March 15" do not show whether single digits get a zero: not an oracle case
    assume(not small or any(len(n) == 1 or n.startswith("0") for n in small))
    assume(not (writer == "Month d, Y" and when.month == 5))  # "May" reads as abbreviated
    moved = shift_date(write(when), shift, month_first=month_first, language=language)
    assert moved == write(_expected(when, parts, shift))


def test_a_year_alone_stays_a_year() -> None:
    assert shift_date("1992", 800, month_first=True, language="en") == "1994"
    assert shift_date("1992", -40, month_first=True, language="en") == "1991"


@pytest.mark.parametrize(
    ("original", "locale", "pattern"),
    [
        ("7/22", "en_US", r"1?\d/[1-3]?\d"),
        ("1992", "en_US", r"(19|20)\d\d"),
        ("19.3.", "de_DE", r"[1-3]?\d\.1?\d\."),
        ("2016-04-02", "es_ES", r"\d{4}-\d\d-\d\d"),
        ("March 3rd, 2015", "en_US", r"[A-Z][a-z]+ [1-3]?\d(st|nd|rd|th), \d{4}"),
        ("3 de marzo de 2016", "es_ES", r"[1-3]?\d de [a-z]+ de \d{4}"),
        ("02-MAR-2015", "en_US", r"\d\d-[A-Z]{3}-\d{4}"),
        ("10:30", "en_US", r"\d\d:\d\d"),
        ("Christmas", "en_US", r"Christmas"),
    ],
)
def test_date_surrogates_keep_the_shape_class(original: str, locale: str, pattern: str) -> None:
    for seed in range(5):
        surrogate = _draw("Date", original, _note(locale, seed))
        assert re.fullmatch(pattern, surrogate), (original, surrogate)
        assert surrogate != original or original == "Christmas"


def test_month_names_stay_in_the_notes_language() -> None:
    surrogate = _draw("FECHAS", "3 de marzo de 2016", _note("es_ES"))
    assert surrogate.split()[2] in MONTHS["es"]
    assert _draw("Date", "March 3, 2015", _note("en_US")).split()[0].lower() in MONTHS["en"]


def _case_class(word: str) -> str:
    letters = [c for c in word if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return "upper"
    if all(c.islower() for c in letters):
        return "lower"
    return "title"


_NAME_WORD = st.sampled_from(["john", "smith", "calvert", "garcía", "o'neil", "ann"])
_CASE = st.sampled_from([str.upper, str.lower, str.title])
_TITLE = st.sampled_from(["", "Dr.", "Mrs.", "Mr.", "Dra.", "Sr."])


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(_NAME_WORD, min_size=1, max_size=3),
    case=_CASE,
    title=_TITLE,
    label=st.sampled_from(["PTName", "HCPName", "RelativeProxyName", "NOMBRE_SUJETO_ASISTENCIA"]),
    locale=st.sampled_from(["en_US", "es_ES", "de_DE"]),
)
def test_names_keep_titles_word_count_and_case(
    words: list[str], case: Callable[[str], str], title: str, label: str, locale: str
) -> None:
    name_words = [case(w) for w in words]
    original = " ".join(([title] if title else []) + name_words)
    surrogate = _draw(label, original, _note(locale))
    if label == "RelativeProxyName" and original == original.lower():
        assert surrogate == original  # a relation word ("madre"), not written as a name
        return
    old, new = original.split(), surrogate.split()
    assert len(new) == len(old)
    if title:
        assert new[0] == title
    for before, after in zip(old[1 if title else 0 :], new[1 if title else 0 :], strict=True):
        assert _case_class(after) == _case_class(before), (original, surrogate)
        assert after.casefold() != before.casefold()


@pytest.mark.parametrize(
    ("label", "original", "kept"),
    [
        ("Hospital", "Mercy Hospital", ["Hospital"]),
        ("LOCATION_HOSPITAL", "St. Mary's Medical Center", ["St.", "Medical", "Center"]),
        ("HOSPITAL", "Hospital Universitario La Paz", ["Hospital", "Universitario"]),
        ("Hospital", "CALVERT MEMORIAL", ["MEMORIAL"]),
        ("INSTITUCION", "Hospital 12 de Octubre", ["Hospital", "de"]),
        ("INSTITUCION", "Facultad de Medicina, Universidad de Granada", ["Facultad", "de", "de"]),
    ],
)
def test_care_sites_keep_their_kind_words(label: str, original: str, kept: list[str]) -> None:
    assert label_family(label) == "care_site"
    surrogate = _draw(label, original, _note("en_US"))
    assert surrogate != original
    assert [w for w in surrogate.split() if w in kept] == kept
    assert len(surrogate.split()) == len(original.split())
    assert _case_class(surrogate) == _case_class(original)


@pytest.mark.parametrize("label", ["City", "Hospital", "PTName", "LOCATION"])
def test_upper_case_stays_upper_case(label: str) -> None:
    for seed in range(3):
        surrogate = _draw(label, "CALVERT", _note("en_US", seed))
        assert surrogate.isupper() and surrogate != "CALVERT"


def test_a_name_word_keeps_one_surrogate_within_a_note() -> None:
    text = "John Smith was seen. Mr. Smith and SMITH, JOHN agree."
    marks = ["John Smith", "Mr. Smith", "SMITH, JOHN"]
    spans, cursor = [], 0
    for surface in marks:
        start = text.index(surface, cursor)
        spans.append(Span(start=start, end=start + len(surface), label="PTName"))
        cursor = start + len(surface)
    doc = Document(id="n1", text=text, spans=tuple(spans))
    new, _ = surrogate_document(doc, Faker("en_US"), 13)
    full, titled, inverted = (new.surface(s) for s in new.spans)
    first, last = full.split()
    assert titled == f"Mr. {last}"
    assert inverted == f"{last.upper()}, {first.upper()}"


@pytest.mark.parametrize(
    ("original", "pattern"),
    [
        ("c/ del Abedul 5-7, 2º dcha", r"c/ del \w+ \d-\d, \dº dcha"),
        ("Calle Miguel Benitez 90", r"Calle \w+ \w+ \d\d"),
        ("221B BAKER STREET", r"\d{3}B [A-Z]+ STREET"),
    ],
)
def test_streets_keep_their_layout(original: str, pattern: str) -> None:
    surrogate = _draw("CALLE", original, _note("es_ES"))
    assert re.fullmatch(pattern, surrogate), surrogate
    assert surrogate != original


@pytest.mark.parametrize("word", ["madre", "primo materno", "hija"])
def test_relation_words_stay_and_relatives_names_change(word: str) -> None:
    assert _draw("FAMILIARES_SUJETO_ASISTENCIA", word, _note("es_ES")) == word
    assert _draw("FAMILIARES_SUJETO_ASISTENCIA", "María López", _note("es_ES")) != "María López"
