"""Surrogate mode: every gold PII span becomes a realistic surrogate of the same label.

Within one document the same (kind, surface) always gets the same surrogate, so a patient
keeps one name throughout a note, and every date moves by one per-note shift, so intervals
between dates stay true. Surrogates keep the original's format and letter case. Spans are
re-offset exactly: in the new document ``text[span.start:span.end]`` is the surrogate.
"""

from __future__ import annotations

import hashlib
import random

from faker import Faker

from protocol import Document, Span
from site_agent.pseudonymise.records import SurrogateRecord
from site_agent.pseudonymise.surrogates import (
    NoteContext,
    family_for,
    same_case,
    shape_preserving,
)

_RETRIES = 5
MIN_SHIFT_DAYS, MAX_SHIFT_DAYS = 30, 3 * 365


def document_seed(seed: int, doc_id: str) -> int:
    """A per-document seed independent of corpus order (so one note re-runs identically)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{doc_id}".encode()).digest()[:8], "big")


MONTH_FIRST_LOCALES = frozenset({"en_US", "en_PH", "es_US"})
# families whose provider may keep a surface on purpose (sex; date words; relation words)
MAY_KEEP = frozenset({"sex", "date", "relative"})


def _draw(label: str, surface: str, note: NoteContext) -> str:
    family = family_for(label)
    candidate = surface
    for _ in range(_RETRIES):
        candidate = same_case(surface, family.provider(surface, note))
        if candidate.strip() and (candidate != surface or family.name in MAY_KEEP):
            return candidate
    return candidate if candidate.strip() else shape_preserving(surface, note)


def note_context(fake: Faker, rng: random.Random, month_first: bool | None = None) -> NoteContext:
    """The per-note draws: date and age shifts; month names from the locale, and the date
    order given (the corpus's own, ``dates.corpus_month_first``) or else the locale's."""
    locale = str(fake.locales[0]) if fake.locales else "es_ES"
    return NoteContext(
        fake=fake,
        rng=rng,
        date_shift_days=rng.choice((-1, 1)) * rng.randint(MIN_SHIFT_DAYS, MAX_SHIFT_DAYS),
        age_shift_years=rng.choice((-2, -1, 1, 2)),
        month_first=locale in MONTH_FIRST_LOCALES if month_first is None else month_first,
        language=locale.split("_")[0],
    )


def surrogate_document(
    doc: Document, fake: Faker, seed: int, month_first: bool | None = None
) -> tuple[Document, list[SurrogateRecord]]:
    """The document with every span replaced, and the original -> surrogate pairs used;
    ``month_first`` is the date order of the corpus (None: the locale's)."""
    rng = random.Random(document_seed(seed, doc.id))
    fake.seed_instance(document_seed(seed + 1, doc.id))
    note = note_context(fake, rng, month_first)
    chosen: dict[tuple[str, str], str] = {}
    records: list[SurrogateRecord] = []
    pieces: list[str] = []
    spans: list[Span] = []
    cursor = 0
    length = 0
    for span in doc.spans:
        surface = doc.text[span.start : span.end]
        key = (family_for(span.label).name, surface)
        if key not in chosen:
            chosen[key] = _draw(span.label, surface, note)
            records.append(
                SurrogateRecord(
                    doc_id=doc.id, label=span.label, original=surface, surrogate=chosen[key]
                )
            )
        surrogate = chosen[key]
        before = doc.text[cursor : span.start]
        pieces.extend((before, surrogate))
        start = length + len(before)
        spans.append(Span(start=start, end=start + len(surrogate), label=span.label))
        length = start + len(surrogate)
        cursor = span.end
    pieces.append(doc.text[cursor:])
    new = doc.model_dump()
    new.update(text="".join(pieces), spans=[s.model_dump() for s in spans])
    return Document.model_validate(new), records
