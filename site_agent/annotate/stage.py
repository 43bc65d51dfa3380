"""Stage 6, annotate: the gold annotator labels the PII in the synthetic notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import Progress

from shared.corpus_io import read_corpus, write_corpus
from site_agent.annotator.encoder import annotate_corpus
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput

CORPUS_FILE = "synthetic.annotated.jsonl"


def run(
    model_dir: Path, corpus_path: Path, out_path: Path, progress: Progress | None = None
) -> int:
    """Write the machine-annotated corpus; return how many spans were found."""
    annotated = annotate_corpus(model_dir, read_corpus(corpus_path), progress)
    write_corpus(annotated, out_path)
    return sum(len(d.spans) for d in annotated.documents)


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"device": config.device}


def _run(ctx: StageContext) -> StageOutput:
    out_path = ctx.stage_dir / CORPUS_FILE
    spans = run(
        ctx.inputs["annotator.model"], ctx.inputs["generate.corpus"], out_path, ctx.progress
    )
    return StageOutput(artifacts={"corpus": out_path}, summary={"spans": spans})


STAGE = Stage(
    name="annotate",
    run=_run,
    settings=_settings,
    inputs=("annotator.model", "generate.corpus"),
    description="machine-annotate the synthetic notes",
)
