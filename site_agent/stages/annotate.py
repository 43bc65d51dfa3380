"""Stage 6, annotate: the synthetic notes get their PII spans.

Who labels them is the generation mode's choice (``[generation] mode``): the gold-trained
annotator (``annotate``, seed 000) or the generator itself, whose tags or filled
placeholders became the spans in the generate stage (``tagged``, ``template``); those spans
are kept as they are, not re-annotated. Either way this stage's corpus is what the privacy
audit reads.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.progress import Progress

from protocol import Corpus
from shared.corpus_io import read_corpus, write_corpus
from site_agent.annotator.encoder import annotate_corpus
from site_agent.config import SiteConfig
from site_agent.generate.modes import GenerationMode, SpanSource
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.stages.knobs import shared_knobs

CORPUS_FILE = "synthetic.annotated.jsonl"

Labeller = Callable[[Path, Corpus, "Progress | None"], Corpus]


def _machine(model_dir: Path, corpus: Corpus, progress: Progress | None) -> Corpus:
    return annotate_corpus(model_dir, corpus, progress)


def _generated(model_dir: Path, corpus: Corpus, progress: Progress | None) -> Corpus:
    return corpus


LABELLERS: dict[SpanSource, Labeller] = {"annotator": _machine, "generator": _generated}
"""Who labels the synthetic notes, by the mode's span source."""


def label_synthetic_notes(
    model_dir: Path,
    corpus_path: Path,
    out_path: Path,
    mode: GenerationMode,
    progress: Progress | None = None,
) -> int:
    """Write the labelled corpus; return how many spans it holds."""
    source = mode.spans
    annotated = LABELLERS[source](model_dir, read_corpus(corpus_path), progress)
    notes = {**annotated.provenance.notes, "mode": mode.name, "spans_from": source}
    provenance = annotated.provenance.model_copy(update={"notes": notes})
    annotated = annotated.model_copy(update={"provenance": provenance})
    write_corpus(annotated, out_path)
    return sum(len(d.spans) for d in annotated.documents)


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"device": config.device, "mode": config.generation.mode}


def _annotate_stage(ctx: StageContext) -> StageOutput:
    out_path = ctx.stage_dir / CORPUS_FILE
    mode = shared_knobs(ctx).mode
    spans = label_synthetic_notes(
        ctx.inputs["annotator.model"], ctx.inputs["generate.corpus"], out_path, mode, ctx.progress
    )
    summary = {"spans": spans, "mode": mode.name, "spans_from": mode.spans}
    return StageOutput(artifacts={"corpus": out_path}, summary=summary)


STAGE = Stage(
    name="annotate",
    run=_annotate_stage,
    settings=_settings,
    inputs=("annotator.model", "generate.corpus"),
    description="label the synthetic notes (annotator, or the generator's own spans)",
)
