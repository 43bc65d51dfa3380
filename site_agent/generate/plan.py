"""What to generate: prompts (first words of validation notes), how many samples each, ids.

Document ids are ``syn-<prompt index>-<sample index>``; batches are cut from the full plan
in a fixed order, so a resumed run regenerates exactly the batches that are missing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import model_validator

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


def first_words(text: str, n_words: int) -> str:
    return " ".join(text.split()[:n_words])


def allocate(n_prompts: int, target: int) -> tuple[int, ...]:
    """``target`` samples spread over prompts as evenly as possible (earlier prompts first)."""
    base, extra = divmod(target, n_prompts)
    return tuple(base + (1 if i < extra else 0) for i in range(n_prompts))


def longest_in_tokens(texts: Sequence[str], tokenizer: Any) -> int:
    return max((len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts), default=0)


def plan_generation(
    validation_texts: Sequence[str],
    n_train_documents: int,
    tokenizer: Any,
    settings: GenerationSettings,
) -> GenerationPlan:
    """The seed study's recipe: prompts from validation notes, corpus a multiple of training."""
    prompts = [first_words(t, settings.prompt_words) for t in validation_texts]
    prompts = [p for p in prompts if p]
    if not prompts:
        raise UsageError("no prompts: every validation document is empty; fix: check the split")
    if settings.samples_per_prompt is not None:
        samples = (settings.samples_per_prompt,) * len(prompts)
    else:
        target = max(1, round(settings.size_multiple * n_train_documents))
        samples = allocate(len(prompts), target)
    budget = settings.max_new_tokens or max(
        longest_in_tokens(validation_texts, tokenizer), settings.min_max_new_tokens
    )
    return GenerationPlan(prompts=tuple(prompts), samples=samples, max_new_tokens=budget)


def slots(plan: GenerationPlan) -> list[Slot]:
    return [Slot(doc_id(p, s), p, s) for p, count in enumerate(plan.samples) for s in range(count)]


def batches(plan: GenerationPlan, batch_size: int) -> list[list[Slot]]:
    every = slots(plan)
    return [every[i : i + batch_size] for i in range(0, len(every), batch_size)]


def plan_for_model(
    validation_texts: Sequence[str],
    n_train_documents: int,
    model: str | os.PathLike[str],
    settings: GenerationSettings,
) -> GenerationPlan:
    """:func:`plan_generation` with the token budget counted by ``model``'s own tokenizer."""
    from transformers import AutoTokenizer

    from site_agent.models import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model(model))
    return plan_generation(validation_texts, n_train_documents, tokenizer, settings)
