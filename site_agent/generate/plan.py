"""What to generate: prompts (first words of validation notes), how many samples each, ids.

A prompt is the opening of a validation note, extended to the end of any identifier its
last word cuts into; a renderer (the stage's: surrogates, then the mode's rendering) turns
those openings into prompt text, so that notes that start with an identifier prompt too.
Without a renderer a prompt stops before the note's first identifier.

This is the only planner: the generate stage and the tests use :func:`plan_for_model`.

Document ids are ``syn-<prompt index>-<sample index>``; the notes are written in a fixed order
(round-robin over the prompts, :func:`slots`), so a resumed run regenerates exactly the
documents that are missing.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import model_validator

from protocol import Corpus, Document, Span
from protocol.base import ProtocolModel
from shared.errors import UsageError
from shared.safe_models import from_pretrained
from site_agent.generate.settings import GenerationSettings


class GenerationPlan(ProtocolModel):
    """Prompts, samples per prompt and the token budget of every continuation."""

    prompts: tuple[str, ...]
    samples: tuple[int, ...]
    max_new_tokens: int

    @model_validator(mode="after")
    def _aligned(self) -> GenerationPlan:
        if len(self.prompts) != len(self.samples):
            raise ValueError(f"{len(self.prompts)} prompts but {len(self.samples)} sample counts")
        return self

    @property
    def total(self) -> int:
        return sum(self.samples)


@dataclass(frozen=True)
class Slot:
    """One document to generate."""

    doc_id: str
    prompt_index: int
    sample_index: int


def doc_id(prompt_index: int, sample_index: int) -> str:
    return f"syn-{prompt_index}-{sample_index}"


def allocate(n_prompts: int, target: int) -> tuple[int, ...]:
    """``target`` samples spread over prompts as evenly as possible (earlier prompts first)."""
    base, extra = divmod(target, n_prompts)
    return tuple(base + (1 if i < extra else 0) for i in range(n_prompts))


def prompt_for(doc: Document, words: int) -> str:
    """The first ``words`` words of the note, stopping before its first PII span."""
    safe = doc.text[: doc.spans[0].start] if doc.spans else doc.text
    return " ".join(safe.split()[:words])


PromptRenderer = Callable[[Corpus], list[str]]
"""Turns note openings (real identifiers still in them) into prompt texts, one per opening."""

_WORD = re.compile(r"\S+")


def opening(doc: Document, words: int) -> Document:
    """The note's first ``words`` words with their spans; a span the cut falls into is kept
    whole, so no identifier is left half in the prompt."""
    found = list(_WORD.finditer(doc.text))[:words]
    if not found:
        return Document(id=doc.id, text="")
    begin, end = found[0].start(), found[-1].end()
    for span in doc.spans:
        if span.start < end < span.end:
            end = span.end
    spans = tuple(
        Span(start=s.start - begin, end=s.end - begin, label=s.label)
        for s in doc.spans
        if s.start >= begin and s.end <= end
    )
    return Document(id=doc.id, text=doc.text[begin:end], spans=spans)


def phi_opening(doc: Document, words: int, span_index: int = 0) -> Document:
    """The ``words`` words before the note's ``span_index``-th identifier and the identifier:
    a prompt that shows the generator an identifier in its context even where the note's
    opening holds none."""
    span = doc.spans[span_index]
    before = [m for m in _WORD.finditer(doc.text) if m.end() <= span.start][-words:]
    begin = before[0].start() if before else span.start
    for s in doc.spans:  # an identifier the cut falls into is kept whole
        if s.start < begin < s.end:
            begin = s.start
    spans = tuple(
        Span(start=s.start - begin, end=s.end - begin, label=s.label)
        for s in doc.spans
        if s.start >= begin and s.end <= span.end
    )
    return Document(id=doc.id, text=doc.text[begin : span.end], spans=spans)


def phi_openings(validation: Corpus, words: int, share: float | None) -> list[Document]:
    """One opening per validation note, ``share`` of them (rounded) at an identifier instead
    of the note's start: notes without PHI give their place first, then the others; each
    PHI-bearing note offers an opening at each identifier, taken round-robin across notes."""
    docs = validation.documents
    openings = [opening(d, words) for d in docs]
    wanted = round((share or 0.0) * len(docs))
    offers = [
        (index, span)
        for span in range(max((len(d.spans) for d in docs), default=0))
        for index, d in enumerate(docs)
        if span < len(d.spans)
    ]
    if not wanted or not offers:
        return openings
    places = [i for i, d in enumerate(docs) if not d.spans] + [
        i for i, d in enumerate(docs) if d.spans
    ]
    for place, (index, span) in zip(places[:wanted], itertools.cycle(offers), strict=False):
        openings[place] = phi_opening(docs[index], words, span)
    return openings


def build_prompts(
    validation: Corpus,
    words: int,
    render: PromptRenderer | None = None,
    phi_share: float | None = None,
) -> list[str]:
    """One prompt per validation note with opening words (with ``render``; ``phi_share`` of
    them at an identifier), or with PII-free opening words (without)."""
    if render is None:
        texts = [prompt_for(d, words) for d in validation.documents]
    else:
        openings = phi_openings(validation, words, phi_share)
        # a PHI-bearing note may give two openings (its start and one at an identifier)
        unique = tuple(d.model_copy(update={"id": f"{d.id}#{i}"}) for i, d in enumerate(openings))
        texts = render(Corpus(documents=unique))
    prompts = [p for p in texts if p.strip()]
    if not prompts:
        raise UsageError(
            "no validation note has opening words to prompt the generator with; "
            "fix: raise split.validation_fraction or provide corpus.validation_path"
        )
    return prompts


def prompt_origin(
    validation: Corpus, words: int, phi_share: float | None = None
) -> list[dict[str, int | str | bool]]:
    """Where each prompt's real words come from, as :func:`build_prompts` takes them (``phi_share``
    of them around an identifier): the validation note, the word the prompt starts at and how
    many words it holds (a private record: ids and counts, no text)."""
    notes = {d.id: d for d in validation.documents}
    origin: list[dict[str, int | str | bool]] = []
    for taken in phi_openings(validation, words, phi_share):
        n_words = len(taken.text.split())
        if not n_words:
            continue
        note = notes[taken.id]
        start = note.text.find(taken.text)  # an opening is a verbatim cut of its note
        origin.append(
            {
                "note": taken.id,
                "from_word": len(note.text[: max(start, 0)].split()),
                "words": n_words,
                "of": len(note.text.split()),
                "at_identifier": taken.text != opening(note, words).text,
            }
        )
    return origin


def plan_amount(
    n_train: int, prompts: list[str], settings: GenerationSettings
) -> tuple[list[str], tuple[int, ...]]:
    """(prompts to use, samples for each) for the configured amount and cap."""
    if settings.samples_per_prompt is not None:
        target = settings.samples_per_prompt * len(prompts)
    else:
        assert settings.amount is not None  # the settings require one of the two
        target = max(1, round(settings.amount * n_train))
    if settings.max_documents is not None:
        target = min(target, settings.max_documents)
        prompts = prompts[:target]
    if settings.samples_per_prompt is not None and settings.max_documents is None:
        return prompts, (settings.samples_per_prompt,) * len(prompts)
    return prompts, allocate(len(prompts), target)


def longest_in_tokens(texts: Sequence[str], tokenizer: Any) -> int:
    return max((len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts), default=0)


def token_budget(validation: Corpus, settings: GenerationSettings, tokenizer: Any) -> int:
    """``max_new_tokens`` when set, else the longest validation note in tokens (at least
    ``min_max_new_tokens``); ``tokenizer`` is only used in the second case."""
    if settings.max_new_tokens is not None:
        return settings.max_new_tokens
    texts = [d.text for d in validation.documents]
    return max(settings.min_max_new_tokens, longest_in_tokens(texts, tokenizer))


def plan_generation(
    validation: Corpus,
    n_train_documents: int,
    settings: GenerationSettings,
    tokenizer: Any,
    render: PromptRenderer | None = None,
) -> GenerationPlan:
    """The seed study's recipe: prompts from the opening words of validation notes (their
    identifiers rendered by ``render``, or cut off without one, so that no real identifier
    seeds a synthetic note), a corpus that is a multiple of the training split (or
    ``samples_per_prompt`` each), capped by ``max_documents``."""
    prompts, samples = plan_amount(
        n_train_documents,
        build_prompts(validation, settings.prompt_words, render, settings.phi_prompt_share),
        settings,
    )
    budget = token_budget(validation, settings, tokenizer)
    return GenerationPlan(prompts=tuple(prompts), samples=samples, max_new_tokens=budget)


def plan_for_model(
    validation: Corpus,
    n_train_documents: int,
    model: str | os.PathLike[str],
    settings: GenerationSettings,
    render: PromptRenderer | None = None,
) -> GenerationPlan:
    """:func:`plan_generation` with the token budget counted by ``model``'s own tokenizer
    (loaded only when ``max_new_tokens`` is unset)."""
    tokenizer = None
    if settings.max_new_tokens is None:
        from transformers import AutoTokenizer

        from site_agent.models import resolve_model

        tokenizer = from_pretrained(AutoTokenizer, resolve_model(model, allow_fetch=True))
    return plan_generation(validation, n_train_documents, settings, tokenizer, render)


def slots(plan: GenerationPlan) -> list[Slot]:
    """Every document of the plan, round-robin over the prompts (each prompt's first sample,
    then each one's second, ...), so that any run's first notes, the ones the early PHI-rate
    check reads, come from all prompts instead of the first few (prompt by prompt, 32 notes
    were one or two prompts' continuations)."""
    most = max(plan.samples, default=0)
    return [
        Slot(doc_id(p, s), p, s)
        for s in range(most)
        for p, count in enumerate(plan.samples)
        if s < count
    ]


def origin_summary(origin: list[dict[str, int | str | bool]]) -> dict[str, int]:
    """What stage.json says of the prompts' real text (the ids stay in ``PROMPT_ORIGIN``)."""
    words = [int(o["words"]) for o in origin]
    return {
        "prompt_notes": len(origin),
        "prompt_words_max": max(words, default=0),
        "prompt_words_total": sum(words),
        "prompts_at_identifier": sum(bool(o["at_identifier"]) for o in origin),
    }
