"""``annotate`` (seed 000): the generator writes plain notes; the gold-trained annotator
labels them in the annotate stage."""

from __future__ import annotations

from dataclasses import dataclass

from protocol import Corpus, Document
from site_agent.generate.modes import register_mode
from site_agent.generate.modes.base import Labelled, SeedNotes, SpanSource, with_documents
from site_agent.generate.phi_rate import PhiReader
from site_agent.generate.settings import GenerationSettings


@dataclass(frozen=True)
class MachineAnnotated:
    name: str = "annotate"
    spans: SpanSource = "annotator"
    adapt_epochs: int = 2
    epochs_basis: str = "as template (not measured): 96 steps on 65 notes beat 192"
    phi_reader: PhiReader | None = None  # plain text: the annotator labels it later
    phi_noun: str = "markers"

    def render(self, doc: Document) -> str:
        return doc.text

    def added_tokens(self, train: Corpus) -> tuple[str, ...]:
        return ()

    def label(self, generated: Corpus, seeds: SeedNotes, settings: GenerationSettings) -> Labelled:
        docs = list(generated.documents)
        return Labelled(corpus=with_documents(generated, docs, frozenset(), mode=self.name))


register_mode(MachineAnnotated())
