"""Stage 4, adapt: LoRA/QLoRA domain adaptation of the generator on pseudonymised text.

The generation mode renders each training note first (``[generation] mode``): as it is
(``annotate``), with its identifiers tagged (``tagged``) or replaced by placeholders
(``template``), so the generator learns to write what the mode reads back. Rows and tokens
per pass, accumulation, steps and PHI-window repeats follow the generator recipe
(``site_agent/adapt/recipe.py``) wherever ``[adapt]`` does not set them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.progress import Progress

from shared.corpus_io import read_corpus
from shared.progress import ProgressBars
from site_agent.adapt.data import training_texts
from site_agent.adapt.recipe import GeneratorRecipe, this_machine
from site_agent.adapt.settings import AdaptSettings
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages.knobs import generation_mode
from site_agent.stages.run_plan import MEMORY_FIXES, plan_run

if TYPE_CHECKING:
    from site_agent.generate.modes import GenerationMode


def run(
    train_path: Path,
    settings: AdaptSettings,
    out_dir: Path,
    mode: GenerationMode,
    progress: Progress | None = None,
    recipe: GeneratorRecipe | None = None,
) -> Path:
    """The adapter folder trained on the notes of ``train_path`` as ``mode`` renders them,
    with ``recipe``'s choices where ``settings`` (site.toml) left them open."""
    from site_agent.adapt.train import adapt_generator
    from site_agent.models import resolve_model

    train = read_corpus(train_path)
    texts = training_texts(train, mode.render)
    tokens = mode.added_tokens(train)
    applied = recipe.applied(settings) if recipe is not None else settings
    model = str(resolve_model(settings.base_model, allow_fetch=True))
    bars = ProgressBars(progress, "adapt steps")
    phi = [bool(d.spans) for d in train.documents]
    result = adapt_generator(
        texts, model, applied, out_dir, bars.count, tokens, phi_documents=phi, recipe=recipe
    )
    return Path(result.adapter_dir)


def _settings(config: SiteConfig) -> dict[str, Any]:
    memory = (config.run.memory_limit_gb, config.run.memory_share)  # the recipe's shape
    return {
        "adapt": config.adapt, "device": config.device, "mode": config.generation.mode,
        "memory": memory,
    }  # fmt: skip


def _run(ctx: StageContext) -> StageOutput:
    mode = generation_mode(ctx.config)
    train = read_corpus(ctx.inputs["pseudonymise.train"])
    recipe = plan_run(ctx.config, train, this_machine()).generator
    adapter = run(
        ctx.inputs["pseudonymise.train"], ctx.config.adapt, ctx.stage_dir, mode, ctx.progress,
        recipe,
    )  # fmt: skip
    summary = {"base_model": ctx.config.adapt.base_model, "mode": mode.name}
    summary["recipe"] = recipe.model_dump(mode="json", include={"batch_size", "max_length",
        "gradient_accumulation", "steps", "phi_window_repeat", "peak_memory_gb"})  # fmt: skip
    return StageOutput(artifacts={"adapter": adapter}, summary=summary)


STAGE = Stage(
    name="adapt",
    run=_run,
    settings=_settings,
    inputs=("pseudonymise.train",),
    description="domain-adapt the generator (LoRA/QLoRA)",
    memory_fix=MEMORY_FIXES["adapt"],
)
