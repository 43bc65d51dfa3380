"""Prompts (cut before the first PII span), corpus size and token budget of the one plan."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from protocol import Corpus, Document, Span
from site_agent.generate.plan import (
    GenerationPlan,
    allocate,
    build_prompts,
    plan_amount,
    plan_for_model,
    plan_generation,
    prompt_for,
    slots,
)
from site_agent.generate.settings import GenerationSettings
from tests.tiny_models import tiny_tokenizer

VALIDATION = [
    "Paciente varón de 70 años con fiebre.",
    "  Mujer  de\n45 años, alérgica.",
    "Ingresa",
    "",
]


def _notes(texts: list[str]) -> Corpus:
    return Corpus(documents=tuple(Document(id=f"v{i}", text=t) for i, t in enumerate(texts)))


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    return tiny_tokenizer(VALIDATION, "causal")


def test_prompts_are_the_first_three_words() -> None:
    notes = _notes(VALIDATION).documents
    assert prompt_for(notes[0], 3) == "Paciente varón de"
    assert prompt_for(notes[1], 3) == "Mujer de 45"
    assert prompt_for(notes[2], 3) == "Ingresa"


def test_prompts_stop_before_the_first_pii_span() -> None:
    doc = Document(
        id="a", text="Paciente de 70 años Juan", spans=(Span(start=20, end=24, label="PER"),)
    )
    assert prompt_for(doc, 3) == "Paciente de 70"
    starts_with_name = Document(
        id="b", text="Juan ingresa hoy", spans=(Span(start=0, end=4, label="PER"),)
    )
    assert prompt_for(starts_with_name, 3) == ""
    assert build_prompts(Corpus(documents=(doc, starts_with_name)), 2) == ["Paciente de"]
    with pytest.raises(Exception, match="no validation note"):
        build_prompts(Corpus(documents=(starts_with_name,)), 3)


@pytest.mark.parametrize(
    ("settings", "n_prompts", "expected"),
    [
        (GenerationSettings(), 5, (80, 80, 80, 80, 80)),  # 4x of 100 training notes
        (GenerationSettings(amount=1.0), 3, (34, 33, 33)),
        (GenerationSettings(samples_per_prompt=7), 3, (7, 7, 7)),
        (GenerationSettings(samples_per_prompt=4, max_documents=10), 5, (2, 2, 2, 2, 2)),
        (GenerationSettings(samples_per_prompt=40, max_documents=3), 5, (1, 1, 1)),
        (GenerationSettings(amount=0.05), 4, (2, 1, 1, 1)),
    ],
)
def test_amount_planning(
    settings: GenerationSettings, n_prompts: int, expected: tuple[int, ...]
) -> None:
    prompts, samples = plan_amount(100, [f"p{i}" for i in range(n_prompts)], settings)
    assert samples == expected and len(prompts) == len(expected)
    assert prompts == [f"p{i}" for i in range(len(expected))]


@pytest.mark.parametrize(
    ("multiple", "n_train", "total"), [(4.0, 50, 200), (1.0, 50, 50), (0.05, 50, 2)]
)
def test_corpus_size_is_a_multiple_of_the_training_corpus(
    tokenizer: PreTrainedTokenizerFast, multiple: float, n_train: int, total: int
) -> None:
    plan = plan_generation(
        _notes(VALIDATION), n_train, GenerationSettings(amount=multiple), tokenizer
    )
    assert len(plan.prompts) == 3  # the empty document gives no prompt
    assert plan.total == total
    assert max(plan.samples) - min(plan.samples) <= 1


def test_samples_per_prompt_overrides_the_multiple(tokenizer: PreTrainedTokenizerFast) -> None:
    plan = plan_generation(
        _notes(VALIDATION), 50, GenerationSettings(samples_per_prompt=80), tokenizer
    )
    assert plan.samples == (80, 80, 80)


def test_token_budget_is_longest_validation_doc_but_at_least_50(
    tokenizer: PreTrainedTokenizerFast,
) -> None:
    short = plan_generation(_notes(VALIDATION), 1, GenerationSettings(), tokenizer)
    assert short.max_new_tokens == 50
    long_doc = "palabra " * 200
    expected = len(tokenizer(long_doc, add_special_tokens=False)["input_ids"])
    assert expected > 50
    long = plan_generation(_notes([*VALIDATION, long_doc]), 1, GenerationSettings(), tokenizer)
    assert long.max_new_tokens == expected


def test_allocation_and_ids() -> None:
    assert allocate(3, 10) == (4, 3, 3)
    assert sum(allocate(7, 123)) == 123
    plan = plan_generation(
        _notes(["a b c", "d e f"]), 2, GenerationSettings(amount=1.5), tiny_tokenizer([], "causal")
    )
    ids = [s.doc_id for s in slots(plan)]
    assert ids == ["syn-0-0", "syn-1-0", "syn-0-1"]  # round-robin over the prompts


def test_the_first_notes_draw_on_every_prompt() -> None:
    """The early PHI-rate check reads the first notes: with 5 prompts of 4 samples, the first
    5 notes are one from each prompt, and every sample of the plan comes exactly once."""
    plan = GenerationPlan(prompts=tuple("abcde"), samples=(4, 4, 4, 4, 3), max_new_tokens=8)
    order = slots(plan)
    assert [s.prompt_index for s in order[:5]] == [0, 1, 2, 3, 4]
    assert sorted((s.prompt_index, s.sample_index) for s in order) == [
        (p, i) for p, count in enumerate(plan.samples) for i in range(count)
    ]
    assert len({s.doc_id for s in order}) == plan.total == 19


def test_plan_for_model_counts_with_the_model_tokenizer(tmp_path: Path) -> None:
    from tests.tiny_models import tiny_causal_lm

    model = tiny_causal_lm(tmp_path / "lm", VALIDATION)
    long_doc = "Paciente " * 120
    plan = plan_for_model(_notes([long_doc]), 10, model, GenerationSettings(amount=1.0))
    tokenizer = AutoTokenizer.from_pretrained(model)
    assert plan.max_new_tokens == len(tokenizer(long_doc, add_special_tokens=False)["input_ids"])
    assert plan.total == 10 and plan.prompts == ("Paciente Paciente Paciente",)


def test_a_set_token_budget_needs_no_tokenizer() -> None:
    plan = plan_generation(_notes(["a b c"]), 1, GenerationSettings(max_new_tokens=70), None)
    assert plan.max_new_tokens == 70
