"""Prompts, corpus size and token budget of the generation plan."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from site_agent.generate import GenerationSettings, first_words, plan_for_model, plan_generation
from site_agent.generate.plan import allocate, batches, slots
from tests.tiny_models import tiny_tokenizer

VALIDATION = [
    "Paciente varón de 70 años con fiebre.",
    "  Mujer  de\n45 años, alérgica.",
    "Ingresa",
    "",
]


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    return tiny_tokenizer(VALIDATION, "causal")


def test_prompts_are_the_first_three_words() -> None:
    assert first_words(VALIDATION[0], 3) == "Paciente varón de"
    assert first_words(VALIDATION[1], 3) == "Mujer de 45"
    assert first_words("Ingresa", 3) == "Ingresa"


@pytest.mark.parametrize(
    ("multiple", "n_train", "total"), [(4.0, 50, 200), (1.0, 50, 50), (0.05, 50, 2)]
)
def test_corpus_size_is_a_multiple_of_the_training_corpus(
    tokenizer: PreTrainedTokenizerFast, multiple: float, n_train: int, total: int
) -> None:
    plan = plan_generation(
        VALIDATION, n_train, tokenizer, GenerationSettings(size_multiple=multiple)
    )
    assert len(plan.prompts) == 3  # the empty document gives no prompt
    assert plan.total == total
    assert max(plan.samples) - min(plan.samples) <= 1


def test_samples_per_prompt_overrides_the_multiple(tokenizer: PreTrainedTokenizerFast) -> None:
    plan = plan_generation(VALIDATION, 50, tokenizer, GenerationSettings(samples_per_prompt=80))
    assert plan.samples == (80, 80, 80)


def test_token_budget_is_longest_validation_doc_but_at_least_50(
    tokenizer: PreTrainedTokenizerFast,
) -> None:
    short = plan_generation(VALIDATION, 1, tokenizer, GenerationSettings())
    assert short.max_new_tokens == 50
    long_doc = "palabra " * 200
    expected = len(tokenizer(long_doc, add_special_tokens=False)["input_ids"])
    assert expected > 50
    long = plan_generation([*VALIDATION, long_doc], 1, tokenizer, GenerationSettings())
    assert long.max_new_tokens == expected


def test_allocation_and_ids() -> None:
    assert allocate(3, 10) == (4, 3, 3)
    assert sum(allocate(7, 123)) == 123
    plan = plan_generation(
        ["a b c", "d e f"], 2, tiny_tokenizer([], "causal"), GenerationSettings(size_multiple=1.5)
    )
    ids = [s.doc_id for s in slots(plan)]
    assert ids == ["syn-0-0", "syn-0-1", "syn-1-0"]
    assert [[s.doc_id for s in b] for b in batches(plan, 2)] == [
        ["syn-0-0", "syn-0-1"],
        ["syn-1-0"],
    ]


def test_plan_for_model_counts_with_the_model_tokenizer(tmp_path: Path) -> None:
    from tests.tiny_models import tiny_causal_lm

    model = tiny_causal_lm(tmp_path / "lm", VALIDATION)
    long_doc = "Paciente " * 120
    plan = plan_for_model([long_doc], 10, model, GenerationSettings(size_multiple=1.0))
    tokenizer = AutoTokenizer.from_pretrained(model)
    assert plan.max_new_tokens == len(tokenizer(long_doc, add_special_tokens=False)["input_ids"])
    assert plan.total == 10 and plan.prompts == ("Paciente Paciente Paciente",)
