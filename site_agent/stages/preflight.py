"""Pre-flight: what the corpus looks like to the annotator, and the recipe it will get.

Shown by ``site-agent validate`` and as the first lines of ``site-agent synthesize``, before
any model trains: PHI density, share of notes without PHI, mentions per label (naming the
labels too rare to learn), note lengths, and the training recipe that these statistics
select (``ner.recipe``); then the generator recipe and what each stage will cost on this
machine (``run_plan``), refused when it will not fit in memory. Light on purpose: no torch,
no tokenizer. (The pipeline's own ``site_agent.pipeline.preflight`` checks model names;
this one, the corpus.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ner.recipe import corpus_recipe
from protocol import Corpus
from protocol.annotator import TrainingRecipe
from protocol.base import ProtocolModel
from protocol.evaluation import Distribution
from shared.errors import ToolkitError
from shared.metrics.diagnostics import distribution
from shared.ner_tokens import split_words
from site_agent.adapt.recipe import Machine, this_machine
from site_agent.annotator.settings import GoldAnnotatorSettings, rare_labels
from site_agent.plan.estimate import RunPlan, plan_run

if TYPE_CHECKING:
    from site_agent.config import SiteConfig
    from site_agent.generate.modes import GenerationMode


class PreflightReport(ProtocolModel):
    """The corpus statistics that decide the annotator's recipe, and that recipe."""

    documents: int
    documents_without_phi: float
    phi_word_density: float
    mentions: dict[str, int]
    rare_labels: tuple[str, ...]
    rare_label_mentions: int
    rare_policy: str
    words_per_document: Distribution
    recipe: TrainingRecipe


def preflight(corpus: Corpus, settings: GoldAnnotatorSettings) -> PreflightReport:
    """Statistics of the training corpus ``corpus`` and the recipe ``settings`` give it."""
    mentions = dict.fromkeys(corpus.labels, 0)
    for doc in corpus.documents:
        for span in doc.spans:
            mentions[span.label] = mentions.get(span.label, 0) + 1
    recipe = corpus_recipe(corpus, settings.training)
    return PreflightReport(
        documents=len(corpus),
        documents_without_phi=recipe.documents_without_phi,
        phi_word_density=recipe.phi_word_density,
        mentions=dict(sorted(mentions.items())),
        rare_labels=rare_labels(mentions, settings.rare_label_mentions),
        rare_label_mentions=settings.rare_label_mentions,
        rare_policy=settings.rare_labels,
        words_per_document=distribution([len(split_words(d.text)) for d in corpus.documents]),
        recipe=recipe,
    )


def preflight_lines(report: PreflightReport) -> list[str]:
    """The report as plain lines (no markup), most important first."""
    words = report.words_per_document
    recipe = report.recipe
    lines = [
        f"PHI density: {report.phi_word_density:.2%} of words inside an entity; "
        f"{report.documents_without_phi:.0%} of {report.documents} notes without PHI; "
        f"{recipe.phi_chunk_share:.0%} of {recipe.chunks} training chunks hold PHI",
        f"note length (words): median {words.median:.0f}, quartiles {words.q1:.0f}-"
        f"{words.q3:.0f}, range {words.minimum:.0f}-{words.maximum:.0f}",
        "mentions per label: " + ", ".join(f"{label} {n}" for label, n in report.mentions.items()),
    ]
    if report.rare_labels:
        policy = (
            "left out of the quality gate"
            if report.rare_policy == "exclude"
            else "counted by the quality gate"
        )
        lines.append(
            f"too rare to learn (< {report.rare_label_mentions} mentions): "
            f"{', '.join(report.rare_labels)} - {policy} ([annotator] rare_labels)"
        )
    kind = "sparse-PHI recipe" if recipe.sparse else "recipe"
    lines.append(
        f"annotator {kind}: {recipe.epochs} epochs of {recipe.chunks_per_epoch} chunks "
        f"({recipe.steps} optimiser steps), entity weight {recipe.entity_weight:.2g}"
    )
    lines += [f"  - {reason}" for reason in recipe.reasons]
    return lines


def default_settings() -> GoldAnnotatorSettings:
    """Annotator settings as a site.toml without an ``[annotator]`` table gives them."""
    return GoldAnnotatorSettings(base_model="default")


def run_preflight(
    config: SiteConfig,
    machine: Machine | None = None,
    from_stage: str | None = None,
    gold: Corpus | None = None,
    mode: GenerationMode | None = None,
) -> RunPlan | None:
    """The generator recipe and the per-stage estimate for the training split ``config``'s
    split stage will write, on ``machine`` (this one by default); None when the corpus cannot
    be read yet (the pipeline's own checks then report it). ``gold`` is the corpus file's
    content where the caller has read it already. A run resumed past its audit (one
    ``from_stage`` does not repeat) prices the synthetic annotator at the notes kept.
    ``mode``: the run's resolved generation mode (None: resolved by the plan)."""
    from site_agent.stages.left_to_run import audited_notes
    from site_agent.stages.split import split_sizes

    try:
        train, n_validation, n_test = split_sizes(config, gold)
    except ToolkitError:
        return None
    kept = audited_notes(config, from_stage)
    return plan_run(config, train, machine or this_machine(), n_validation, n_test, kept, mode)


def training_preflight(config: SiteConfig) -> PreflightReport | None:
    """The pre-flight of the training split that ``config``'s split stage will write.

    None when the gold corpus cannot be read yet: the pipeline then stops at its own checks or
    at the split stage, which report the problem with its fix.
    """
    from site_agent.stages.split import training_split

    try:
        train = training_split(config)
    except ToolkitError:
        return None
    return preflight(train, config.annotator)
