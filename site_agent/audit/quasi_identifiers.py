"""Quasi-identifiers: real patients' details that point at them together, or alone when rare.

A reworded note can carry one real patient's date of birth, age and town with the name
changed: no 10-word run of the real note survives (the n-gram rules pass) and none of those
strings is "specific" (the PII echo counts it, never drops it). Each is shared by many
patients; together, or when only one real note has it, they point at one record. So a
synthetic note is flagged when it holds

- **together**: ``min_together`` (default 2) or more gold surfaces that are gold mentions of
  one and the same real note (a date and a town, an age and a date ...), or
- **rare** (off by default: ``rare_max_notes = 0``): a gold surface of ``rare_min_chars`` or
  more characters whose words occur in the text of at most ``rare_max_notes`` real notes. On
  MEDDOCAN, ``rare_max_notes = 1`` flagged over half of the notes of *other* patients
  (postal codes, month-and-year dates, first names that one training note happens to hold;
  ``benchmarks/quasi_identifier_drops.py``), so it is a setting, not the default.

With ``labels = "quasi"`` (default) only details shared by many people are searched (dates,
ages, sex, countries, towns, professions: ``shared/label_families.py``); names, ids, e-mails
and streets are the PII echo's. A surface whose words occur in the text of many real notes
(more than ``max_document_fraction`` of them, and of more than two and more than
``rare_max_notes + 1``: "Madrid", "varón", "60 años" in a large corpus) is common and never
counts. Matching is the PII echo's
(``site_agent/privacy/surfaces.py``): whole words, case, punctuation and spacing ignored, so
"12/03/1961" matches "12-03-1961". Counts only are reported, never the strings.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocol import Corpus
from shared.label_families import is_quasi_identifier
from site_agent.audit.context import AuditContext, SyntheticChunk
from site_agent.audit.ngrams_found import NgramsFound
from site_agent.audit.policy import QuasiIdentifierSettings
from site_agent.audit.registry import Reread, register_measure
from site_agent.audit.surface_hits import SurfaceHits
from site_agent.privacy.surfaces import SurfaceMatcher, has_words, surface_keys

COMMON_FLOOR = 2  # a detail in the text of two real notes is never common


@dataclass(frozen=True)
class RealSide:
    """The searched surfaces (automaton keys), the real notes each is a gold mention of, and
    which are rare on their own."""

    keys: tuple[str, ...]
    notes: tuple[frozenset[int], ...]
    rare: np.ndarray
    n_common: int


def real_side(real: Corpus, settings: QuasiIdentifierSettings) -> RealSide:
    """Every gold surface long enough to search, grouped by its words; common ones left out."""
    ignored = set(settings.ignore_labels)
    raws: list[str] = []
    owners: list[int] = []
    for index, doc in enumerate(real.documents):
        for span in doc.spans:
            raw = doc.text[span.start : span.end]
            if (
                span.label not in ignored
                and len(raw.strip()) >= settings.min_chars
                and (settings.labels == "all" or is_quasi_identifier(span.label))
            ):
                raws.append(raw)
                owners.append(index)
    notes: dict[str, set[int]] = defaultdict(set)
    longest: dict[str, int] = defaultdict(int)
    for raw, key, owner in zip(raws, surface_keys(raws), owners, strict=True):
        if has_words(key):
            notes[key].add(owner)
            longest[key] = max(longest[key], len(raw.strip()))
    keys = list(notes)
    docs, found = SurfaceMatcher.from_keys(keys).match(real.documents)
    width = max(len(keys), 1)
    in_text = np.bincount(np.unique(docs * width + found) % width, minlength=len(keys))
    limit = max(
        settings.rare_max_notes + 1,
        COMMON_FLOOR,
        math.floor(settings.max_document_fraction * len(real)),
    )
    searched = [i for i in range(len(keys)) if in_text[i] <= limit]
    rare = np.array(
        [
            in_text[i] <= settings.rare_max_notes and longest[keys[i]] >= settings.rare_min_chars
            for i in searched
        ],
        dtype=bool,
    )
    return RealSide(
        keys=tuple(keys[i] for i in searched),
        notes=tuple(frozenset(notes[keys[i]]) for i in searched),
        rare=rare,
        n_common=len(keys) - len(searched),
    )


@dataclass(frozen=True)
class QuasiIdentifierResult:
    """Per synthetic note: flagged for a rare surface, and for surfaces found together."""

    rare: np.ndarray
    together: np.ndarray
    side: RealSide
    settings: QuasiIdentifierSettings

    @property
    def flagged(self) -> np.ndarray:
        return self.rare | self.together

    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        return {
            "surfaces_searched": len(self.side.keys),
            "common_surfaces": self.side.n_common,
            "rare_surfaces": int(self.side.rare.sum()),
            "min_together": self.settings.min_together,
            "rare_max_notes": self.settings.rare_max_notes,
            "documents": int((self.flagged & kept).sum()),
            "documents_rare": int((self.rare & kept).sum()),
            "documents_together": int((self.together & kept).sum()),
        }


def flag_notes(
    side: RealSide, docs: np.ndarray, keys: np.ndarray, n_docs: int, min_together: int
) -> tuple[np.ndarray, np.ndarray]:
    """(rare, together) per synthetic note from its surface occurrences ``docs``/``keys``."""
    rare = np.zeros(n_docs, dtype=bool)
    together = np.zeros(n_docs, dtype=bool)
    if len(keys):
        rare[docs[side.rare[keys]]] = True
    found: dict[int, set[int]] = defaultdict(set)
    for doc, key in zip(docs.tolist(), keys.tolist(), strict=True):
        found[doc].add(key)
    for doc, surfaces in found.items():
        if len(surfaces) < min_together:
            continue
        shared = Counter(note for key in surfaces for note in side.notes[key])
        together[doc] = bool(shared) and max(shared.values()) >= min_together
    return rare, together


class _QuasiIdentifiers:
    """The real side built once; each chunk of synthetic notes adds its surface matches."""

    def __init__(self, context: AuditContext) -> None:
        self.settings = context.policy.quasi_identifiers
        self.side = real_side(context.real, self.settings)
        self.hits = SurfaceHits(SurfaceMatcher.from_keys(self.side.keys))

    def add(self, chunk: SyntheticChunk) -> None:
        self.hits.add(chunk)

    def finish(self, reread: Reread) -> QuasiIdentifierResult:
        docs, keys = self.hits.arrays()
        rare, together = flag_notes(
            self.side, docs, keys, self.hits.n_docs, self.settings.min_together
        )
        return QuasiIdentifierResult(rare, together, self.side, self.settings)


QUASI_IDENTIFIER_FIGURES = (
    "surfaces_searched",
    "common_surfaces",
    "rare_surfaces",
    "min_together",
    "rare_max_notes",
    "documents",
    "documents_rare",
    "documents_together",
)


@register_measure("quasi_identifiers", QUASI_IDENTIFIER_FIGURES)
def measure_quasi_identifiers(context: AuditContext, found: NgramsFound) -> _QuasiIdentifiers:
    return _QuasiIdentifiers(context)
