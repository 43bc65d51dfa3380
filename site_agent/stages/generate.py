"""Stage 5, generate: sample synthetic notes from the adapted generator.

Prompts are the first ``prompt_words`` words of each validation note, cut before its first
PII span so that no real identifier seeds a synthetic note. The amount is a multiple of the
training split (4x by default) spread evenly over the prompts. Generation resumes from the
partial output file after an interruption.
"""

from __future__ import annotations

from typing import Any

from protocol import Corpus, Document
from protocol.site_config import GenerationSection, SiteConfig
from shared.corpus_io import read_corpus, write_corpus
from shared.errors import UsageError
from site_agent.generate.plan import allocate
from site_agent.stages import engines
from site_agent.stages.base import Stage, StageContext, StageOutput

MIN_MAX_NEW_TOKENS = 50


def prompt_for(doc: Document, words: int) -> str:
    """The first ``words`` words of the note, stopping before its first PII span."""
    safe = doc.text[: doc.spans[0].start] if doc.spans else doc.text
    return " ".join(safe.split()[:words])


def build_prompts(validation: Corpus, words: int) -> list[str]:
    prompts = [p for p in (prompt_for(d, words) for d in validation.documents) if p]
    if not prompts:
        raise UsageError(
            "no validation note has PII-free opening words to prompt the generator with; "
            "fix: raise split.validation_fraction or provide corpus.validation_path"
        )
    return prompts


def plan_amount(
    n_train: int, prompts: list[str], section: GenerationSection
) -> tuple[list[str], tuple[int, ...]]:
    """(prompts to use, samples for each) for the configured amount and cap."""
    if section.samples_per_prompt is not None:
        target = section.samples_per_prompt * len(prompts)
    else:
        assert section.amount is not None  # the config requires one of the two
        target = max(1, round(section.amount * n_train))
    if section.max_documents is not None:
        target = min(target, section.max_documents)
        prompts = prompts[:target]
    if section.samples_per_prompt is not None and section.max_documents is None:
        return prompts, (section.samples_per_prompt,) * len(prompts)
    return prompts, allocate(len(prompts), target)


def max_new_tokens_for(validation: Corpus, section: GenerationSection, model: str) -> int:
    """Configured value, else the longest validation note in generator tokens (>= 50)."""
    if section.max_new_tokens is not None:
        return section.max_new_tokens
    texts = [d.text for d in validation.documents]
    return max(MIN_MAX_NEW_TOKENS, engines.longest_in_tokens(texts, model))


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {
        "generation": config.generation,
        "base_model": config.adapt.base_model,
        "device": config.device,
    }


def _run(ctx: StageContext) -> StageOutput:
    config = ctx.config
    validation = read_corpus(ctx.inputs["split.validation"])
    n_train = len(read_corpus(ctx.inputs["pseudonymise.train"]))
    prompts, samples = plan_amount(
        n_train, build_prompts(validation, config.generation.prompt_words), config.generation
    )
    store = ctx.stage_dir / "generation.partial.jsonl"  # the generator's resumable store
    corpus = engines.generate(
        prompts,
        samples,
        max_new_tokens_for(validation, config.generation, config.adapt.base_model),
        config.adapt.base_model,
        ctx.inputs["adapt.adapter"],
        config.generation,
        store,
        ctx.progress,
    )
    out_path = ctx.stage_dir / "synthetic.raw.jsonl"
    write_corpus(corpus, out_path)
    return StageOutput(
        artifacts={"corpus": out_path},
        summary={"prompts": len(prompts), "documents": len(corpus)},
    )


STAGE = Stage(
    name="generate",
    run=_run,
    settings=_settings,
    inputs=("adapt.adapter", "split.validation", "pseudonymise.train"),
    description="sample synthetic notes",
)
