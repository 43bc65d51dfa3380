"""The generator recipe a corpus and a machine get: steps, rows and tokens per pass, PHI windows.

The seed study's recipe (6 epochs of 16 x 512 tokens) was written for a 6.3B QLoRA generator on
a GPU. On CPU it takes hours for a few hundred notes, and at 16 x 512 SmolLM2 grew to 23.6 GB
and was killed on a 24 GB machine. What was measured to work (``docs/results.md``):

- the template mode at about 2 epochs (96 steps on 65 MEDDOCAN notes) reached 92-95% of the
  gold annotator; 192 steps lost 25 points: steps come from the corpus size, 2 epochs;
- every measured experiment stepped on 4 rows x 256 tokens: that effective batch is kept, and
  memory decides how many rows go through one forward pass (gradient accumulation makes up
  the rest);
- on a corpus where most notes hold no PHI, the generator hardly sees a placeholder in 96
  steps: PHI-bearing windows are repeated in the adaptation text.

Settings given in ``site.toml`` (``model_fields_set``) win over every choice here; each choice
carries one reason, recorded in ``adapt.json`` and printed by the pre-flight.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import Field

from protocol import Corpus
from protocol.base import ProtocolModel
from shared.unset import apply_where_unset
from site_agent.adapt.cost import (
    CPU_KINDS,
    GEMMA,
    MEASURED,
    MEASURED_ROWS,
    MEASURED_TOKENS,
    SMOL,
    CpuKind,
    GeneratorCost,
    adapt_peak_gb,
    adapt_seconds,
    generator_cost,
    row_seconds,
    rows_per_epoch,
    this_cpu,
    tokens_in_seconds,
)
from site_agent.adapt.settings import AdaptSettings, Vocabulary

MIN_STEPS = 24
"""The shortest adaptation measured to help (seed 000 Table 2: 0.242 without LoRA, 0.552 at 24
steps); a smaller corpus is stepped at least this often."""
PASS_ROWS = (4, 2, 1)
PASS_TOKENS = (256, 128)
SPARSE_DOCUMENT_SHARE = 0.5
"""Below this share of notes with PHI, PHI-bearing windows are repeated."""
MAX_PHI_REPEAT = 3
"""At most this many copies of a PHI-bearing window per epoch: more exposure of the same text
is what drove identifier echo up in the memorisation study (docs/results.md)."""

RECIPE_FIELDS = (
    "batch_size",
    "gradient_accumulation",
    "max_length",
    "epochs",
    "max_steps",
    "phi_window_repeat",
    "vocabulary",
)


class AdaptedMode(Protocol):
    """What the recipe asks of the generation mode (its registry entry,
    ``site_agent.generate.modes``, owns these facts)."""

    @property
    def name(self) -> str: ...

    @property
    def adapt_epochs(self) -> int: ...

    @property
    def epochs_basis(self) -> str: ...


class Machine(ProtocolModel):
    """What the recipe may use: memory (GB), cores, and the kind of CPU its unit costs were
    measured on (``site_agent.adapt.cost.CPU_KINDS``)."""

    memory_gb: float = Field(gt=0)
    cores: int = Field(1, ge=1)
    cpu: CpuKind = "bf16"


def this_machine() -> Machine:
    """This machine's total memory, logical cores (psutil) and kind of CPU (its cpuinfo
    flags: native bf16 or not)."""
    import psutil

    return Machine(
        memory_gb=round(psutil.virtual_memory().total / 1024**3, 1),
        cores=psutil.cpu_count() or 1,
        cpu=this_cpu(),
    )


class CorpusShape(ProtocolModel):
    """What the generator recipe needs to know of the training notes."""

    documents: int = Field(ge=0)
    characters: int = Field(ge=0)
    documents_with_phi: int = Field(ge=0)

    @property
    def phi_document_share(self) -> float:
        return self.documents_with_phi / self.documents if self.documents else 0.0


def corpus_shape(corpus: Corpus) -> CorpusShape:
    docs = corpus.documents
    return CorpusShape(
        documents=len(docs),
        characters=sum(len(d.text) for d in docs),
        documents_with_phi=sum(bool(d.spans) for d in docs),
    )


class GeneratorRecipe(ProtocolModel):
    """The adaptation ``settings`` get on this corpus and machine, with one reason per choice."""

    base_model: str
    mode: str
    memory_limit_gb: float
    batch_size: int
    gradient_accumulation: int
    max_length: int
    epochs: int
    max_steps: int | None
    phi_window_repeat: int
    vocabulary: Vocabulary = Field(
        "corpus", description="output layer: the corpus's tokens or the whole vocabulary"
    )
    phi_prompt_share: float | None = Field(
        description="share of prompts opening at an identifier (None: note openings)"
    )
    rows_per_epoch: int = Field(description="estimated packed rows per epoch, repeats included")
    steps: int = Field(description="estimated optimiser steps")
    peak_memory_gb: float = Field(description="estimated peak RSS of a step")
    adapt_hours: float = Field(description="estimated hours of the training loop, idle 2 cores")
    reasons: tuple[str, ...]

    def applied(self, settings: AdaptSettings) -> AdaptSettings:
        """``settings`` with the recipe's values where ``site.toml`` gave none."""
        return apply_where_unset(settings, {name: getattr(self, name) for name in RECIPE_FIELDS})


def _given(settings: AdaptSettings, name: str) -> bool:
    return name in settings.model_fields_set


def _pass_shape(
    cost: GeneratorCost, settings: AdaptSettings, limit_gb: float
) -> tuple[int, int, int, str]:
    """(rows per pass, tokens per row, accumulation, reason): the first shape that fits."""
    rows_given, tokens_given = _given(settings, "batch_size"), _given(settings, "max_length")
    if rows_given and tokens_given:
        rows, tokens = settings.batch_size, settings.max_length
        peak = adapt_peak_gb(cost, rows, tokens)
        return (
            rows,
            tokens,
            settings.gradient_accumulation,
            (f"batch_size = {rows}, max_length = {tokens} set: about {peak:.1f} GB per step"),
        )
    row_options = (settings.batch_size,) if rows_given else PASS_ROWS
    token_options = (settings.max_length,) if tokens_given else PASS_TOKENS
    shapes = [(r, t) for t in token_options for r in row_options]
    fits = [(r, t) for r, t in shapes if adapt_peak_gb(cost, r, t) <= limit_gb]
    rows, tokens = (fits or shapes[-1:])[0]
    if _given(settings, "gradient_accumulation"):
        accumulation = settings.gradient_accumulation
    elif rows_given:
        accumulation = 1
    else:
        accumulation = max(1, MEASURED_ROWS * MEASURED_TOKENS // (rows * tokens))
    peak = adapt_peak_gb(cost, rows, tokens)
    effective = rows * tokens * accumulation
    fit = "fits" if fits else "does not fit"
    return (
        rows,
        tokens,
        accumulation,
        (
            f"{rows} rows x {tokens} tokens per forward pass x {accumulation} accumulated = "
            f"{effective} tokens per step (measured: 4 x 256); about {peak:.1f} GB, which {fit} "
            f"in {limit_gb:.1f} GB"
        ),
    )


def _phi_repeat(shape: CorpusShape, settings: AdaptSettings) -> tuple[int, str]:
    if settings.phi_window_repeat is not None:
        return settings.phi_window_repeat, f"phi_window_repeat = {settings.phi_window_repeat} set"
    share = shape.phi_document_share
    seen = f"{share:.0%} of {shape.documents} training notes hold PHI"
    if shape.documents_with_phi == 0 or share >= SPARSE_DOCUMENT_SHARE:
        return 1, f"{seen}: every window once per epoch"
    repeat = min(MAX_PHI_REPEAT, max(2, round((1 - share) / share)))
    return repeat, (
        f"{seen} (< {SPARSE_DOCUMENT_SHARE:.0%}): PHI-bearing windows {repeat}x per epoch, so "
        "the generator sees placeholders often enough to write them"
    )


def choose_vocabulary(
    settings: AdaptSettings,
    engine: str,
    backend: str = "auto",
    cpu: CpuKind = "bf16",
    samples_restricted: bool = True,
) -> tuple[Vocabulary, str]:
    """The output vocabulary for generation on ``engine`` (the one ``[generation] backend``
    resolves to on this machine for a full-vocabulary adapter). Where ``backend = "auto"``
    chose an engine that cannot load a restricted layer, the corpus vocabulary is taken
    anyway when transformers sampling within it was measured faster on this kind of CPU (the
    generate stage then samples it with transformers). ``samples_restricted``: whether
    ``engine`` can sample a restricted layer (the backend's own fact,
    ``site_agent.generate.backend.samples_restricted``)."""
    if _given(settings, "vocabulary"):
        return settings.vocabulary, f"vocabulary = {settings.vocabulary!r} set"
    if not samples_restricted:
        full, _ = generator_cost(settings.base_model, "full", engine, cpu)
        corpus, _ = generator_cost(settings.base_model, "corpus", "hf", cpu)
        rates = (
            f"{corpus.tokens_per_second:g} tok/s with transformers against "
            f"{full.tokens_per_second:g} with {engine} and the full vocabulary, measured as "
            f"{full.name} on {CPU_KINDS[cpu]} (benchmarks/generator.py)"
        )
        if backend == "auto" and corpus.tokens_per_second > full.tokens_per_second:
            return "corpus", f"corpus output vocabulary, sampled by transformers: {rates}"
        why = "set" if backend != "auto" else "the faster here"
        return "full", (
            f"full output vocabulary: the generation engine here is {engine} ({why}), which "
            f"cannot load a restricted output layer; {rates}"
        )
    return "corpus", f"corpus output vocabulary: {_corpus_speedups()}, with template-mode F1 " + (
        "within the repeats' noise of the full vocabulary (docs/results.md)"
    )


def _corpus_speedups() -> str:
    """What the corpus vocabulary was measured to speed up, from the calibration table."""
    gemma, smol = MEASURED[GEMMA, "bf16"], MEASURED[SMOL, "bf16"]

    def faster(cost: GeneratorCost) -> tuple[float, float]:
        sampling = cost.corpus_tokens_per_second / cost.tokens_per_second
        return sampling, cost.seconds_per_step / cost.corpus_seconds_per_step

    (g_top_p, g_lora), (s_top_p, s_lora) = faster(gemma), faster(smol)
    return (
        f"{g_top_p:.1f}x ({gemma.name}) and {s_top_p:.1f}x ({smol.name}) top-p tok/s, "
        f"{g_lora:.1f}x / {s_lora:.1f}x LoRA s/step on {CPU_KINDS['bf16']}"
    )


def _prompt_share(shape: CorpusShape, given: float | None) -> tuple[float | None, str]:
    if given is not None:
        return given, f"[generation] phi_prompt_share = {given:g} set"
    share = shape.phi_document_share
    if shape.documents_with_phi == 0 or share >= SPARSE_DOCUMENT_SHARE:
        return None, "prompts: the openings of validation notes"
    return round(share, 3), (
        f"prompts: {share:.0%} open at an identifier (the real notes' share with PHI), so "
        "that many synthetic notes hold PHI even where the generator writes none itself"
    )


def _budget(
    spe: int, mode: AdaptedMode, settings: AdaptSettings
) -> tuple[int, int | None, int, str]:
    """(epochs, max_steps, estimated steps, reason) for ``spe`` estimated steps per epoch."""
    epochs_given, steps_given = _given(settings, "epochs"), _given(settings, "max_steps")
    if epochs_given or steps_given:
        epochs = settings.epochs if epochs_given else (settings.max_steps or 1)
        cap = settings.max_steps
        steps = min(epochs * spe, cap) if cap else epochs * spe
        named = [
            f"{n} = {getattr(settings, n)}" for n in ("epochs", "max_steps") if _given(settings, n)
        ]
        return epochs, cap, steps, f"{', '.join(named)} set: about {steps} steps"
    epochs = mode.adapt_epochs
    if epochs * spe >= MIN_STEPS:
        return (
            epochs,
            None,
            epochs * spe,
            f"{epochs} epochs of about {spe} steps ({mode.epochs_basis})",
        )
    wanted = math.ceil(MIN_STEPS / spe)
    return (
        wanted,
        MIN_STEPS,
        MIN_STEPS,
        (
            f"{epochs} epochs would be {epochs * spe} steps (< {MIN_STEPS}, the shortest "
            f"adaptation measured to help): {MIN_STEPS} steps"
        ),
    )


def resolve_generator_recipe(
    shape: CorpusShape,
    settings: AdaptSettings,
    mode: AdaptedMode,
    machine: Machine,
    memory_limit_gb: float,
    phi_prompt_share: float | None = None,
    engine: str = "hf",
    backend: str = "auto",
    samples_restricted: bool = True,
) -> GeneratorRecipe:
    """The recipe ``settings`` (with what ``site.toml`` set) give for ``shape`` on ``machine``,
    planning for at most ``memory_limit_gb`` per step; ``phi_prompt_share`` is
    ``[generation]``'s (None: unset, the recipe chooses); ``engine``: the generation engine
    on this machine for a full-vocabulary adapter
    (the rule of ``site_agent/generate/engine_rule.py``), ``backend``: ``[generation] backend``,
    ``samples_restricted``: whether that engine samples a restricted output layer."""
    vocabulary, vocabulary_reason = choose_vocabulary(
        settings, engine, backend, machine.cpu, samples_restricted
    )
    # a corpus-vocabulary adapter is priced at transformers' corpus rates whatever ``engine``
    cost, basis = generator_cost(settings.base_model, vocabulary, engine, machine.cpu)
    rows, tokens, accumulation, shape_reason = _pass_shape(cost, settings, memory_limit_gb)
    repeat, repeat_reason = _phi_repeat(shape, settings)
    plain = rows_per_epoch(cost, shape.characters, tokens)
    extra = (repeat - 1) * shape.phi_document_share * plain
    epoch_rows = max(1, round(plain + extra))
    spe = max(1, math.ceil(epoch_rows / (rows * accumulation)))
    epochs, max_steps, steps, budget_reason = _budget(spe, mode, settings)
    seconds = adapt_seconds(cost, steps, rows, tokens, accumulation)
    prompt_share, prompt_reason = _prompt_share(shape, phi_prompt_share)
    return GeneratorRecipe(
        base_model=settings.base_model,
        mode=mode.name,
        memory_limit_gb=round(memory_limit_gb, 1),
        batch_size=rows,
        gradient_accumulation=accumulation,
        max_length=tokens,
        epochs=epochs,
        max_steps=max_steps,
        phi_window_repeat=repeat,
        vocabulary=vocabulary,
        phi_prompt_share=prompt_share,
        rows_per_epoch=epoch_rows,
        steps=steps,
        peak_memory_gb=round(adapt_peak_gb(cost, rows, tokens), 1),
        adapt_hours=round(seconds / 3600, 2),
        reasons=(
            f"{basis}; {machine.memory_gb:.0f} GB machine, {memory_limit_gb:.1f} GB planned for",
            shape_reason,
            repeat_reason,
            budget_reason,
            vocabulary_reason,
            prompt_reason,
        ),
    )


class GenerationBudget(ProtocolModel):
    """How many notes of how many new tokens the run generates, and why."""

    amount: float | None
    max_new_tokens: int | None
    notes: int
    generate_hours: float
    reasons: tuple[str, ...]
    rows_in_flight: int = 8


def batch_row_tokens(
    lengths: Sequence[float],
    cap: int,
    batch: int,
    value: Callable[[float], float] = float,
) -> float:
    """Expected tokens one row of a generation batch runs for (or the expected ``value`` of
    them): a batch runs until its longest note ends, so each of its ``batch`` rows costs the
    longest of ``batch`` notes drawn from ``lengths`` (the real notes, in generator tokens),
    each cut at ``cap``. With sorted lengths l_1 <= ... <= l_n, the longest of b draws is at
    most l_k with probability (k/n)^b. ``cap`` when no lengths are known (every note runs to
    the cap)."""
    if not lengths:
        return value(float(cap))
    capped = sorted(min(float(length), cap) for length in lengths)
    n = len(capped)
    return sum(
        value(length) * ((k / n) ** batch - ((k - 1) / n) ** batch)
        for k, length in enumerate(capped, start=1)
    )


def generation_budget(
    n_train: int,
    notes: int,
    amount: float | None,
    new_tokens: int,
    max_new_tokens: int | None,
    cost: GeneratorCost,
    hours_left: float | None,
    given: Sequence[str] = (),
    lengths: Sequence[float] = (),
    batch: int = 1,
) -> GenerationBudget:
    """Fewer, then shorter notes when ``notes`` x the tokens each costs would not fit in
    ``hours_left`` (what the time budget leaves after the other stages); ``given`` names the
    generation settings ``site.toml`` set, which are kept. Never fewer than one note per
    training note nor shorter than 50 new tokens. A note costs :func:`batch_row_tokens` of
    the real notes' ``lengths`` at ``new_tokens``, ``batch`` notes at a time (``new_tokens``
    itself without lengths); a shorter cap is solved for as if every note reached it."""

    def note_seconds(tokens: int) -> float:  # a row runs as long as its batch's longest note
        return batch_row_tokens(lengths, tokens, batch, lambda t: row_seconds(t, cost))

    def hours(n: int, tokens: int) -> float:
        return n * note_seconds(tokens) / 3600

    per_note = batch_row_tokens(lengths, new_tokens, batch)
    planned = hours(notes, new_tokens)
    if hours_left is None:
        rows = "each its own length: rows refilled" if batch == 1 else f"{batch} at a time"
        reason = (
            f"no [run] time_budget: {notes} notes of up to {new_tokens} new tokens (about "
            f"{per_note:.0f} per note, {rows})"
        )
        return GenerationBudget(
            amount=amount, max_new_tokens=max_new_tokens, notes=notes,
            generate_hours=round(planned, 2), reasons=(reason,),
        )  # fmt: skip
    reasons = []
    if planned > hours_left and "amount" not in given and amount is not None:
        affordable = hours_left * 3600 / note_seconds(new_tokens)
        fewer = max(n_train, min(notes, math.floor(affordable)))
        if fewer < notes:
            amount, notes = round(fewer / max(1, n_train), 3), fewer
            reasons.append(f"time budget: {notes} notes ({amount:g} per training note)")
    if hours(notes, new_tokens) > hours_left and "max_new_tokens" not in given:
        shorter = max(50, math.floor(tokens_in_seconds(hours_left * 3600 / notes, cost)))
        if shorter < new_tokens:
            new_tokens = max_new_tokens = shorter
            reasons.append(f"time budget: at most {new_tokens} new tokens per note")
    spent = hours(notes, new_tokens)
    if spent > hours_left:
        reasons.append(
            f"the generation estimate {spent:.2f} h stays over the {hours_left:.2f} h the time "
            "budget leaves; fix: raise [run] time_budget or lower [generation] amount"
        )
    elif not reasons:
        reasons.append(f"{notes} notes fit in the {hours_left:.2f} h the time budget leaves")
    return GenerationBudget(
        amount=amount, max_new_tokens=max_new_tokens, notes=notes,
        generate_hours=round(spent, 2), reasons=tuple(reasons),
    )  # fmt: skip
