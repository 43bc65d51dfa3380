"""A generation mode in one file, as a site or a study would add one: it registers itself on
import, and nothing else in the tree names it. The generator sees the notes as they are; the
annotator labels what it writes; each note it writes counts as one PHI "mention" (so the
early PHI-rate check, which reads what it wrote as the mode says, runs and passes on a tiny
random model)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol import Corpus, Document
from site_agent.generate.modes import register_mode
from site_agent.generate.modes.base import Labelled, SeedNotes, SpanSource, with_documents
from site_agent.generate.phi_rate import PhiReader, Written
from site_agent.generate.settings import GenerationSettings


def words_written(text: str, labels: frozenset[str]) -> Written:
    """A note with any word holds one mention (near the real notes' rate for short notes):
    the check runs, and passes, on any generator."""
    words = len(re.findall(r"\w+", text))
    return Written(mentions=min(words, 1), words=words)


@dataclass(frozen=True)
class Echo:
    name: str = "echo"
    spans: SpanSource = "annotator"
    adapt_epochs: int = 1
    epochs_basis: str = "one pass, the echo mode's own choice"
    phi_reader: PhiReader | None = words_written
    phi_noun: str = "words"

    def render(self, doc: Document) -> str:
        return doc.text

    def added_tokens(self, train: Corpus) -> tuple[str, ...]:
        return ()

    def label(self, generated: Corpus, seeds: SeedNotes, settings: GenerationSettings) -> Labelled:
        docs = [d.model_copy(update={"spans": ()}) for d in generated.documents]
        corpus = with_documents(generated, docs, seeds.labels, mode=self.name)
        return Labelled(corpus, {"echoed": len(docs)})


ECHO = register_mode(Echo())
