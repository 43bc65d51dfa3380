"""Stage 2, pseudonymise: the training text the generator will learn from, PII replaced.

Writes ``train.jsonl`` (pseudonymised, with audit canaries planted when configured), the
site-private ``surrogates.private.jsonl`` (original -> surrogate pairs, searched by the
audit's PII echo) and ``canaries.private.json`` (empty when no canaries); none is exported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus, write_corpus
from site_agent.audit.canaries import plant_canaries
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.pseudonymise import PseudonymiseResult, pseudonymise_corpus
from site_agent.pseudonymise.records import SURROGATES_FILE, write_surrogates
from site_agent.pseudonymise.settings import PseudonymiseSettings

CANARIES_FILE = "canaries.private.json"


@dataclass(frozen=True)
class GeneratorTrainingText:
    corpus: Path
    surrogates: Path
    canaries: Path
    result: PseudonymiseResult
    n_canaries: int


def run(
    train_path: Path, settings: PseudonymiseSettings, canaries: int, out_dir: Path
) -> GeneratorTrainingText:
    """Pseudonymise the training split, then plant ``canaries`` audit canaries if asked."""
    result = pseudonymise_corpus(read_corpus(train_path), settings)
    corpus = result.corpus
    canaries_json = ""
    if canaries:
        corpus, planted = plant_canaries(
            corpus, canaries, seed=settings.seed, locale=settings.locale
        )
        canaries_json = planted.model_dump_json(indent=2)
    paths = (out_dir / "train.jsonl", out_dir / SURROGATES_FILE, out_dir / CANARIES_FILE)
    write_corpus(corpus, paths[0])
    write_surrogates(result.surrogates, paths[1])
    atomic_write_text(paths[2], canaries_json)
    return GeneratorTrainingText(*paths, result=result, n_canaries=canaries)


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"pseudonymise": config.pseudonymise, "canaries": config.audit.canaries}


def _run(ctx: StageContext) -> StageOutput:
    config = ctx.config
    made = run(ctx.inputs["split.train"], config.pseudonymise, config.audit.canaries, ctx.stage_dir)
    return StageOutput(
        artifacts={"train": made.corpus, "surrogates": made.surrogates, "canaries": made.canaries},
        summary={
            "mode": ctx.config.pseudonymise.mode,
            "documents": len(made.result.corpus),
            "replacements": len(made.result.surrogates),
            "dropped_sentences": made.result.dropped_sentences,
            "dropped_documents": made.result.dropped_documents,
            "canaries": made.n_canaries,
        },
    )


STAGE = Stage(
    name="pseudonymise",
    run=_run,
    settings=_settings,
    inputs=("split.train",),
    description="replace gold PII in the training text",
)
