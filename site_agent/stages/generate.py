"""Stage 5, generate: sample synthetic notes from the adapted generator.

Prompts are the first ``prompt_words`` words of each validation note with their identifiers
replaced by surrogates, rendered as the generation mode renders notes (``prompts``, ``plan``),
so no real identifier seeds a synthetic note. The amount is a multiple of the training split
(4x by default; membership canaries in the training text do not count) spread evenly over
the prompts (on a corpus where most notes hold no PHI, the recipe's share of them open at an
identifier). After the first notes the PHI rate the generator writes is checked against the
training notes' (``generate/phi_rate.py``); far below, the stage stops with a diagnosis.
Generation resumes from the partial output file after an interruption. The
mode then reads the generated notes into the synthetic corpus (``modes/``): plain notes,
notes whose tags are the spans, or filled templates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python
from rich.progress import Progress

from protocol import Corpus, Document
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus, write_corpus
from shared.progress import ProgressBars
from shared.provenance import config_digest
from site_agent.audit.reference import generator_reference
from site_agent.canaries.membership import is_membership_canary
from site_agent.config import SiteConfig
from site_agent.generate.modes import GenerationMode, Labelled, SeedNotes
from site_agent.generate.phi_rate import PhiRateCheck, check_phi_rate, real_rate
from site_agent.generate.plan import GenerationPlan, plan_for_model, prompt_origin
from site_agent.generate.prompts import prompt_renderer
from site_agent.generate.run import RunHistory, run_history, store_files
from site_agent.generate.settings import GenerationSettings
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.plan.apply import applied_generation
from site_agent.plan.artifact import plan_of_run
from site_agent.pseudonymise.records import read_surrogates, sensitive_surfaces
from site_agent.stages.knobs import generation_mode, identifying_index

PARTIAL_FILE = "generation.partial.jsonl"  # the generator's resumable store
CORPUS_FILE = "synthetic.raw.jsonl"
PROMPT_ORIGIN = "prompt-origin.json"  # private: which validation notes, how many words each


def run(
    adapter_dir: Path,
    validation: Corpus,
    seeds: SeedNotes,
    base_model: str,
    settings: GenerationSettings,
    mode: GenerationMode,
    out_dir: Path,
    progress: Progress | None = None,
    checks: list[PhiRateCheck] | None = None,
) -> tuple[Labelled, int]:
    """Sample the planned notes from ``base_model`` + adapter and read them as the mode does;
    returns the synthetic corpus (with what reading found) and the number of prompts. Resumes
    from a partial store in ``out_dir``. After ``phi_check_after`` notes the PHI the generator
    wrote is checked against the training notes' (a PhiRateError stops the run); the check
    is appended to ``checks``."""
    from site_agent.generate.run import generate_corpus
    from site_agent.models import resolve_model

    model = str(resolve_model(base_model, allow_fetch=True))
    render = prompt_renderer(mode, seeds.surrogates)
    notes = sum(not is_membership_canary(d) for d in seeds.train.documents)  # canaries aside
    plan = plan_for_model(validation, notes, model, settings, render)
    bars = ProgressBars(progress, "generated notes")
    real = real_rate(
        Corpus(documents=tuple(d for d in seeds.train.documents if not is_membership_canary(d)))
    )

    def check(docs: Sequence[Document], planned: GenerationPlan) -> None:
        found = check_phi_rate(mode, real, docs, planned.prompts, settings.min_phi_rate)
        if found is not None and checks is not None:
            checks.append(found)

    raw = generate_corpus(
        plan, model, adapter_dir, settings, out_dir / PARTIAL_FILE, bars.count,
        check=check if settings.min_phi_rate > 0 else None, check_after=settings.phi_check_after,
        replace_other_run=True,  # the stage's own store, kept across re-runs
    )  # fmt: skip
    return mode.label(raw, seeds, settings), len(plan.prompts)


def forbidden_surfaces(seen: Corpus, inputs: Mapping[str, Path]) -> tuple[str, ...]:
    """Identifier strings no filler may write: the gold strings the pseudonymiser replaced,
    their surrogates, and every span of the notes the generator saw (``seen``: the training
    text and the validation notes its prompts come from, as the audit's PII echo reads them)."""
    known = sensitive_surfaces(read_surrogates(inputs["pseudonymise.surrogates"]))
    spans = {d.surface(s) for d in seen.documents for s in d.spans}
    return tuple(sorted(spans.union(known["originals"], known["surrogates"])))


def origin_summary(origin: list[dict[str, int | str | bool]]) -> dict[str, int]:
    """What stage.json says of the prompts' real text (the ids stay in ``PROMPT_ORIGIN``)."""
    words = [int(o["words"]) for o in origin]
    return {
        "prompt_notes": len(origin),
        "prompt_words_max": max(words, default=0),
        "prompt_words_total": sum(words),
        "prompts_at_identifier": sum(bool(o["at_identifier"]) for o in origin),
    }


def resumed_summary(before: RunHistory | None, after: RunHistory | None) -> dict[str, Any]:
    """How many invocations generated this corpus and the generating seconds of those before
    this one (``stage.json``'s seconds are this invocation's only), from the partial store's
    history before and after it."""
    if after is None:
        return {}
    same = before is not None and before.digest == after.digest
    earlier = before.seconds if same and before is not None else 0.0
    return {"generation_runs": after.invocations, "seconds_earlier_runs": round(earlier, 1)}


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


def _run(ctx: StageContext) -> StageOutput:
    config = ctx.config
    train = read_corpus(ctx.inputs["pseudonymise.train"])
    validation = read_corpus(ctx.inputs["split.validation"])
    seeds = SeedNotes(
        train,
        config.pseudonymise,
        forbidden_surfaces(generator_reference(train, validation), ctx.inputs),
        identifying_index(config, ctx.inputs["split.train"], ctx.inputs["split.validation"]),
    )
    settings = applied_generation(config, plan_of_run(config.work_dir))
    origin = prompt_origin(validation, settings.prompt_words, settings.phi_prompt_share)
    atomic_write_text(ctx.stage_dir / PROMPT_ORIGIN, json.dumps(origin, indent=1))
    checks: list[PhiRateCheck] = []
    before = run_history(ctx.stage_dir / PARTIAL_FILE)
    labelled, prompts = run(
        ctx.inputs["adapt.adapter"],
        validation,
        seeds,
        config.adapt.base_model,
        settings,
        generation_mode(config),
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
    run=_run,
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
