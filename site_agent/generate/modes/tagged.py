"""``tagged`` (seed 003): the generator is adapted on notes with ``<LABEL>...</LABEL>`` around
every (pseudonymised) identifier and writes tagged notes; the tags become the spans.

Malformed tags are repaired (dropped, text kept) or, with ``tag_errors = "reject"``, the note
is dropped; the summary reports the malformed-tag rate. A note with a pair of tags naming a
label outside the scheme is always dropped (its surface would stay in the text as an unlabelled
identifier) and counted per label (``unknown_labels``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from protocol import Corpus, Document
from site_agent.generate.label_marks import marker_notes
from site_agent.generate.modes import register_mode
from site_agent.generate.modes.base import Labelled, SeedNotes, SpanSource, with_documents
from site_agent.generate.phi_rate import PhiReader, tags_written
from site_agent.generate.settings import GenerationSettings
from site_agent.generate.tags import insert_tags, read_tags, tag_tokens


@dataclass(frozen=True)
class Tagged:
    name: str = "tagged"
    spans: SpanSource = "generator"
    adapt_epochs: int = 2
    epochs_basis: str = "as template (not measured): 96 steps on 65 notes beat 192"
    phi_reader: PhiReader | None = tags_written
    phi_noun: str = "tag pairs"

    def render(self, doc: Document) -> str:
        return insert_tags(doc)

    def added_tokens(self, train: Corpus) -> tuple[str, ...]:
        return tag_tokens(SeedNotes(train).labels)

    def label(self, generated: Corpus, seeds: SeedNotes, settings: GenerationSettings) -> Labelled:
        allowed = seeds.labels
        docs: list[Document] = []
        well_formed = malformed = rejected = 0
        unknown: Counter[str] = Counter()
        unknown_documents = 0
        for doc in generated.documents:
            reading = read_tags(doc.text, allowed)
            well_formed += reading.well_formed
            malformed += reading.malformed
            if reading.unknown:
                unknown.update(reading.unknown)
                unknown_documents += 1
                continue
            if reading.malformed and settings.tag_errors == "reject":
                rejected += 1
                continue
            meta = {**(doc.meta or {}), "malformed_tags": reading.malformed}
            docs.append(
                Document(
                    id=doc.id,
                    text=reading.text,
                    spans=tuple(reading.spans),
                    source=doc.source,
                    meta=meta,
                )
            )
        tags = 2 * (well_formed + unknown.total()) + malformed
        summary = {
            "tags": tags,
            "well_formed_pairs": well_formed,
            "malformed_tags": malformed,
            "malformed_tag_rate": round(malformed / tags, 4) if tags else 0.0,
            "tag_errors": settings.tag_errors,
            "rejected_documents": rejected,
            "unknown_label_documents": unknown_documents,
            "unknown_labels": dict(unknown.most_common()),
        }
        corpus = with_documents(generated, docs, allowed, mode=self.name, **marker_notes(allowed))
        return Labelled(corpus=corpus, summary=summary)


register_mode(Tagged())
