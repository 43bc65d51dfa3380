"""Stage 4, adapt: LoRA/QLoRA domain adaptation of the generator on pseudonymised text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import Progress

from protocol.site_config import SiteConfig
from shared.corpus_io import read_corpus
from site_agent.stages import engines
from site_agent.stages.base import Stage, StageContext, StageOutput


def adapt_on_training_text(
    train_path: Path, config: SiteConfig, out_dir: Path, progress: Progress | None
) -> Path:
    """The adapter folder trained on the texts of ``train_path`` (spans are not used)."""
    texts = [doc.text for doc in read_corpus(train_path).documents]
    return engines.adapt(texts, config.adapt, out_dir, progress)


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"adapt": config.adapt, "device": config.device}


def _run(ctx: StageContext) -> StageOutput:
    adapter = adapt_on_training_text(
        ctx.inputs["pseudonymise.train"], ctx.config, ctx.stage_dir, ctx.progress
    )
    return StageOutput(
        artifacts={"adapter": adapter},
        summary={"base_model": ctx.config.adapt.base_model},
    )


STAGE = Stage(
    name="adapt",
    run=_run,
    settings=_settings,
    inputs=("pseudonymise.train",),
    description="domain-adapt the generator (LoRA/QLoRA)",
)
