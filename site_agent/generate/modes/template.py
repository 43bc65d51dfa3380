"""``template`` (seed 002): identifiers become typed placeholders before the generator sees a
note; it writes placeholder text, and a local filler instantiates the placeholders.

Each generated note is validated (placeholders only of allow-listed labels, no stray braces,
no identifier-like text of its own), filled with surrogates at exact offsets (filled again
where a surrogate happens to equal a site identifier, see ``fill.py``), deduplicated
against the seed notes and itself, and the share of notes with identifiers is brought to
``pii_fraction`` when that is set. No real identifier reaches the generator, and the spans
are exact by construction; the privacy audit still runs on the result.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from protocol import Corpus, Document
from site_agent.generate.dedup import deduplicate
from site_agent.generate.fill import fill_templates, shape_pool
from site_agent.generate.label_marks import marker_notes
from site_agent.generate.mix import pii_mix
from site_agent.generate.modes import register_mode
from site_agent.generate.modes.base import Labelled, SeedNotes, SpanSource, with_documents
from site_agent.generate.phi_rate import PhiReader, placeholders_written
from site_agent.generate.placeholders import (
    PLACEHOLDER,
    Template,
    insert_placeholders,
    placeholder_tokens,
    read_template,
)
from site_agent.generate.plain_identifiers import first_identifier_kind
from site_agent.generate.settings import GenerationSettings


def identifier_like(template: Template) -> str | None:
    """The kind of identifier-like text outside the placeholders, or None: the generator
    should have written a placeholder, so the note is refused rather than shipped with an
    unlabelled identifier."""
    kind = first_identifier_kind(PLACEHOLDER.sub(" ", template.text))
    return f"identifier-like text ({kind})" if kind is not None else None


@dataclass(frozen=True)
class TemplateOnly:
    name: str = "template"
    spans: SpanSource = "generator"
    adapt_epochs: int = 2
    epochs_basis: str = "measured best for template: 96 steps on 65 notes beat 192"
    phi_reader: PhiReader | None = placeholders_written
    phi_noun: str = "placeholders"

    def render(self, doc: Document) -> str:
        return insert_placeholders(doc)

    def added_tokens(self, train: Corpus) -> tuple[str, ...]:
        return placeholder_tokens(train)

    def label(self, generated: Corpus, seeds: SeedNotes, settings: GenerationSettings) -> Labelled:
        pool = shape_pool(seeds.train)
        accepted, refused, unknown = validated(generated, frozenset(pool))
        identifying = seeds.identifying() if seeds.identifying is not None else None
        filled = fill_templates(
            accepted,
            pool,
            seeds.surrogates,
            settings.seed,
            seeds.forbidden,
            identifying=identifying,
        )
        meta = {d.id: d.meta for d in generated.documents}
        notes = [n.document.model_copy(update={"meta": meta[n.document.id]}) for n in filled]
        seed_texts = [d.text for d in seeds.train.documents]
        unique = deduplicate(notes, seed_texts, settings.near_duplicate_jaccard)
        kept = pii_mix(unique.kept, settings.pii_fraction)
        summary = {
            "placeholders": sum(len(t.placeholders) for _, t in accepted),
            "refused_documents": refused,
            "unknown_labels": dict(unknown.most_common()),
            "refilled_for_collision": sum(1 for n in filled if n.attempts > 1),
            "collisions_left": sum(n.collisions for n in filled),
            "identifying_ngrams_left": sum(n.identifying_ngrams for n in filled),
            "documents_with_identifying_ngrams": sum(1 for n in filled if n.identifying_ngrams),
            "exact_duplicates": unique.exact,
            "near_duplicates": unique.near,
            "dropped_for_pii_mix": len(unique.kept) - len(kept),
            "documents_with_pii": sum(1 for d in kept if d.spans),
            "documents_without_pii": sum(1 for d in kept if not d.spans),
        }
        labels = frozenset(pool)
        corpus = with_documents(generated, kept, labels, mode=self.name, **marker_notes(labels))
        return Labelled(corpus=corpus, summary=summary)


def validated(
    generated: Corpus, allowed: frozenset[str]
) -> tuple[list[tuple[str, Template]], dict[str, int], Counter[str]]:
    """(document id, template) of every acceptable note, how many were refused, by reason,
    and the placeholders naming a label outside ``allowed``, per label (their notes are
    refused: no scheme label, no surrogate, and never a placeholder left in the export)."""
    accepted: list[tuple[str, Template]] = []
    refused: dict[str, int] = {}
    unknown: Counter[str] = Counter()
    for doc in generated.documents:
        template = read_template(doc.text, allowed)
        unknown.update(p.label for p in template.placeholders if p.label not in allowed)
        problem = template.problem or identifier_like(template)
        if problem is None:
            accepted.append((doc.id, template))
        else:
            reason = problem.split(":")[0]
            refused[reason] = refused.get(reason, 0) + 1
    return accepted, refused, unknown


register_mode(TemplateOnly())
