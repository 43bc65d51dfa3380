"""The knobs several stages share, resolved once from ``site.toml`` and passed as arguments.

The generation mode is resolved once per run (:func:`resolve_knobs`, called by
``run_pipeline``), which hands the same :class:`SharedKnobs` to the run plan and to every
stage through its context (:func:`shared_knobs`).

The generation mode decides how the adapt stage renders the training notes, how the generate
stage prompts and reads back, and who labels the synthetic notes in the annotate stage; the
generator's tokenizer is the unit the audit and the export gate count n-grams in; the
identifying n-gram index is what the audit's sensitive n-gram filter would drop, which the
template filler avoids. The stage libraries take these as values and never read the config.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from site_agent.config import SiteConfig
from site_agent.pipeline.stage import StageContext

if TYPE_CHECKING:
    from site_agent.generate.modes import GenerationMode
    from site_agent.privacy.identifying import IdentifyingIndex


@dataclass(frozen=True)
class SharedKnobs:
    """What the stages of one run share, resolved once: the registered generation mode
    ``[generation] mode`` names (its facts: epochs, PHI marker, who labels its notes)."""

    mode: GenerationMode


def resolve_knobs(config: SiteConfig) -> SharedKnobs:
    """The run's knobs from ``site.toml`` (the mode's name was validated with the config)."""
    from site_agent.generate.modes import mode_for

    return SharedKnobs(mode=mode_for(config.generation.mode))


def shared_knobs(ctx: StageContext[SiteConfig]) -> SharedKnobs:
    """The knobs ``run_pipeline`` resolved for this run; a stage run by another composition
    (a study's store, a test calling an adapter) resolves them from its config."""
    if isinstance(ctx.resolved, SharedKnobs):
        return ctx.resolved
    return resolve_knobs(ctx.config)


def tokenizer_reference(config: SiteConfig) -> str:
    """The generator's tokenizer (a folder): the audit counts n-grams in its tokens too."""
    from site_agent.models import resolve_model

    return str(resolve_model(config.adapt.base_model, allow_fetch=True))


def pii_surfaces(surrogates: Path) -> list[tuple[str, str]]:
    """The ``(label, surrogate)`` pairs the generator saw instead of real PII (the audit
    searches them too, and the export gate checks that it did)."""
    from site_agent.pseudonymise.records import read_surrogates

    records = read_surrogates(surrogates)
    return sorted({(r.label, r.surrogate) for r in records if r.surrogate != r.original})


def identifying_index(
    config: SiteConfig, real_train: Path, real_validation: Path | None
) -> Callable[[], IdentifyingIndex]:
    """The identifying n-grams of every real note the generator saw (training and validation
    splits: the audit's reference), in words and the generator's tokens, as the audit's
    sensitive n-gram filter counts them; built when a mode asks (the template filler), never
    shown to the generator."""

    def build() -> IdentifyingIndex:
        from site_agent.audit.reference import read_generator_reference
        from site_agent.privacy.identifying import IdentifyingIndex

        real = read_generator_reference(real_train, real_validation).documents
        filters = config.audit.policy.filters
        return IdentifyingIndex.build(real, filters, tokenizer_reference(config))

    return build
