"""The local filler (seed 002): placeholders become surrogates, spans exact by construction.

Filling happens in two passes over one note, both left to right with offsets counted as the
text is built. First every placeholder takes a *shape*: a surface of its label from the
pseudonymised training notes (a date layout, a name's word count, a phone's digit groups),
distinct placeholders of one label taking distinct shapes where the pool allows. Then the
site's surrogate providers (``site_agent.pseudonymise``, the same ones that pseudonymise the
training split) replace every shape with a fresh surrogate: per locale, one per placeholder
and note, dates moved by one shift per note. Nothing here calls the generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from protocol import Corpus, Document, Span
from site_agent.generate.placeholders import Template
from site_agent.pseudonymise import PseudonymiseSettings, pseudonymise_corpus

Shapes = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class FilledNote:
    """A filled template and the surrogate that each placeholder (label, number) became."""

    document: Document
    surrogates: dict[tuple[str, int], str]


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


def fill_templates(
    templates: Sequence[tuple[str, Template]],
    pool: Shapes,
    surrogates: PseudonymiseSettings,
    seed: int,
) -> list[FilledNote]:
    """Fill every (document id, template); ``surrogates`` gives the locale of the providers."""
    shaped: list[Document] = []
    keys: list[list[tuple[str, int]]] = []
    for doc_id, template in templates:
        shapes = _shapes_for(template, pool, random.Random(f"{seed}:{doc_id}"))
        shaped.append(shaped_document(doc_id, template, shapes))
        keys.append([p.key for p in template.placeholders])
    settings = surrogates.model_copy(update={"mode": "surrogate", "seed": seed})
    filled = pseudonymise_corpus(Corpus(documents=tuple(shaped)), settings).corpus.documents
    notes: list[FilledNote] = []
    for doc, doc_keys in zip(filled, keys, strict=True):
        made = {key: doc.surface(span) for key, span in zip(doc_keys, doc.spans, strict=True)}
        notes.append(FilledNote(document=doc, surrogates=made))
    return notes
