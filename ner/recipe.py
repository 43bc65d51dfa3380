"""The training recipe a corpus gets: PHI statistics in, sampling, loss weight and budget out.

A recipe counted in epochs starves a sparse or small corpus: when 0.5% of words are PHI and
most notes hold none, a few epochs give the model a few hundred entity words among a hundred
thousand ``O`` words, and it settles on predicting ``O`` everywhere. The statistics here are
cheap (words and chunks, no tokenizer), so ``site-agent validate`` and the pre-flight of
``synthesize`` show the same recipe that ``train_annotator`` will use:

- PHI-free chunks are down-sampled (``phi_free_per_phi`` per PHI-bearing chunk, drawn afresh
  each epoch, so all PHI-free text is still seen across epochs) when they are the majority;
- entity tags weigh more in the loss when entity words stay rare in what an epoch sees;
- epochs are added until the run reaches ``min_steps`` optimiser steps, and ``patience``
  stops it once validation F1 stops improving.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from protocol import Corpus
from protocol.annotator import AnnotatorSettings, TrainingRecipe
from shared.ner_tokens import chunk_document, split_words

SPARSE_CHUNK_SHARE = 0.5
"""Below this share of PHI-bearing chunks, PHI-free chunks are down-sampled."""
SPARSE_KEEP = 1.0
"""PHI-free chunks kept per PHI-bearing chunk each epoch when sampling is automatic."""
TARGET_ENTITY_SHARE = 0.05
"""The entity-word share of an epoch that the default loss learns from unaided (MEDDOCAN's
128-word chunks hold about 10%); below it, entity tags are up-weighted by sqrt(target/share)."""
MAX_ENTITY_WEIGHT = 5.0


@dataclass(frozen=True)
class PhiStatistics:
    """Words, PHI words, chunks and mentions of a training corpus, as the annotator chunks it."""

    documents: int
    documents_with_phi: int
    words: int
    phi_words: int
    chunks: int
    phi_chunks: int
    phi_chunk_words: int
    mentions: dict[str, int]

    @property
    def phi_word_density(self) -> float:
        return self.phi_words / self.words if self.words else 0.0

    @property
    def phi_chunk_share(self) -> float:
        return self.phi_chunks / self.chunks if self.chunks else 0.0

    @property
    def documents_without_phi(self) -> float:
        return 1 - self.documents_with_phi / self.documents if self.documents else 0.0

    @property
    def mean_phi_free_chunk_words(self) -> float:
        free = self.chunks - self.phi_chunks
        return (self.words - self.phi_chunk_words) / free if free else 0.0


def phi_statistics(corpus: Corpus, chunk_words: int) -> PhiStatistics:
    """Count what the annotator will train on: ``chunk_words``-word chunks of every document."""
    words = phi_words = chunks = phi_chunks = phi_chunk_words = with_phi = 0
    mentions: Counter[str] = Counter()
    for doc in corpus.documents:
        with_phi += bool(doc.spans)
        mentions.update(span.label for span in doc.spans)
        for chunk in chunk_document(doc.text, doc.spans, chunk_words):
            n = len(split_words(chunk.text))
            inside = sum(len(split_words(chunk.text[s.start : s.end])) for s in chunk.spans)
            words, phi_words, chunks = words + n, phi_words + inside, chunks + (n > 0)
            if chunk.spans:
                phi_chunks, phi_chunk_words = phi_chunks + 1, phi_chunk_words + n
    return PhiStatistics(
        len(corpus), with_phi, words, phi_words, chunks, phi_chunks, phi_chunk_words,
        dict(sorted(mentions.items())),
    )  # fmt: skip


def _sampling(stats: PhiStatistics, settings: AnnotatorSettings) -> tuple[float | None, str]:
    share = f"{stats.phi_chunk_share:.0%} of {stats.chunks} training chunks hold PHI"
    ratio = settings.phi_free_per_phi
    if ratio is None:
        if stats.phi_chunks == 0 or stats.phi_chunk_share >= SPARSE_CHUNK_SHARE:
            return None, f"{share}: every chunk is seen every epoch"
        ratio, why = SPARSE_KEEP, f"{share} (< {SPARSE_CHUNK_SHARE:.0%}, sparse PHI)"
    else:
        why = f"{share}; phi_free_per_phi = {ratio:g} set"
    free = stats.chunks - stats.phi_chunks
    if stats.phi_chunks == 0 or ratio * stats.phi_chunks >= free:
        return None, f"{why}: every chunk is seen every epoch"
    return ratio, f"{why}: {ratio:g} PHI-free chunk(s) per PHI chunk, re-drawn each epoch"


def _entity_weight(
    stats: PhiStatistics, ratio: float | None, settings: AnnotatorSettings
) -> tuple[float, str]:
    if settings.entity_weight is not None:
        return settings.entity_weight, f"entity_weight = {settings.entity_weight:g} set"
    free_words: float = stats.words - stats.phi_chunk_words
    if ratio is not None:
        free_words = ratio * stats.phi_chunks * stats.mean_phi_free_chunk_words
    seen = stats.phi_chunk_words + free_words
    share = stats.phi_words / seen if seen else 0.0
    if share <= 0 or share >= TARGET_ENTITY_SHARE:
        return 1.0, f"entity words are {share:.1%} of an epoch: unweighted loss"
    weight = min(MAX_ENTITY_WEIGHT, math.sqrt(TARGET_ENTITY_SHARE / share))
    return weight, (
        f"entity words are {share:.1%} of an epoch (< {TARGET_ENTITY_SHARE:.0%}): "
        f"entity tags weigh {weight:.2f} in the loss"
    )


def epoch_chunks(stats: PhiStatistics, ratio: float | None) -> int:
    """Chunks one epoch trains on."""
    if ratio is None:
        return stats.chunks
    return stats.phi_chunks + min(stats.chunks - stats.phi_chunks, round(ratio * stats.phi_chunks))


def epochs_for(chunks_per_epoch: float, settings: AnnotatorSettings) -> int:
    """``settings.epochs`` over ``chunks_per_epoch`` chunks, or more where that stays under
    ``min_steps`` optimiser steps (at most ``max_epochs``)."""
    steps_per_epoch = max(1, math.ceil(chunks_per_epoch / settings.batch_size))
    if settings.epochs * steps_per_epoch >= settings.min_steps:
        return settings.epochs
    return min(settings.max_epochs, -(-settings.min_steps // steps_per_epoch))


def resolve_recipe(stats: PhiStatistics, settings: AnnotatorSettings) -> TrainingRecipe:
    """The sampling, loss weight and step budget that ``settings`` give for ``stats``."""
    ratio, sampling = _sampling(stats, settings)
    weight, weighting = _entity_weight(stats, ratio, settings)
    per_epoch = epoch_chunks(stats, ratio)
    steps_per_epoch = max(1, -(-per_epoch // settings.batch_size))
    epochs = epochs_for(per_epoch, settings)
    budget = f"{settings.epochs} epochs of {steps_per_epoch} steps"
    if settings.epochs * steps_per_epoch < settings.min_steps:
        short = epochs * steps_per_epoch < settings.min_steps  # max_epochs stopped the rise
        capped = f" (capped by max_epochs = {settings.max_epochs})" if short else ""
        budget = (
            f"{settings.epochs} epochs would give {settings.epochs * steps_per_epoch} optimiser "
            f"steps (< min_steps = {settings.min_steps}): {epochs} epochs{capped}"
        )
    steps = epochs * steps_per_epoch
    if settings.max_steps is not None and steps > settings.max_steps:
        steps = settings.max_steps
        epochs = -(-steps // steps_per_epoch)
        budget = f"{budget}; max_steps = {steps} set: {epochs} epoch(s), the last cut short"
    patience = max(settings.patience, -(-epochs // 4)) if settings.patience else 0
    stop = f"early stop after {patience} epochs without a better validation F1"
    return TrainingRecipe(
        documents=stats.documents,
        documents_without_phi=stats.documents_without_phi,
        words=stats.words,
        phi_words=stats.phi_words,
        phi_word_density=stats.phi_word_density,
        chunks=stats.chunks,
        phi_chunks=stats.phi_chunks,
        phi_chunk_share=stats.phi_chunk_share,
        sparse=ratio is not None,
        phi_free_per_phi=ratio,
        chunks_per_epoch=per_epoch,
        entity_weight=weight,
        epochs=epochs,
        steps=steps,
        patience=patience,
        reasons=(sampling, weighting, budget, stop if patience else "no early stop"),
    )


def corpus_recipe(corpus: Corpus, settings: AnnotatorSettings) -> TrainingRecipe:
    """The recipe ``train_annotator`` uses for this training corpus."""
    return resolve_recipe(phi_statistics(corpus, settings.chunk_words), settings)
