"""Stage 4, adapt: LoRA/QLoRA domain adaptation of the generator on pseudonymised text.

The generation mode renders each training note first (``[generation] mode``): as it is
(``annotate``), with its identifiers tagged (``tagged``) or replaced by placeholders
(``template``), so the generator learns to write what the mode reads back. Rows and tokens
per pass, accumulation, steps and PHI-window repeats follow the generator recipe
(``site_agent/adapt/recipe.py``) wherever ``[adapt]`` does not set them.

With the corpus output vocabulary (``[adapt] vocabulary``; the recipe's choice unless the
generation engine here cannot load it) the output layer keeps the tokens of that text, of the
generate stage's prompts and of fresh surrogate draws
(``site_agent/generate/vocabulary_texts.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.progress import Progress

from protocol import Corpus
from shared.corpus_io import read_corpus
from shared.progress import ProgressBars
from shared.records import read_record_file
from site_agent.adapt.cost import this_cpu
from site_agent.adapt.data import training_texts
from site_agent.adapt.recipe import GeneratorRecipe, choose_vocabulary
from site_agent.adapt.result import RESULT_FILE, AdaptResult
from site_agent.adapt.settings import AdaptSettings
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.plan.artifact import plan_of_run
from site_agent.plan.estimate import generation_engine, samples_restricted
from site_agent.plan.memory import MEMORY_FIXES
from site_agent.stages.knobs import shared_knobs

if TYPE_CHECKING:
    from site_agent.generate.modes import GenerationMode


def train_adapter(
    train: Corpus,
    settings: AdaptSettings,
    out_dir: Path,
    mode: GenerationMode,
    progress: Progress | None = None,
    recipe: GeneratorRecipe | None = None,
    extra_vocabulary: Callable[[Corpus], list[str]] | None = None,
) -> Path:
    """The adapter folder trained on the (pseudonymised) notes of ``train`` as ``mode``
    renders them, with ``recipe``'s choices where ``settings`` (site.toml) left them open;
    ``extra_vocabulary`` (restricted vocabulary): the other texts whose tokens it keeps."""
    from site_agent.adapt.train import adapt_generator
    from site_agent.models import resolve_model

    texts = training_texts(train, mode.render)
    tokens = mode.added_tokens(train)
    applied = recipe.applied(settings) if recipe is not None else settings
    model = str(resolve_model(settings.base_model, allow_fetch=True))
    bars = ProgressBars(progress, "adapt steps")
    phi = [bool(d.spans) for d in train.documents]
    restricted = applied.vocabulary == "corpus"
    extra = extra_vocabulary(train) if extra_vocabulary and restricted else []
    result = adapt_generator(
        texts, model, applied, out_dir, bars.count, tokens, extra, phi_documents=phi,
        recipe=recipe,
    )  # fmt: skip
    return Path(result.adapter_dir)


def _settings(config: SiteConfig) -> dict[str, Any]:
    memory = (config.run.memory_limit_gb, config.run.memory_share)  # the recipe's shape
    settings: dict[str, Any] = {
        "adapt": config.adapt,
        "device": config.device,
        "mode": config.generation.mode,
        "memory": memory,
    }
    engine = generation_engine(config)
    vocabulary, _why = choose_vocabulary(
        config.adapt, engine, config.generation.backend, this_cpu(), samples_restricted(engine)
    )
    if vocabulary == "corpus":  # what the vocabulary texts depend on
        settings["vocabulary"] = [config.pseudonymise, config.generation.prompt_words]
    return settings


def _adapt_stage(ctx: StageContext) -> StageOutput:
    config = ctx.config
    mode = shared_knobs(ctx).mode
    train = read_corpus(ctx.inputs["pseudonymise.train"])
    recipe = plan_of_run(config.work_dir).generator  # the run's plan, never recomputed here

    def extra(train: Corpus) -> list[str]:
        from site_agent.generate.vocabulary_texts import vocabulary_texts

        validation = read_corpus(ctx.inputs["split.validation"])
        return vocabulary_texts(train, validation, mode, config.pseudonymise, config.generation)

    adapter = train_adapter(
        train, config.adapt, ctx.stage_dir, mode, ctx.progress, recipe, extra,
    )  # fmt: skip
    summary: dict[str, Any] = {"base_model": config.adapt.base_model, "mode": mode.name}
    summary["recipe"] = recipe.model_dump(mode="json", include={"batch_size", "max_length",
        "gradient_accumulation", "phi_window_repeat", "peak_memory_gb"})  # fmt: skip
    done = read_record_file(AdaptResult, ctx.stage_dir / RESULT_FILE)
    # the pre-flight estimates steps from the corpus's characters; the loop counts windows
    summary["steps"] = {"estimated": recipe.steps, "run": done.steps if done else None}
    return StageOutput(artifacts={"adapter": adapter}, summary=summary)


STAGE = Stage(
    name="adapt",
    run=_adapt_stage,
    settings=_settings,
    inputs=("pseudonymise.train", "split.validation"),
    description="domain-adapt the generator (LoRA/QLoRA)",
    memory_fix=MEMORY_FIXES["adapt"],
)
