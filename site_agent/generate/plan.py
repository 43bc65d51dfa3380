"""What to generate: prompts (first words of validation notes), how many samples each, ids.

This is the only planner: the generate stage and the tests use :func:`plan_for_model`.

Document ids are ``syn-<prompt index>-<sample index>``; batches are cut from the full plan
in a fixed order, so a resumed run regenerates exactly the batches that are missing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import model_validator

from protocol import Corpus, Document
from protocol.base import ProtocolModel
from shared.errors import UsageError
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


def build_prompts(validation: Corpus, words: int) -> list[str]:
    """One prompt per validation note that has PII-free opening words."""
    prompts = [p for p in (prompt_for(d, words) for d in validation.documents) if p]
    if not prompts:
        raise UsageError(
            "no validation note has PII-free opening words to prompt the generator with; "
            "fix: raise split.validation_fraction or provide corpus.validation_path"
        )
    return prompts


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
    validation: Corpus, n_train_documents: int, settings: GenerationSettings, tokenizer: Any
) -> GenerationPlan:
    """The seed study's recipe: prompts from the opening words of validation notes (cut before
    their first PII span, so that no real identifier seeds a synthetic note), a corpus that is
    a multiple of the training split (or ``samples_per_prompt`` each), capped by
    ``max_documents``."""
    prompts, samples = plan_amount(
        n_train_documents, build_prompts(validation, settings.prompt_words), settings
    )
    budget = token_budget(validation, settings, tokenizer)
    return GenerationPlan(prompts=tuple(prompts), samples=samples, max_new_tokens=budget)


def plan_for_model(
    validation: Corpus,
    n_train_documents: int,
    model: str | os.PathLike[str],
    settings: GenerationSettings,
) -> GenerationPlan:
    """:func:`plan_generation` with the token budget counted by ``model``'s own tokenizer
    (loaded only when ``max_new_tokens`` is unset)."""
    tokenizer = None
    if settings.max_new_tokens is None:
        from transformers import AutoTokenizer

        from site_agent.models import resolve_model

        tokenizer = AutoTokenizer.from_pretrained(resolve_model(model, allow_fetch=True))
    return plan_generation(validation, n_train_documents, settings, tokenizer)


def slots(plan: GenerationPlan) -> list[Slot]:
    return [Slot(doc_id(p, s), p, s) for p, count in enumerate(plan.samples) for s in range(count)]


def batches(plan: GenerationPlan, batch_size: int) -> list[list[Slot]]:
    every = slots(plan)
    return [every[i : i + batch_size] for i in range(0, len(every), batch_size)]
