"""Surrogate providers, one small function per PII family, registered by label and keyword.

Order matters for keyword matching: more specific families (fax/phone, e-mail, ids) are
registered before broad ones (names), so ``NUMERO_TELEFONO`` is a phone, not an id.
"""

from __future__ import annotations

import datetime as dt
import re

from site_agent.pseudonymise.surrogates import NoteContext, register_family, shape_preserving

_DATE = re.compile(r"^(\d{1,4})([/.\-])(\d{1,2})\2(\d{2,4})$")


@register_family("email", ("CORREO_ELECTRONICO", "EMAIL"), ("CORREO", "EMAIL", "MAIL"))
def email(surface: str, note: NoteContext) -> str:
    return str(note.fake.email())


@register_family(
    "phone", ("NUMERO_TELEFONO", "NUMERO_FAX", "PHONE", "FAX"), ("TELEF", "PHONE", "FAX")
)
def phone(surface: str, note: NoteContext) -> str:
    """Keep the site's number layout (spaces, prefixes) with fresh digits."""
    return shape_preserving(surface, note)


@register_family(
    "id", ("ID", "IDNUM", "MRN", "MEDICALRECORD"), ("ID_", "_ID", "NHC", "RECORD", "SSN")
)
def identifier(surface: str, note: NoteContext) -> str:
    return shape_preserving(surface, note)


@register_family("date", ("FECHAS", "DATE", "DOB"), ("FECHA", "DATE"))
def date(surface: str, note: NoteContext) -> str:
    """Numeric dates move by the note's shift, keeping their layout; others get a new date."""
    match = _DATE.match(surface.strip())
    if not match:
        return str(note.fake.date(pattern="%d/%m/%Y"))
    first, sep, month, last = match.groups()
    year_first = len(first) == 4
    day, year = (last, first) if year_first else (first, last)
    try:
        when = dt.date(_full_year(year), int(month), int(day))
    except ValueError:
        return shape_preserving(surface, note)
    moved = when + dt.timedelta(days=note.date_shift_days)
    parts = (
        f"{moved.day:0{len(day)}d}",
        f"{moved.month:0{len(month)}d}",
        f"{moved.year:04d}"[-len(year) :],
    )
    out = (parts[2], parts[1], parts[0]) if year_first else parts
    return sep.join(out)


def _full_year(text: str) -> int:
    """Two-digit years: 00-29 are 20xx, the rest 19xx."""
    value = int(text)
    if len(text) > 2:
        return value
    return 2000 + value if value < 30 else 1900 + value


@register_family("age", ("EDAD_SUJETO_ASISTENCIA", "AGE"), ("EDAD", "AGE"))
def age(surface: str, note: NoteContext) -> str:
    """Move the number by the note's age shift, keep the unit words (``70 años``)."""
    if not re.search(r"\d", surface):
        return surface
    return re.sub(
        r"\d+", lambda m: str(max(0, int(m.group()) + note.age_shift_years)), surface, count=1
    )


@register_family("sex", ("SEXO_SUJETO_ASISTENCIA", "SEX", "GENDER"), ("SEXO", "GENDER"))
def sex(surface: str, note: NoteContext) -> str:
    """Kept as is: not identifying alone, and a random swap contradicts grammatical gender."""
    return surface


@register_family("country", ("PAIS", "COUNTRY"), ("PAIS", "COUNTRY", "NATION"))
def country(surface: str, note: NoteContext) -> str:
    return str(note.fake.country())


@register_family("street", ("CALLE", "STREET"), ("CALLE", "STREET", "ADDRESS"))
def street(surface: str, note: NoteContext) -> str:
    return str(note.fake.street_address())


@register_family(
    "place",
    ("TERRITORIO", "LOCATION", "CITY", "LOC", "ZIP", "STATE"),
    ("TERRITOR", "CITY", "LOCAT"),
)
def place(surface: str, note: NoteContext) -> str:
    """Postal codes keep their shape; place names become a locale city."""
    if re.fullmatch(r"[\d\s-]+", surface):
        return shape_preserving(surface, note)
    return str(note.fake.city())


@register_family(
    "care_site",
    ("HOSPITAL", "CENTRO_SALUD", "INSTITUCION", "ORGANIZATION", "ORG", "HOSP"),
    ("HOSPITAL", "CENTRO", "INSTITU", "CLINIC", "ORGANI"),
)
def care_site(surface: str, note: NoteContext) -> str:
    """Keep the site's first word when it names the kind of place (Hospital, Clínica...)."""
    first = surface.split()[0] if surface.split() else ""
    kind = first if first[:1].isupper() and first.lower().startswith(_CARE_WORDS) else "Hospital"
    return f"{kind} {note.fake.last_name()}"


_CARE_WORDS = ("hosp", "clín", "clin", "centro", "instit", "st", "medical", "fundaci", "complejo")


@register_family("profession", ("PROFESION", "PROFESSION", "OCCUPATION"), ("PROFES", "OCCUP"))
def profession(surface: str, note: NoteContext) -> str:
    return str(note.fake.job()).lower() if surface[:1].islower() else str(note.fake.job())


@register_family(
    "name",
    (
        "NOMBRE_SUJETO_ASISTENCIA",
        "NOMBRE_PERSONAL_SANITARIO",
        "FAMILIARES_SUJETO_ASISTENCIA",
        "PER",
        "PERSON",
        "NAME",
        "PATIENT",
        "DOCTOR",
    ),
    ("NOMBRE", "NAME", "PERSON", "PATIENT", "DOCTOR", "FAMILIAR"),
)
def name(surface: str, note: NoteContext) -> str:
    """As many name words as the original: one first name, then surnames."""
    words = surface.split()
    if not words:
        return surface
    if len(words) == 1:
        return str(note.fake.first_name() if note.rng.random() < 0.5 else note.fake.last_name())
    return " ".join([str(note.fake.first_name())] + [str(note.fake.last_name()) for _ in words[1:]])
