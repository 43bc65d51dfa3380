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

from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus
from site_agent.annotator.encoder import TrainedEncoder, train_encoder
from site_agent.annotator.gate import check_annotator_quality
from site_agent.annotator.settings import GoldAnnotatorSettings
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput

METRICS_FILE = "metrics.json"


def run(
    train_path: Path,
    validation_path: Path,
    settings: GoldAnnotatorSettings,
    out_dir: Path,
    progress: Progress | None = None,
) -> TrainedEncoder:
    """Train, write ``metrics.json``, then apply the recall gate."""
    trained = train_encoder(
        read_corpus(train_path),
        read_corpus(validation_path),
        settings.base_model,
        settings.training,
        out_dir / "model",
        progress,
    )
    atomic_write_text(out_dir / METRICS_FILE, json.dumps(trained.metrics, indent=2))
    check_annotator_quality(trained.metrics, settings.min_validation_recall)
    return trained


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"annotator": config.annotator, "device": config.device}


def _run(ctx: StageContext) -> StageOutput:
    inputs = ctx.inputs
    trained = run(
        inputs["split.train"], inputs["split.validation"], ctx.config.annotator, ctx.stage_dir,
        ctx.progress,
    )  # fmt: skip
    return StageOutput(
        artifacts={"model": trained.model_dir, "metrics": ctx.stage_dir / METRICS_FILE},
        summary={"base_model": ctx.config.annotator.base_model},
    )


STAGE = Stage(
    name="annotator",
    run=_run,
    settings=_settings,
    inputs=("split.train", "split.validation"),
    description="fine-tune the gold machine annotator (never exported)",
)
