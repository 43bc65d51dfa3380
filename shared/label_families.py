"""One table of PII label families, read by everything that must know what a label denotes.

The corpus diagnostics ask which labels name persons ("PII documents without a person
label"); pseudonymisation asks which kind of surrogate a label gets. Both read this table so
that a label such as i2b2's ``HCPName`` cannot be a name to one and unknown to the other.

A label resolves by exact name first (case-insensitive: ``NOMBRE_SUJETO_ASISTENCIA``,
``PTName``, ``PER``), then by the first family whose keyword occurs in it (``..._TELEFONO``,
``LOCATION_HOSPITAL``). Families are listed most specific first, so a hospital that is also a
location is a care site, and ``ID_TITULACION_PERSONAL_SANITARIO`` is an identifier, not a
person. Persons are two families: ``name`` and ``relative`` (MEDDOCAN's
``FAMILIARES_SUJETO_ASISTENCIA`` marks names and relation words such as "madre", which
pseudonymisation keeps). Labels that match nothing (``OTROS_SUJETO_ASISTENCIA``, ``MISC``)
have no family.
"""

from __future__ import annotations

from dataclasses import dataclass

PERSON_FAMILIES = frozenset({"name", "relative"})  # relatives: names or words ("madre")
QUASI_IDENTIFIER_FAMILIES = frozenset({"date", "age", "sex", "country", "place", "profession"})
"""Kinds of PII shared by many people: a date, an age, a sex, a country, a town or a
profession does not point at one person on its own, only next to more of the record."""


@dataclass(frozen=True)
class LabelFamily:
    """One kind of PII and the label names (exact, then keywords) that denote it."""

    name: str
    labels: frozenset[str]
    keywords: tuple[str, ...] = ()


def _family(name: str, labels: tuple[str, ...], keywords: tuple[str, ...] = ()) -> LabelFamily:
    return LabelFamily(name, frozenset(label.upper() for label in labels), keywords)


# MEDDOCAN labels (shared/label_schemes), i2b2 2006/2014 labels and their variants
# (HCPName, PTName, RelativeProxyName...), and the coarse PER/ORG/LOC/TIME/ID scheme.
LABEL_FAMILIES: tuple[LabelFamily, ...] = (
    _family("email", ("CORREO_ELECTRONICO", "EMAIL", "E-MAIL"), ("CORREO", "EMAIL", "MAIL")),
    _family(
        "phone",
        ("NUMERO_TELEFONO", "NUMERO_FAX", "PHONE", "FAX", "TELEPHONE", "PHONE_NUMBER"),
        ("TELEF", "PHONE", "FAX"),
    ),
    _family("url", ("URL", "URL_WEB", "WEB", "IPADDR", "IP_ADDRESS", "IP"), ("URL", "IPADD")),
    _family(
        "id",
        (
            "ID",
            "IDNUM",
            "MRN",
            "MEDICALRECORD",
            "HEALTHPLAN",
            "ACCOUNT",
            "LICENSE",
            "DEVICE",
            "BIOID",
            "VEHICLE",
            "SSN",
            "USERNAME",
            "ID_SUJETO_ASISTENCIA",
        ),
        ("ID_", "_ID", "NHC", "RECORD", "SSN", "LICEN", "ACCOUNT", "HEALTHPLAN"),
    ),
    _family("date", ("FECHAS", "FECHA", "DATE", "DOB", "TIME"), ("FECHA", "DATE")),
    _family("age", ("EDAD_SUJETO_ASISTENCIA", "EDAD", "AGE"), ("EDAD", "AGE")),
    _family("sex", ("SEXO_SUJETO_ASISTENCIA", "SEXO", "SEX", "GENDER"), ("SEXO", "GENDER")),
    _family(
        "care_site",
        ("HOSPITAL", "CENTRO_SALUD", "INSTITUCION", "ORGANIZATION", "ORG", "HOSP", "COMPANY"),
        ("HOSPITAL", "CENTRO", "INSTITU", "CLINIC", "ORGANI", "COMPANY"),
    ),
    _family("country", ("PAIS", "COUNTRY", "NATIONALITY"), ("PAIS", "COUNTRY", "NATION")),
    _family("street", ("CALLE", "STREET", "ADDRESS"), ("CALLE", "STREET", "ADDRESS")),
    _family(
        "place",
        ("TERRITORIO", "LOCATION", "CITY", "LOC", "ZIP", "STATE", "LOCATION_OTHER"),
        ("TERRITOR", "CITY", "LOCAT", "ZIP"),
    ),
    _family("profession", ("PROFESION", "PROFESSION", "OCCUPATION"), ("PROFES", "OCCUP")),
    _family(
        "relative",
        ("FAMILIARES_SUJETO_ASISTENCIA", "RELATIVEPROXYNAME", "RELATIVE", "FAMILY"),
        ("FAMILIAR", "RELATIVE", "PROXY"),
    ),
    _family(
        "name",
        (
            "NOMBRE_SUJETO_ASISTENCIA",
            "NOMBRE_PERSONAL_SANITARIO",
            "PER",
            "PERSON",
            "NAME",
            "PATIENT",
            "DOCTOR",
            "HCPNAME",
            "PTNAME",
        ),
        ("NOMBRE", "NAME", "PERSON", "PATIENT", "DOCTOR"),
    ),
)


def label_words(label: str) -> frozenset[str]:
    """The words of ``label``, upper case: split at anything but a letter and where a lower
    case letter meets an upper case one (``PatientName``, ``patient-name`` and
    ``PATIENT_NAME`` all give PATIENT and NAME; ``Fecha_Día`` gives FECHA and DÍA)."""
    pieces: list[str] = []
    word = ""
    for previous, char in zip(" " + label, label, strict=False):
        if not char.isalpha() or (previous.islower() and char.isupper()):
            pieces.append(word)
            word = ""
        if char.isalpha():
            word += char
    pieces.append(word)
    return frozenset(piece.upper() for piece in pieces if piece)


def label_family(label: str) -> str | None:
    """The family of ``label`` (``"name"``, ``"date"``, ``"care_site"``...), or None."""
    key = label.upper()
    for family in LABEL_FAMILIES:
        if key in family.labels:
            return family.name
    for family in LABEL_FAMILIES:
        if any(word in key for word in family.keywords):
            return family.name
    return None


def is_quasi_identifier(label: str) -> bool:
    """Whether ``label`` is of a kind shared by many people (``QUASI_IDENTIFIER_FAMILIES``)."""
    return label_family(label) in QUASI_IDENTIFIER_FAMILIES


def is_person_label(label: str) -> bool:
    """Whether ``label`` names persons (patients, staff, relatives)."""
    return label_family(label) in PERSON_FAMILIES
