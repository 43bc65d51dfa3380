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
from site_agent.annotator.settings import GoldAnnotatorSettings, rare_labels
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.plan.memory import MEMORY_FIXES

METRICS_FILE = "metrics.json"


def train_gold_annotator(
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
    record = trained.record
    check_annotator_quality(
        trained.best_metrics, settings.min_validation_recall, record,
        rare=rare_labels(record.train_mentions, settings.rare_label_mentions),
        exclude_rare=settings.rare_labels == "exclude",
    )  # fmt: skip
    return trained


def stage_summary(trained: TrainedEncoder, base_model: str) -> dict[str, Any]:
    """What the site pipeline table shows for this stage: model, recall, recipe, restarts."""
    record = trained.record
    summary: dict[str, Any] = {"base_model": base_model}
    best = trained.best_metrics
    if best is not None:
        summary["recall"] = round(best.recall, 3)
    if record.recipe is not None and record.recipe.sparse:
        summary["sparse_phi"] = f"{record.recipe.phi_word_density:.2%}"
    summary["epochs"] = len(record.epochs)
    if record.restarts:
        summary["stall_restarts"] = record.restarts
    return summary


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"annotator": config.annotator, "device": config.device}


def _annotator_stage(ctx: StageContext) -> StageOutput:
    inputs = ctx.inputs
    trained = train_gold_annotator(
        inputs["split.train"], inputs["split.validation"], ctx.config.annotator, ctx.stage_dir,
        ctx.progress,
    )  # fmt: skip
    return StageOutput(
        artifacts={"model": trained.model_dir, "metrics": ctx.stage_dir / METRICS_FILE},
        summary=stage_summary(trained, ctx.config.annotator.base_model),
    )


STAGE = Stage(
    name="annotator",
    run=_annotator_stage,
    settings=_settings,
    inputs=("split.train", "split.validation"),
    description="fine-tune the gold machine annotator (never exported)",
    memory_fix=MEMORY_FIXES["annotator"],
)
