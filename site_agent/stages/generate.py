"""Stage 5, generate: sample synthetic notes from the adapted generator
(``site_agent/generate/notes.py``), with the run plan's prompt share and budget applied.

Prompts are the first ``prompt_words`` words of each validation note with their identifiers
replaced by surrogates, rendered as the generation mode renders notes, so no real identifier
seeds a synthetic note. The amount is a multiple of the training split (membership canaries
do not count); after the first notes the PHI rate the generator writes is checked against
the training notes' (stopping outside its band). Generation resumes from its partial store
after an interruption.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_jsonable_python

from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus, write_corpus
from shared.provenance import config_digest
from site_agent.audit.reference import generator_reference
from site_agent.config import SiteConfig
from site_agent.generate.forbidden import forbidden_surfaces
from site_agent.generate.modes import SeedNotes
from site_agent.generate.notes import PARTIAL_FILE, generate_notes
from site_agent.generate.phi_rate import PhiRateCheck
from site_agent.generate.plan import origin_summary, prompt_origin
from site_agent.generate.resumable import resumed_summary, run_history, store_files
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.plan.apply import applied_generation
from site_agent.plan.artifact import plan_of_run
from site_agent.stages.knobs import identifying_index, shared_knobs

CORPUS_FILE = "synthetic.raw.jsonl"
PROMPT_ORIGIN = "prompt-origin.json"  # private: which validation notes, how many words each


def generator_digest(config: SiteConfig) -> str:
    """The settings the generated notes depend on (not the filler's or the audit's): where
    they changed, the kept store is started over."""
    return config_digest(to_jsonable_python(_generator_settings(config)))


def _generator_settings(config: SiteConfig) -> dict[str, Any]:
    return {
        "generation": config.generation,
        "base_model": config.adapt.base_model,
        "device": config.device,
        "time_budget": config.run.time_budget,  # may cut the amount and the token budget
    }


def _settings(config: SiteConfig) -> dict[str, Any]:
    filters = config.audit.policy.filters
    return {
        **_generator_settings(config),
        "surrogates": config.pseudonymise,
        # the filler avoids what this filter would drop (template mode)
        "identifying_ngrams": (
            filters.sensitive_ngram_n,
            filters.sensitive_ngram_min_share,
            filters.sensitive_ngram_identifiers,
        ),
    }


def _generate_stage(ctx: StageContext) -> StageOutput:
    config = ctx.config
    train = read_corpus(ctx.inputs["pseudonymise.train"])
    validation = read_corpus(ctx.inputs["split.validation"])
    seeds = SeedNotes(
        train,
        config.pseudonymise,
        forbidden_surfaces(
            generator_reference(train, validation), ctx.inputs["pseudonymise.surrogates"]
        ),
        identifying_index(config, ctx.inputs["split.train"], ctx.inputs["split.validation"]),
    )
    settings = applied_generation(config, plan_of_run(config.work_dir))
    origin = prompt_origin(validation, settings.prompt_words, settings.phi_prompt_share)
    atomic_write_text(ctx.stage_dir / PROMPT_ORIGIN, json.dumps(origin, indent=1))
    checks: list[PhiRateCheck] = []
    before = run_history(ctx.stage_dir / PARTIAL_FILE)
    labelled, prompts = generate_notes(
        ctx.inputs["adapt.adapter"],
        validation,
        seeds,
        config.adapt.base_model,
        settings,
        shared_knobs(ctx).mode,
        ctx.stage_dir,
        ctx.progress,
        checks,
    )
    out_path = ctx.stage_dir / CORPUS_FILE
    write_corpus(labelled.corpus, out_path)
    summary: dict[str, Any] = {"mode": config.generation.mode, "prompts": prompts}
    summary |= origin_summary(origin)
    summary |= {"documents": len(labelled.corpus), **labelled.summary}
    summary["phi_prompt_share"] = settings.phi_prompt_share
    summary["phi_rate"] = checks[0].model_dump(mode="json") if checks else "not checked"
    summary |= resumed_summary(before, run_history(ctx.stage_dir / PARTIAL_FILE))
    summary["generator_digest"] = generator_digest(config)
    return StageOutput(artifacts={"corpus": out_path}, summary=summary)


STAGE = Stage(
    name="generate",
    run=_generate_stage,
    settings=_settings,
    inputs=(
        "adapt.adapter",
        "split.validation",
        "pseudonymise.train",
        "pseudonymise.surrogates",
        "split.train",
    ),
    description="sample synthetic notes",
    keeps=store_files(PARTIAL_FILE),  # a re-run for the filler's or audit's settings resumes
)
