"""Which surrogate provider replaces which label: a registry, not an if/elif chain.

A provider turns one original surface into a realistic surrogate of the same kind and shape.
Labels resolve to a family through the shared label-family table (``shared.label_families``,
also read by ``validate``'s person-label check); labels of no family, or of a family without a
provider, get the shape-preserving fallback, which keeps punctuation and layout but replaces
every digit and letter.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field

from faker import Faker

from shared.label_families import label_family
from shared.registry import Registry


@dataclass(frozen=True)
class NoteContext:
    """What a provider may draw from for one note: faker, a seeded rng, the note's shifts.

    Every date in a note moves by the same ``date_shift_days`` so that intervals (admission
    to discharge) stay true while the dates change; every age moves by ``age_shift_years``,
    small enough that ages still fit the note's story. Dates keep their format; which of two
    small numbers is the month follows ``month_first`` (US notes), month names stay in
    ``language``. ``name_words`` remembers each real name word's surrogate, so ``John Smith``
    and a later ``Mr. Smith`` keep one surname.
    """

    fake: Faker
    rng: random.Random
    date_shift_days: int
    age_shift_years: int = 0
    month_first: bool = False
    language: str = "es"
    name_words: dict[str, str] = field(default_factory=dict)


Provider = Callable[[str, NoteContext], str]


@dataclass(frozen=True)
class SurrogateFamily:
    """One kind of PII (names, dates, phones...) and the provider that replaces it."""

    name: str
    provider: Provider


def _builtin_providers() -> None:
    from site_agent.pseudonymise import providers  # noqa: F401  (registers on import)


PROVIDERS: Registry[Provider] = Registry("surrogate family", builtins=_builtin_providers)
"""Family name (shared.label_families) -> the provider that replaces its labels."""


def register_family(name: str) -> Callable[[Provider], Provider]:
    """Decorator: ``provider`` replaces the labels of family ``name`` (shared.label_families)."""
    return PROVIDERS.register(name)


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


def same_case(original: str, surrogate: str) -> str:
    """``surrogate`` in the letter case of ``original``: upper stays upper, lower stays lower."""
    letters = [c for c in original if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return surrogate.upper()
    if letters and all(c.islower() for c in letters):
        return surrogate.lower()
    return surrogate


FALLBACK = SurrogateFamily("shape", shape_preserving)


def family_for(label: str) -> SurrogateFamily:
    """The family of ``label`` in the shared label-family table; unknown labels keep shape."""
    name = label_family(label)
    if name is None or name not in PROVIDERS:
        return FALLBACK
    return SurrogateFamily(name, PROVIDERS.get(name))


def families() -> tuple[SurrogateFamily, ...]:
    return tuple(SurrogateFamily(name, provider) for name, provider in PROVIDERS.entries().items())
