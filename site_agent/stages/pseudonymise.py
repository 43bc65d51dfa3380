"""Stage 2, pseudonymise: the training text the generator will learn from, PII replaced.

Writes ``train.jsonl`` (pseudonymised, with the audit's canaries planted when configured),
the site-private ``surrogates.private.jsonl`` (original -> surrogate pairs, searched by the
audit's PII echo), ``canaries.private.json`` (identifier canaries) and
``membership_canaries.private.json`` (membership canaries, planted and kept out); the last
two are empty when none are asked for. None is exported, and only the generator reads
``train.jsonl``: the gold split and the annotator never see a canary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus, write_corpus
from site_agent.canaries.identifiers import plant_canaries
from site_agent.canaries.membership import make_membership_canaries
from site_agent.canaries.settings import CanarySettings
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.pseudonymise.corpus import PseudonymiseResult, pseudonymise_corpus
from site_agent.pseudonymise.records import SURROGATES_FILE, write_surrogates
from site_agent.pseudonymise.settings import PseudonymiseSettings

CANARIES_FILE = "canaries.private.json"
MEMBERSHIP_CANARIES_FILE = "membership_canaries.private.json"


@dataclass(frozen=True)
class GeneratorTrainingText:
    corpus: Path
    surrogates: Path
    canaries: Path
    membership_canaries: Path
    result: PseudonymiseResult
    n_canaries: int
    n_membership_canaries: int


def pseudonymise_training_split(
    train_path: Path,
    settings: PseudonymiseSettings,
    canaries: CanarySettings | int,
    out_dir: Path,
) -> GeneratorTrainingText:
    """Pseudonymise the training split, then plant the audit's canaries if asked
    (an integer ``canaries`` means that many identifier canaries)."""
    if isinstance(canaries, int):
        canaries = CanarySettings(identifiers=canaries)
    result = pseudonymise_corpus(read_corpus(train_path), settings)
    corpus = result.corpus
    canaries_json = membership_json = ""
    if canaries.identifiers:
        corpus, planted = plant_canaries(
            corpus, canaries.identifiers, seed=settings.seed, locale=settings.locale
        )
        canaries_json = planted.model_dump_json(indent=2)
    if canaries.count:
        corpus, membership = make_membership_canaries(corpus, canaries, locale=settings.locale)
        membership_json = membership.model_dump_json(indent=2)
    paths = (
        out_dir / "train.jsonl",
        out_dir / SURROGATES_FILE,
        out_dir / CANARIES_FILE,
        out_dir / MEMBERSHIP_CANARIES_FILE,
    )
    write_corpus(corpus, paths[0])
    write_surrogates(result.surrogates, paths[1])
    atomic_write_text(paths[2], canaries_json)
    atomic_write_text(paths[3], membership_json)
    return GeneratorTrainingText(
        *paths,
        result=result,
        n_canaries=canaries.identifiers,
        n_membership_canaries=canaries.count,
    )


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"pseudonymise": config.pseudonymise, "canaries": config.audit.canaries}


def _pseudonymise_stage(ctx: StageContext) -> StageOutput:
    config = ctx.config
    made = pseudonymise_training_split(
        ctx.inputs["split.train"], config.pseudonymise, config.audit.canaries, ctx.stage_dir
    )
    return StageOutput(
        artifacts={
            "train": made.corpus,
            "surrogates": made.surrogates,
            "canaries": made.canaries,
            "membership_canaries": made.membership_canaries,
        },
        summary={
            "mode": ctx.config.pseudonymise.mode,
            "documents": len(made.result.corpus),
            "replacements": len(made.result.surrogates),
            "dropped_sentences": made.result.dropped_sentences,
            "dropped_documents": made.result.dropped_documents,
            "canaries": made.n_canaries,
            "membership_canaries": made.n_membership_canaries,
        },
    )


STAGE = Stage(
    name="pseudonymise",
    run=_pseudonymise_stage,
    settings=_settings,
    inputs=("split.train",),
    description="replace gold PII in the training text",
)
