"""Stage 4, adapt: LoRA/QLoRA domain adaptation of the generator on pseudonymised text.

The generation mode renders each training note first (``[generation] mode``): as it is
(``annotate``), with its identifiers tagged (``tagged``) or replaced by placeholders
(``template``), so the generator learns to write what the mode reads back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.progress import Progress

from shared.corpus_io import read_corpus
from shared.progress import ProgressBars
from site_agent.adapt.data import training_texts
from site_agent.adapt.settings import AdaptSettings
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages.knobs import generation_mode

if TYPE_CHECKING:
    from site_agent.generate.modes import GenerationMode


def run(
    train_path: Path,
    settings: AdaptSettings,
    out_dir: Path,
    mode: GenerationMode,
    progress: Progress | None = None,
) -> Path:
    """The adapter folder trained on the notes of ``train_path`` as ``mode`` renders them."""
    from site_agent.adapt.train import adapt_generator
    from site_agent.models import resolve_model

    train = read_corpus(train_path)
    texts = training_texts(train, mode.render)
    tokens = mode.added_tokens(train)
    model = str(resolve_model(settings.base_model, allow_fetch=True))
    bars = ProgressBars(progress, "adapt steps")
    return Path(adapt_generator(texts, model, settings, out_dir, bars.count, tokens).adapter_dir)


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"adapt": config.adapt, "device": config.device, "mode": config.generation.mode}


def _run(ctx: StageContext) -> StageOutput:
    mode = generation_mode(ctx.config)
    adapter = run(
        ctx.inputs["pseudonymise.train"], ctx.config.adapt, ctx.stage_dir, mode, ctx.progress
    )
    return StageOutput(
        artifacts={"adapter": adapter},
        summary={"base_model": ctx.config.adapt.base_model, "mode": mode.name},
    )


STAGE = Stage(
    name="adapt",
    run=_run,
    settings=_settings,
    inputs=("pseudonymise.train",),
    description="domain-adapt the generator (LoRA/QLoRA)",
)
