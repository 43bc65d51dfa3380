"""Surrogate providers, one small function per PII family, registered by label and keyword.

Order matters for keyword matching: more specific families (fax/phone, e-mail, ids) are
registered before broad ones (names), so ``NUMERO_TELEFONO`` is a phone, not an id.
"""

from __future__ import annotations

import random
import re

from faker import Faker

from site_agent.pseudonymise.surrogates import register_family, shape_preserving

_DATE = re.compile(r"^(\d{1,4})([/.\-])(\d{1,2})\2(\d{2,4})$")


@register_family("email", ("CORREO_ELECTRONICO", "EMAIL"), ("CORREO", "EMAIL", "MAIL"))
def email(surface: str, fake: Faker, rng: random.Random) -> str:
    return str(fake.email())


@register_family(
    "phone", ("NUMERO_TELEFONO", "NUMERO_FAX", "PHONE", "FAX"), ("TELEF", "PHONE", "FAX")
)
def phone(surface: str, fake: Faker, rng: random.Random) -> str:
    """Keep the site's number layout (spaces, prefixes) with fresh digits."""
    return shape_preserving(surface, fake, rng)


@register_family(
    "id", ("ID", "IDNUM", "MRN", "MEDICALRECORD"), ("ID_", "_ID", "NHC", "RECORD", "SSN")
)
def identifier(surface: str, fake: Faker, rng: random.Random) -> str:
    return shape_preserving(surface, fake, rng)


@register_family("date", ("FECHAS", "DATE", "DOB"), ("FECHA", "DATE"))
def date(surface: str, fake: Faker, rng: random.Random) -> str:
    """Numeric dates keep their separator and field widths; other forms get a locale date."""
    match = _DATE.match(surface.strip())
    if not match:
        return str(fake.date(pattern="%d/%m/%Y"))
    first, sep, month, last = match.groups()
    year_first = len(first) == 4
    year_width = len(first) if year_first else len(last)
    day_width = len(last) if year_first else len(first)
    day = f"{rng.randint(1, 28):0{day_width}d}"
    mon = f"{rng.randint(1, 12):0{len(month)}d}"
    year = str(rng.randint(1930, 2020))[-year_width:]
    return f"{year}{sep}{mon}{sep}{day}" if year_first else f"{day}{sep}{mon}{sep}{year}"


@register_family("age", ("EDAD_SUJETO_ASISTENCIA", "AGE"), ("EDAD", "AGE"))
def age(surface: str, fake: Faker, rng: random.Random) -> str:
    """Replace the number, keep the unit words (``70 años`` -> ``43 años``)."""
    if not re.search(r"\d", surface):
        return surface
    return re.sub(r"\d+", lambda m: str(rng.randint(1, 95)), surface, count=1)


@register_family("sex", ("SEXO_SUJETO_ASISTENCIA", "SEX", "GENDER"), ("SEXO", "GENDER"))
def sex(surface: str, fake: Faker, rng: random.Random) -> str:
    """Kept as is: not identifying alone, and a random swap contradicts grammatical gender."""
    return surface


@register_family("country", ("PAIS", "COUNTRY"), ("PAIS", "COUNTRY", "NATION"))
def country(surface: str, fake: Faker, rng: random.Random) -> str:
    return str(fake.country())


@register_family("street", ("CALLE", "STREET"), ("CALLE", "STREET", "ADDRESS"))
def street(surface: str, fake: Faker, rng: random.Random) -> str:
    return str(fake.street_address())


@register_family(
    "place",
    ("TERRITORIO", "LOCATION", "CITY", "LOC", "ZIP", "STATE"),
    ("TERRITOR", "CITY", "LOCAT"),
)
def place(surface: str, fake: Faker, rng: random.Random) -> str:
    """Postal codes keep their shape; place names become a locale city."""
    if re.fullmatch(r"[\d\s-]+", surface):
        return shape_preserving(surface, fake, rng)
    return str(fake.city())


@register_family(
    "care_site",
    ("HOSPITAL", "CENTRO_SALUD", "INSTITUCION", "ORGANIZATION", "ORG", "HOSP"),
    ("HOSPITAL", "CENTRO", "INSTITU", "CLINIC", "ORGANI"),
)
def care_site(surface: str, fake: Faker, rng: random.Random) -> str:
    """Keep the site's first word when it names the kind of place (Hospital, Clínica...)."""
    first = surface.split()[0] if surface.split() else ""
    kind = first if first[:1].isupper() and first.lower().startswith(_CARE_WORDS) else "Hospital"
    return f"{kind} {fake.last_name()}"


_CARE_WORDS = ("hosp", "clín", "clin", "centro", "instit", "st", "medical", "fundaci", "complejo")


@register_family("profession", ("PROFESION", "PROFESSION", "OCCUPATION"), ("PROFES", "OCCUP"))
def profession(surface: str, fake: Faker, rng: random.Random) -> str:
    return str(fake.job()).lower() if surface[:1].islower() else str(fake.job())


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
def name(surface: str, fake: Faker, rng: random.Random) -> str:
    """As many name words as the original: one first name, then surnames."""
    words = surface.split()
    if not words:
        return surface
    if len(words) == 1:
        return str(fake.first_name() if rng.random() < 0.5 else fake.last_name())
    return " ".join([str(fake.first_name())] + [str(fake.last_name()) for _ in words[1:]])
