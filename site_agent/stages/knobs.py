"""The knobs several stages share, resolved once from ``site.toml`` and passed as arguments.

The generation mode decides how the adapt stage renders the training notes, how the generate
stage prompts and reads back, and who labels the synthetic notes in the annotate stage; the
generator's tokenizer is the unit the audit and the export gate count n-grams in; the
identifying n-gram index is what the audit's sensitive n-gram filter would drop, which the
template filler avoids. The stage libraries take these as values and never read the config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from site_agent.config import SiteConfig

if TYPE_CHECKING:
    from site_agent.generate.modes import GenerationMode
    from site_agent.privacy.identifying import IdentifyingIndex


def generation_mode(config: SiteConfig) -> GenerationMode:
    """The registered mode ``[generation] mode`` names (validated with the config)."""
    from site_agent.generate.modes import mode_for

    return mode_for(config.generation.mode)


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
