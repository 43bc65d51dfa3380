"""Stage 3, annotator: fine-tune the machine annotator on the gold training split.

The quality gate stops the pipeline when validation recall is below
``annotator.min_validation_recall``: a weak annotator would label synthetic notes badly and
everything downstream would learn its mistakes. These gold-trained weights never leave.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.progress import Progress

from protocol.site_config import AnnotatorSection, SiteConfig
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus
from site_agent.stages import engines
from site_agent.stages.base import Stage, StageContext, StageOutput


def train_gold_annotator(
    train_path: Path,
    validation_path: Path,
    section: AnnotatorSection,
    config: SiteConfig,
    out_dir: Path,
    progress: Progress | None,
) -> engines.TrainedEncoder:
    """Train, write ``metrics.json``, then apply the recall gate."""
    trained = engines.train_encoder(
        read_corpus(train_path),
        read_corpus(validation_path),
        section.base_model,
        section.training,
        out_dir / "model",
        progress,
    )
    atomic_write_text(out_dir / "metrics.json", json.dumps(trained.metrics, indent=2))
    engines.check_quality(trained.metrics, section.min_validation_recall)
    return trained


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"annotator": config.annotator, "device": config.device}


def _run(ctx: StageContext) -> StageOutput:
    trained = train_gold_annotator(
        ctx.inputs["split.train"],
        ctx.inputs["split.validation"],
        ctx.config.annotator,
        ctx.config,
        ctx.stage_dir,
        ctx.progress,
    )
    return StageOutput(
        artifacts={"model": trained.model_dir, "metrics": ctx.stage_dir / "metrics.json"},
        summary={"base_model": ctx.config.annotator.base_model},
    )


STAGE = Stage(
    name="annotator",
    run=_run,
    settings=_settings,
    inputs=("split.train", "split.validation"),
    description="fine-tune the gold machine annotator (never exported)",
)
