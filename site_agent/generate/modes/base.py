"""What a generation mode is: how notes look to the generator, and where their spans come from.

A mode renders a note with spans (its identifiers already surrogates) into the text the
generator is adapted on and prompted with, and reads the generated notes back into a
protocol ``Corpus``. ``spans`` says who labels them: the gold-trained annotator
(``"annotator"``, the annotate stage runs it) or the generator itself (``"generator"``, the
annotate stage keeps the spans the mode read).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from protocol import Corpus, Document
from site_agent.generate.settings import GenerationSettings
from site_agent.privacy.identifying import IdentifyingIndex
from site_agent.pseudonymise.settings import PseudonymiseSettings

if TYPE_CHECKING:
    from site_agent.generate.phi_rate import PhiReader

SpanSource = Literal["annotator", "generator"]


@dataclass(frozen=True)
class SeedNotes:
    """What a mode may read besides the generated notes: the pseudonymised training notes the
    generator was adapted on (labels, surrogate shapes, texts to deduplicate against), the
    site's surrogate settings (locale), the identifier surfaces a filler must not write
    (the real training notes' gold strings and the pseudonymised copy's surrogates), and the
    real notes' identifying n-grams a filler should not reproduce (the audit's sensitive
    n-gram filter; ``None``: not checked). Nothing here reaches the generator."""

    train: Corpus
    surrogates: PseudonymiseSettings = field(default_factory=PseudonymiseSettings)
    forbidden: tuple[str, ...] = ()
    identifying: Callable[[], IdentifyingIndex] | None = None

    @property
    def labels(self) -> frozenset[str]:
        """The allow-list: labels that have at least one span in the training notes."""
        return frozenset(s.label for d in self.train.documents for s in d.spans)


@dataclass(frozen=True)
class Labelled:
    """A mode's synthetic corpus and what reading it found (counts for stage.json)."""

    corpus: Corpus
    summary: dict[str, Any] = field(default_factory=dict)


class GenerationMode(Protocol):
    """One registered mode (``[generation] mode``)."""

    @property
    def name(self) -> str:
        """The mode's name in ``[generation] mode``."""
        ...

    @property
    def spans(self) -> SpanSource:
        """Who labels the notes: the gold-trained annotator or the generator."""
        ...

    @property
    def adapt_epochs(self) -> int:
        """The adaptation epochs the generator recipe gives this mode where ``[adapt]`` sets
        none."""
        ...

    @property
    def epochs_basis(self) -> str:
        """Why those epochs, as the recipe's reason says it."""
        ...

    @property
    def phi_reader(self) -> PhiReader | None:
        """How the early PHI-rate check reads the PHI the generator wrote in a note
        (``site_agent.generate.phi_rate``: placeholders, tag pairs); None: the mode writes
        no markers (no check)."""
        ...

    @property
    def phi_noun(self) -> str:
        """What those markers are called in the PHI-rate diagnosis."""
        ...

    def render(self, doc: Document) -> str:
        """The text the generator sees for ``doc`` (adaptation text and prompts)."""
        ...

    def added_tokens(self, train: Corpus) -> tuple[str, ...]:
        """Markers the generator's vocabulary gains as whole tokens (tags, placeholders)."""
        ...

    def label(self, generated: Corpus, seeds: SeedNotes, settings: GenerationSettings) -> Labelled:
        """The generated notes as the mode's synthetic corpus."""
        ...


def with_documents(
    corpus: Corpus, docs: list[Document], labels: frozenset[str], **notes: str
) -> Corpus:
    """``corpus`` with new documents, the allow-listed label set, and ``notes`` in provenance."""
    known = sorted(labels | {s.label for d in docs for s in d.spans})
    provenance = corpus.provenance.model_copy(
        update={"notes": {**corpus.provenance.notes, **notes}}
    )
    return Corpus(documents=tuple(docs), labels=tuple(known), provenance=provenance)
