"""Stage 5, generate: sample synthetic notes from the adapted generator.

Prompts are the first ``prompt_words`` words of each validation note with their identifiers
replaced by surrogates, rendered as the generation mode renders notes (``prompts``, ``plan``),
so no real identifier seeds a synthetic note. The amount is a multiple of the training split
(4x by default; membership canaries in the training text do not count) spread evenly over
the prompts. Generation resumes from the partial output file after an interruption. The
mode then reads the generated notes into the synthetic corpus (``modes/``): plain notes,
notes whose tags are the spans, or filled templates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.progress import Progress

from protocol import Corpus
from shared.atomic import atomic_write_text
from shared.corpus_io import read_corpus, write_corpus
from shared.progress import ProgressBars
from site_agent.canaries.membership import is_membership_canary
from site_agent.config import SiteConfig
from site_agent.generate.modes import GenerationMode, Labelled, SeedNotes
from site_agent.generate.plan import plan_for_model, prompt_origin
from site_agent.generate.prompts import prompt_renderer
from site_agent.generate.settings import GenerationSettings
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
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
) -> tuple[Labelled, int]:
    """Sample the planned notes from ``base_model`` + adapter and read them as the mode does;
    returns the synthetic corpus (with what reading found) and the number of prompts. Resumes
    from a partial store in ``out_dir``."""
    from site_agent.generate.run import generate_corpus
    from site_agent.models import resolve_model

    model = str(resolve_model(base_model, allow_fetch=True))
    render = prompt_renderer(mode, seeds.surrogates)
    notes = sum(not is_membership_canary(d) for d in seeds.train.documents)  # canaries aside
    plan = plan_for_model(validation, notes, model, settings, render)
    bars = ProgressBars(progress, "generated notes")
    raw = generate_corpus(plan, model, adapter_dir, settings, out_dir / PARTIAL_FILE, bars.count)
    return mode.label(raw, seeds, settings), len(plan.prompts)


def forbidden_surfaces(train: Corpus, inputs: Mapping[str, Path]) -> tuple[str, ...]:
    """Identifier strings no filler may write: the gold strings the pseudonymiser replaced,
    their surrogates, and every span of the training notes the generator saw."""
    known = sensitive_surfaces(read_surrogates(inputs["pseudonymise.surrogates"]))
    seen = {d.surface(s) for d in train.documents for s in d.spans}
    return tuple(sorted(seen.union(known["originals"], known["surrogates"])))


def origin_summary(origin: list[dict[str, int | str]]) -> dict[str, int]:
    """What stage.json says of the prompts' real text (the ids stay in ``PROMPT_ORIGIN``)."""
    words = [int(o["words"]) for o in origin]
    return {
        "prompt_notes": len(origin),
        "prompt_words_max": max(words, default=0),
        "prompt_words_total": sum(words),
    }


def _settings(config: SiteConfig) -> dict[str, Any]:
    filters = config.audit.policy.filters
    return {
        "generation": config.generation,
        "surrogates": config.pseudonymise,
        "base_model": config.adapt.base_model,
        "device": config.device,
        # the filler avoids what this filter would drop (template mode)
        "identifying_ngrams": (filters.sensitive_ngram_n, filters.sensitive_ngram_min_share),
    }


def _run(ctx: StageContext) -> StageOutput:
    config = ctx.config
    train = read_corpus(ctx.inputs["pseudonymise.train"])
    validation = read_corpus(ctx.inputs["split.validation"])
    origin = prompt_origin(validation, config.generation.prompt_words)
    atomic_write_text(ctx.stage_dir / PROMPT_ORIGIN, json.dumps(origin, indent=1))
    seeds = SeedNotes(
        train,
        config.pseudonymise,
        forbidden_surfaces(train, ctx.inputs),
        identifying_index(config, ctx.inputs["split.train"]),
    )
    labelled, prompts = run(
        ctx.inputs["adapt.adapter"],
        validation,
        seeds,
        config.adapt.base_model,
        config.generation,
        generation_mode(config),
        ctx.stage_dir,
        ctx.progress,
    )
    out_path = ctx.stage_dir / CORPUS_FILE
    write_corpus(labelled.corpus, out_path)
    summary = {"mode": config.generation.mode, "prompts": prompts, **origin_summary(origin)}
    summary |= {"documents": len(labelled.corpus), **labelled.summary}
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
)
