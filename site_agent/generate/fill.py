"""The local filler (seed 002): placeholders become surrogates, spans exact by construction.

Filling happens in two passes over one note, both left to right with offsets counted as the
text is built. First every placeholder takes a *shape*: a surface of its label from the
pseudonymised training notes (a date layout, a name's word count, a phone's digit groups),
distinct placeholders of one label taking distinct shapes where the pool allows. Then the
site's surrogate providers (``site_agent.pseudonymise``, the same ones that pseudonymise the
training split) replace every shape with a fresh surrogate: per locale, one per placeholder
and note, dates moved by one shift per note and written in the training notes' own date order
(``pseudonymise.dates.corpus_month_first`` over the shapes). Nothing here calls the generator.

A fresh surrogate can still equal a site identifier by chance: faker's common Spanish names
are the names of real patients too, and the providers that made the pseudonymised copy draw
from the same pools. The privacy audit cannot tell such a collision from a copy and drops the
note (on MEDDOCAN, 35 of 61 template notes; issue 16). So the filler is given the site's
*forbidden* surfaces (the real training notes' gold strings and the surrogates of the
pseudonymised copy) and fills a note again, with fresh shapes and surrogates, while one of its
filled spans contains one of them as whole words (the audit's matching, ``privacy.surfaces``).

A random value can also share *part* of a real one in its context: a filled date with the
day and month of a real birth date after the same form header is a real n-gram holding most
of an identifier, and the audit's sensitive n-gram filter drops the note (on MEDDOCAN at 96
LoRA steps, 131 of 235 template notes, nearly all for dates and sex values). Given the real
notes' identifying n-grams (``privacy.identifying``), the filler counts those too and fills
again while it finds one. Each note is filled at most ``attempts`` times and keeps the fill
with the fewest of both; what is left is counted for the audit, which still decides.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from protocol import Corpus, Document, Span
from site_agent.generate.placeholders import Template
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.privacy.surfaces import SurfaceMatcher
from site_agent.pseudonymise.corpus import surrogate_corpus
from site_agent.pseudonymise.dates import corpus_month_first
from site_agent.pseudonymise.settings import PseudonymiseSettings
from site_agent.pseudonymise.surrogates import family_for

Shapes = dict[str, tuple[str, ...]]

# on MEDDOCAN (96 LoRA steps), 8 fills left 63 of 235 notes with an identifying n-gram, 32 left 27
FILL_ATTEMPTS = 32
# the PII echo's default min_chars (audit PiiEchoSettings; a test keeps the two equal): it
# never searches shorter surfaces
MIN_FORBIDDEN_CHARS = 4
REFILL_SEED_STEP = 1_000_003  # attempt k fills with seed + k * step (attempt 0: the seed)


@dataclass(frozen=True)
class FilledNote:
    """A filled template and the surrogate that each placeholder (label, number) became."""

    document: Document
    surrogates: dict[tuple[str, int], str]
    attempts: int = 1  # the fill kept was the attempts-th
    collisions: int = 0  # filled spans that still contain a forbidden surface
    identifying_ngrams: int = 0  # identifying real n-grams the note still shares

    @property
    def risk(self) -> int:
        return self.collisions + self.identifying_ngrams


@dataclass(frozen=True)
class CollisionGuard:
    """Finds forbidden surfaces inside filled spans, as whole words (case and punctuation
    aside), with the audit's automaton; and, given the real notes' identifying n-grams, the
    ones a filled note shares."""

    matcher: SurfaceMatcher
    ngrams: IdentifyingIndex | None = None

    @classmethod
    def build(
        cls, forbidden: Sequence[str], ngrams: IdentifyingIndex | None = None
    ) -> CollisionGuard:
        kept = [f for f in forbidden if len(f.strip()) >= MIN_FORBIDDEN_CHARS]
        return cls(SurfaceMatcher.build(kept), ngrams)

    def collisions(self, doc: Document) -> int:
        """How many of ``doc``'s spans contain a forbidden surface."""
        pieces = [Document(id=str(i), text=doc.surface(s)) for i, s in enumerate(doc.spans)]
        hit_spans, _ = self.matcher.match(pieces)
        return len(np.unique(hit_spans))

    def checked(self, notes: Sequence[FilledNote]) -> list[FilledNote]:
        """The notes with their collisions and identifying n-grams counted."""
        shared = (
            self.ngrams.hits([n.document for n in notes])
            if self.ngrams is not None
            else np.zeros(len(notes), dtype=np.int64)
        )
        return [
            replace(n, collisions=self.collisions(n.document), identifying_ngrams=int(k))
            for n, k in zip(notes, shared, strict=True)
        ]


def shape_pool(train: Corpus) -> Shapes:
    """Per label, the distinct surfaces of the training notes, in order of appearance."""
    pool: dict[str, dict[str, None]] = {}
    for doc in train.documents:
        for span in doc.spans:
            pool.setdefault(span.label, {})[doc.surface(span)] = None
    return {label: tuple(surfaces) for label, surfaces in pool.items()}


def _shapes_for(template: Template, pool: Shapes, rng: random.Random) -> dict[tuple[str, int], str]:
    """One shape per placeholder key; distinct keys of a label get distinct shapes if possible."""
    chosen: dict[tuple[str, int], str] = {}
    for label in dict.fromkeys(p.label for p in template.placeholders):
        keys = list(dict.fromkeys(p.key for p in template.placeholders if p.label == label))
        options = list(pool[label])
        rng.shuffle(options)
        for index, key in enumerate(keys):
            chosen[key] = options[index % len(options)]
    return chosen


def shaped_document(
    doc_id: str, template: Template, shapes: dict[tuple[str, int], str]
) -> Document:
    """The template with each placeholder replaced by its shape, spans recorded as it grows."""
    pieces: list[str] = []
    spans: list[Span] = []
    cursor = length = 0
    for placeholder in template.placeholders:
        before = template.text[cursor : placeholder.start]
        surface = shapes[placeholder.key]
        start = length + len(before)
        pieces += [before, surface]
        spans.append(Span(start=start, end=start + len(surface), label=placeholder.label))
        length = start + len(surface)
        cursor = placeholder.end
    pieces.append(template.text[cursor:])
    return Document(id=doc_id, text="".join(pieces), spans=tuple(spans))


def _fill_once(
    templates: Sequence[tuple[str, Template]],
    pool: Shapes,
    surrogates: PseudonymiseSettings,
    seed: int,
    attempt: int,
    month_first: bool | None,
) -> list[FilledNote]:
    shaped: list[Document] = []
    keys: list[list[tuple[str, int]]] = []
    for doc_id, template in templates:
        rng_key = f"{seed}:{doc_id}" if attempt == 0 else f"{seed}:{doc_id}:{attempt}"
        shapes = _shapes_for(template, pool, random.Random(rng_key))
        shaped.append(shaped_document(doc_id, template, shapes))
        keys.append([p.key for p in template.placeholders])
    settings = surrogates.model_copy(update={"seed": seed + attempt * REFILL_SEED_STEP})
    shaped_corpus = Corpus(documents=tuple(shaped))
    filled = surrogate_corpus(shaped_corpus, settings, month_first).corpus.documents
    notes: list[FilledNote] = []
    for doc, doc_keys in zip(filled, keys, strict=True):
        made = {key: doc.surface(span) for key, span in zip(doc_keys, doc.spans, strict=True)}
        notes.append(FilledNote(document=doc, surrogates=made, attempts=attempt + 1))
    return notes


def fill_templates(
    templates: Sequence[tuple[str, Template]],
    pool: Shapes,
    surrogates: PseudonymiseSettings,
    seed: int,
    forbidden: Sequence[str] = (),
    attempts: int = FILL_ATTEMPTS,
    identifying: IdentifyingIndex | None = None,
) -> list[FilledNote]:
    """Fill every (document id, template); ``surrogates`` gives the locale of the providers.

    A note whose filled spans contain a ``forbidden`` surface, or that shares one of the
    ``identifying`` real n-grams, is filled again, up to ``attempts`` fills in all; each note
    keeps its fill with the fewest of both (the first of those), so a note without either is
    filled exactly as without them.
    """
    guard = CollisionGuard.build(forbidden, identifying)
    dated = [shapes for label, shapes in pool.items() if family_for(label).name == "date"]
    month_first = corpus_month_first(s for shapes in dated for s in shapes)  # None: locale's
    best: dict[str, FilledNote] = {}
    pending = list(templates)
    for attempt in range(max(1, attempts)):
        next_round = []
        filled = guard.checked(_fill_once(pending, pool, surrogates, seed, attempt, month_first))
        for (doc_id, template), note in zip(pending, filled, strict=True):
            if doc_id not in best or note.risk < best[doc_id].risk:
                best[doc_id] = note
            if note.risk:
                next_round.append((doc_id, template))
        pending = next_round
        if not pending:
            break
    return [best[doc_id] for doc_id, _ in templates]
