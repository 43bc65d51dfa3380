"""Pseudonymise a corpus with the configured mode: ``surrogate``, ``filter`` or ``none``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from faker import Faker

from protocol import Corpus, Document
from shared.registry import Registry
from site_agent.pseudonymise.dates import corpus_month_first
from site_agent.pseudonymise.filter import filter_document
from site_agent.pseudonymise.records import SurrogateRecord
from site_agent.pseudonymise.replace import surrogate_document
from site_agent.pseudonymise.settings import PseudonymiseSettings
from site_agent.pseudonymise.surrogates import family_for


@dataclass(frozen=True)
class PseudonymiseResult:
    """The pseudonymised corpus and what was changed to make it."""

    corpus: Corpus
    surrogates: list[SurrogateRecord] = field(default_factory=list)
    dropped_sentences: int = 0
    dropped_documents: int = 0


def _none(corpus: Corpus, settings: PseudonymiseSettings) -> PseudonymiseResult:
    return PseudonymiseResult(corpus=corpus)


def date_surfaces(corpus: Corpus) -> list[str]:
    """The surfaces of every span whose label is of the date family."""
    return [
        doc.surface(span)
        for doc in corpus.documents
        for span in doc.spans
        if family_for(span.label).name == "date"
    ]


def _surrogate(corpus: Corpus, settings: PseudonymiseSettings) -> PseudonymiseResult:
    return surrogate_corpus(corpus, settings, corpus_month_first(date_surfaces(corpus)))


def surrogate_corpus(
    corpus: Corpus, settings: PseudonymiseSettings, month_first: bool | None
) -> PseudonymiseResult:
    """Every span replaced by a surrogate of ``settings.locale``, seeded per note from
    ``settings.seed``; ``month_first`` is the date order (None: the locale's)."""
    fake = Faker(settings.locale)
    docs: list[Document] = []
    records: list[SurrogateRecord] = []
    for doc in corpus.documents:
        new, used = surrogate_document(doc, fake, settings.seed, month_first)
        docs.append(new)
        records.extend(used)
    return PseudonymiseResult(corpus=_rebuilt(corpus, docs), surrogates=records)


def _filter(corpus: Corpus, settings: PseudonymiseSettings) -> PseudonymiseResult:
    docs: list[Document] = []
    dropped = 0
    for doc in corpus.documents:
        kept, n = filter_document(doc, set(settings.filter_labels))
        dropped += n
        if kept is not None:
            docs.append(kept)
    return PseudonymiseResult(
        corpus=_rebuilt(corpus, docs),
        dropped_sentences=dropped,
        dropped_documents=len(corpus) - len(docs),
    )


def _rebuilt(corpus: Corpus, docs: list[Document]) -> Corpus:
    return Corpus(documents=tuple(docs), labels=corpus.labels, provenance=corpus.provenance)


MODES: Registry[Callable[[Corpus, PseudonymiseSettings], PseudonymiseResult]] = Registry(
    "pseudonymisation mode"
)
MODES.add("none", _none)
MODES.add("surrogate", _surrogate)
MODES.add("filter", _filter)


def pseudonymise_corpus(corpus: Corpus, settings: PseudonymiseSettings) -> PseudonymiseResult:
    """Apply the configured mode to every document of ``corpus``."""
    return MODES.get(settings.mode, setting="site config [pseudonymise] mode")(corpus, settings)
