"""Stage 6, annotate: the gold annotator labels the PII in the synthetic notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.site_config import SiteConfig
from shared.corpus_io import read_corpus, write_corpus
from site_agent.stages import engines
from site_agent.stages.base import Stage, StageContext, StageOutput


def annotate_synthetic(
    model_dir: Path, corpus_path: Path, config: SiteConfig, out_path: Path
) -> int:
    """Write the machine-annotated corpus; return how many spans were found."""
    annotated = engines.annotate(model_dir, read_corpus(corpus_path), config)
    write_corpus(annotated, out_path)
    return sum(len(d.spans) for d in annotated.documents)


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"chunk_words": config.annotator.training.chunk_words, "device": config.device}


def _run(ctx: StageContext) -> StageOutput:
    out_path = ctx.stage_dir / "synthetic.annotated.jsonl"
    spans = annotate_synthetic(
        ctx.inputs["annotator.model"], ctx.inputs["generate.corpus"], ctx.config, out_path
    )
    return StageOutput(artifacts={"corpus": out_path}, summary={"spans": spans})


STAGE = Stage(
    name="annotate",
    run=_run,
    settings=_settings,
    inputs=("annotator.model", "generate.corpus"),
    description="machine-annotate the synthetic notes",
)
