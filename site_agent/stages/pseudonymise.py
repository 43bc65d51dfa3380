"""Stage 2, pseudonymise: the training split the generator will learn from, PII replaced.

Writes ``train.jsonl`` (pseudonymised) and the site-private ``surrogates.private.jsonl``
(original -> surrogate pairs, read by the audit's PII echo, never exported).
"""

from __future__ import annotations

from pathlib import Path

from protocol.site_config import PseudonymiseSection, SiteConfig
from shared.corpus_io import read_corpus, write_corpus
from site_agent.pseudonymise import PseudonymiseResult, pseudonymise_corpus
from site_agent.pseudonymise.records import SURROGATES_FILE, write_surrogates
from site_agent.stages.base import Stage, StageContext, StageOutput


def pseudonymise_training_split(
    train_path: Path, settings: PseudonymiseSection, out_dir: Path
) -> tuple[Path, Path, PseudonymiseResult]:
    """Pseudonymise ``train_path``; return (corpus file, surrogates file, result)."""
    result = pseudonymise_corpus(read_corpus(train_path), settings)
    corpus_path = out_dir / "train.jsonl"
    surrogates_path = out_dir / SURROGATES_FILE
    write_corpus(result.corpus, corpus_path)
    write_surrogates(result.surrogates, surrogates_path)
    return corpus_path, surrogates_path, result


def _settings(config: SiteConfig) -> PseudonymiseSection:
    return config.pseudonymise


def _run(ctx: StageContext) -> StageOutput:
    corpus, surrogates, result = pseudonymise_training_split(
        ctx.inputs["split.train"], ctx.config.pseudonymise, ctx.stage_dir
    )
    return StageOutput(
        artifacts={"train": corpus, "surrogates": surrogates},
        summary={
            "mode": ctx.config.pseudonymise.mode,
            "documents": len(result.corpus),
            "replacements": len(result.surrogates),
            "dropped_sentences": result.dropped_sentences,
            "dropped_documents": result.dropped_documents,
        },
    )


STAGE = Stage(
    name="pseudonymise",
    run=_run,
    settings=_settings,
    inputs=("split.train",),
    description="replace gold PII in the training text",
)
