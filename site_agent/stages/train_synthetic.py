"""Stage 8, train-synthetic: what is the audited synthetic corpus worth at this site?

A fresh encoder is fine-tuned on the synthetic corpus alone (same base model and
hyperparameters as the gold annotator; its validation slice is synthetic too, so nothing
real shapes the weights that may be exported). The encoder folder (``trained_on.json``) and
the site report name the SHA-256 of the audited corpus file they came from, which the
export checks against the audit. Both annotators are then scored on the test
split, which nothing else in the pipeline reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import Progress

from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus
from shared.provenance import sha256_file
from site_agent.annotator.diagnosis import training_notes
from site_agent.annotator.encoder import annotate_corpus, train_encoder
from site_agent.annotator.settings import GoldAnnotatorSettings
from site_agent.config import SiteConfig
from site_agent.export.bundle import write_trained_on
from site_agent.models.identity import model_identity
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.plan.memory import MEMORY_FIXES
from site_agent.train_synthetic.report import SiteReport, diagnosed_scores, render_markdown
from site_agent.train_synthetic.sets import synthetic_train_validation, without_spans


def evaluation_file(annotator: str) -> str:
    """The file in the stage folder holding ``annotator``'s ("gold" or "synthetic") test
    evaluation."""
    return f"evaluation_{annotator}.json"


def trained_with(settings: GoldAnnotatorSettings) -> dict[str, Any]:
    """What the site report records as the settings both annotators were trained with."""
    return {
        "base_model": model_identity(settings.base_model).label,
        **settings.training.model_dump(),
    }


def train_synthetic_annotator(
    inputs: dict[str, Path],
    settings: GoldAnnotatorSettings,
    site_id: str,
    language: str,
    out_dir: Path,
    progress: Progress | None = None,
) -> tuple[Path, SiteReport]:
    """Train the synthetic encoder (``settings`` are the gold annotator's), score both
    annotators on test, build the site report."""
    from shared.metrics import corpus_diagnostics, evaluate

    synthetic = read_corpus(inputs["audit.corpus"])
    trained_on = sha256_file(inputs["audit.corpus"])
    train, validation = synthetic_train_validation(synthetic, settings.training.seed)
    trained = train_encoder(
        train, validation, settings.base_model, settings.training, out_dir / "model", progress
    )
    write_trained_on(trained.model_dir, trained_on)
    test = read_corpus(inputs["split.test"])
    blind = without_spans(test)
    predictions = {
        "gold": annotate_corpus(inputs["annotator.model"], blind, progress),
        "synthetic": annotate_corpus(trained.model_dir, blind, progress),
    }
    evaluations = {name: evaluate(test, pred) for name, pred in predictions.items()}
    for name, evaluation in evaluations.items():
        atomic_write_text(out_dir / evaluation_file(name), evaluation.model_dump_json(indent=2))
    real = read_corpus(inputs["split.train"])
    scores = diagnosed_scores(test, predictions, evaluations)
    gold, syn = scores["gold"], scores["synthetic"]
    report = SiteReport(
        site_id=site_id,
        n_test_documents=len(test),
        n_synthetic_documents=len(synthetic),
        gold=gold,
        synthetic=syn,
        token_f1_gap=gold.token_f1 - syn.token_f1,
        real_diagnostics=corpus_diagnostics(real, language=language),
        synthetic_diagnostics=corpus_diagnostics(synthetic, language=language),
        settings=trained_with(settings),
        trained_on_corpus_sha256=trained_on,
        annotator_notes=(
            *_gold_notes(inputs["annotator.model"]),
            *training_notes(trained.record, "synthetic annotator"),
        ),
    )
    return trained.model_dir, report


def _gold_notes(model_dir: Path) -> list[str]:
    from ner.infer import load_record

    record = load_record(model_dir)
    return training_notes(record, "gold annotator") if record else []


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {
        "annotator": config.annotator,
        "language": config.language,
        "site_id": config.site_id,
        "device": config.device,
    }


def _train_synthetic_stage(ctx: StageContext) -> StageOutput:
    config = ctx.config
    model_dir, report = train_synthetic_annotator(
        dict(ctx.inputs), config.annotator, config.site_id, config.language, ctx.stage_dir,
        ctx.progress,
    )  # fmt: skip
    json_path, md_path = ctx.stage_dir / "site_report.json", ctx.stage_dir / "site_report.md"
    atomic_write_text(json_path, report.model_dump_json(indent=2))
    atomic_write_text(md_path, render_markdown(report))
    return StageOutput(
        artifacts={"model": model_dir, "report": json_path, "report_md": md_path},
        summary={
            "gold_token_f1": round(report.gold.token_f1, 4),
            "synthetic_token_f1": round(report.synthetic.token_f1, 4),
            "token_f1_gap": round(report.token_f1_gap, 4),
        },
    )


STAGE = Stage(
    name="train-synthetic",
    run=_train_synthetic_stage,
    settings=_settings,
    inputs=("audit.corpus", "split.test", "split.train", "annotator.model"),
    description="train on synthetic data, evaluate both annotators on the test split",
    memory_fix=MEMORY_FIXES["train-synthetic"],
)
