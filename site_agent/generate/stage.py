"""Stage 5, generate: sample synthetic notes from the adapted generator.

Prompts are the first ``prompt_words`` words of each validation note, cut before its first
PII span so that no real identifier seeds a synthetic note (``plan``). The amount is a
multiple of the training split (4x by default) spread evenly over the prompts. Generation
resumes from the partial output file after an interruption.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import Progress

from protocol import Corpus
from shared.corpus_io import read_corpus, write_corpus
from site_agent.config import SiteConfig
from site_agent.generate.plan import plan_for_model
from site_agent.generate.settings import GenerationSettings
from site_agent.pipeline.progress import ProgressBars
from site_agent.pipeline.stage import Stage, StageContext, StageOutput

PARTIAL_FILE = "generation.partial.jsonl"  # the generator's resumable store
CORPUS_FILE = "synthetic.raw.jsonl"


def run(
    adapter_dir: Path,
    validation: Corpus,
    n_train: int,
    base_model: str,
    settings: GenerationSettings,
    out_dir: Path,
    progress: Progress | None = None,
) -> tuple[Corpus, int]:
    """Sample the planned notes from ``base_model`` + adapter; returns them and the number of
    prompts. Resumes from a partial store in ``out_dir``."""
    from site_agent.generate.run import generate_corpus
    from site_agent.models import resolve_model

    model = str(resolve_model(base_model, allow_fetch=True))
    plan = plan_for_model(validation, n_train, model, settings)
    bars = ProgressBars(progress, "generated notes")
    corpus = generate_corpus(plan, model, adapter_dir, settings, out_dir / PARTIAL_FILE, bars.count)
    return corpus, len(plan.prompts)


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {
        "generation": config.generation,
        "base_model": config.adapt.base_model,
        "device": config.device,
    }


def _run(ctx: StageContext) -> StageOutput:
    config = ctx.config
    corpus, prompts = run(
        ctx.inputs["adapt.adapter"],
        read_corpus(ctx.inputs["split.validation"]),
        len(read_corpus(ctx.inputs["pseudonymise.train"])),
        config.adapt.base_model,
        config.generation,
        ctx.stage_dir,
        ctx.progress,
    )
    out_path = ctx.stage_dir / CORPUS_FILE
    write_corpus(corpus, out_path)
    return StageOutput(
        artifacts={"corpus": out_path},
        summary={"prompts": prompts, "documents": len(corpus)},
    )


STAGE = Stage(
    name="generate",
    run=_run,
    settings=_settings,
    inputs=("adapt.adapter", "split.validation", "pseudonymise.train"),
    description="sample synthetic notes",
)
