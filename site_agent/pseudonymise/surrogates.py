"""Which surrogate provider replaces which label: a registry, not an if/elif chain.

A provider turns one original surface into a realistic surrogate of the same kind. Labels
resolve to a provider by exact name first (``NOMBRE_SUJETO_ASISTENCIA``, ``PER``), then by a
keyword in the label (``..._TELEFONO``, ``PHONE``), and otherwise to the shape-preserving
fallback, which keeps punctuation and layout but replaces every digit and letter.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from faker import Faker


@dataclass(frozen=True)
class NoteContext:
    """What a provider may draw from for one note: faker, a seeded rng, the note's shifts.

    Every date in a note moves by the same ``date_shift_days`` so that intervals (admission
    to discharge) stay true while the dates change; every age moves by ``age_shift_years``,
    small enough that ages still fit the note's story.
    """

    fake: Faker
    rng: random.Random
    date_shift_days: int
    age_shift_years: int = 0


Provider = Callable[[str, NoteContext], str]


@dataclass(frozen=True)
class SurrogateFamily:
    """One kind of PII (names, dates, phones...) and the labels that belong to it."""

    name: str
    provider: Provider
    labels: frozenset[str]
    keywords: tuple[str, ...]


_FAMILIES: list[SurrogateFamily] = []


def register_family(
    name: str, labels: tuple[str, ...] = (), keywords: tuple[str, ...] = ()
) -> Callable[[Provider], Provider]:
    """Decorator: register ``provider`` for the given exact labels and label keywords."""

    def add(provider: Provider) -> Provider:
        _FAMILIES.append(
            SurrogateFamily(
                name=name,
                provider=provider,
                labels=frozenset(label.upper() for label in labels),
                keywords=tuple(k.upper() for k in keywords),
            )
        )
        return provider

    return add


def shape_preserving(surface: str, note: NoteContext) -> str:
    """Fallback: digits -> random digits, letters -> random letters of the same case."""
    rng = note.rng
    out = []
    for char in surface:
        if char.isdigit():
            out.append(rng.choice(string.digits))
        elif char.isalpha():
            pool = string.ascii_uppercase if char.isupper() else string.ascii_lowercase
            out.append(rng.choice(pool))
        else:
            out.append(char)
    return "".join(out)


FALLBACK = SurrogateFamily("shape", shape_preserving, frozenset(), ())


def family_for(label: str) -> SurrogateFamily:
    """The family that owns ``label``: exact label, then first matching keyword, then shape."""
    _ensure_providers()
    key = label.upper()
    for family in _FAMILIES:
        if key in family.labels:
            return family
    for family in _FAMILIES:
        if any(word in key for word in family.keywords):
            return family
    return FALLBACK


def families() -> tuple[SurrogateFamily, ...]:
    _ensure_providers()
    return tuple(_FAMILIES)


def _ensure_providers() -> None:
    if not _FAMILIES:
        from site_agent.pseudonymise import providers  # noqa: F401  (registers on import)
