"""The training set of each regime, built from the real pool and the audited synthetic corpus.

Plain functions over :class:`protocol.Corpus`; each draw is seeded and nested (a smaller share
is a prefix of a larger one under the same seed), so conditions differ only by what they vary.
Documents are renamed ``real:<id>`` / ``syn:<id>`` (``#k`` for the k-th copy of an
oversampled one) so that the two pools and the copies never collide.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from protocol import Corpus, Document
from studies.spec import Condition


@dataclass(frozen=True)
class TrainingSet:
    """The documents a regime trains on, and how many came from each pool."""

    corpus: Corpus
    n_real: int
    n_synthetic: int


def shuffled(documents: Sequence[Document], seed: int) -> list[Document]:
    order = list(documents)
    random.Random(seed).shuffle(order)
    return order


def fraction_of(corpus: Corpus, fraction: float, seed: int) -> Corpus:
    """A seeded ``fraction`` of the documents (at least one when ``fraction`` > 0), in their
    original order; nested: the draw for a smaller fraction is inside that of a larger one."""
    if fraction >= 1.0:
        return corpus
    n = max(1, round(fraction * len(corpus))) if fraction > 0 else 0
    keep = {d.id for d in shuffled(corpus.documents, seed)[:n]}
    docs = tuple(d for d in corpus.documents if d.id in keep)
    return Corpus(documents=docs, labels=corpus.labels, provenance=corpus.provenance)


def chunks_of(doc: Document, chunk_words: int) -> int:
    """The annotator's training chunks for ``doc`` (its words split by whitespace)."""
    return max(1, math.ceil(len(doc.text.split()) / chunk_words))


def draw_chunks(
    documents: Sequence[Document], chunks: int, chunk_words: int, seed: int
) -> list[Document]:
    """Documents (with replacement once the pool is spent) until ``chunks`` chunks are drawn."""
    if chunks <= 0 or not documents:
        return []
    out: list[Document] = []
    total, rounds = 0, 0
    while total < chunks:
        for doc in shuffled(documents, seed + rounds):
            if total >= chunks:
                break
            out.append(doc)
            total += chunks_of(doc, chunk_words)
        rounds += 1
    return out


def mix(real: Sequence[Document], synthetic: Sequence[Document], labels: Sequence[str]) -> Corpus:
    """One corpus of both pools, with pool-prefixed ids and numbered copies."""
    seen: dict[str, int] = {}
    docs = []
    for prefix, pool in (("real", real), ("syn", synthetic)):
        for doc in pool:
            name = f"{prefix}:{doc.id}"
            seen[name] = seen.get(name, 0) + 1
            copy = name if seen[name] == 1 else f"{name}#{seen[name]}"
            docs.append(doc.model_copy(update={"id": copy}))
    used = {s.label for d in docs for s in d.spans}
    return Corpus(documents=tuple(docs), labels=tuple(sorted(set(labels) | used)))


@dataclass(frozen=True)
class Pools:
    """What a regime draws from: the real pool, the audited synthetic corpus, and the size of
    the whole real training split (the unit of ``synthetic_amount``)."""

    real: Corpus
    synthetic: Corpus
    n_train_split: int
    seed: int
    chunk_words: int = 128
    batch_size: int = 16
    epochs: int = 1

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.real.labels) | set(self.synthetic.labels)))


def _built(real: list[Document], synthetic: list[Document], pools: Pools) -> TrainingSet:
    return TrainingSet(mix(real, synthetic, pools.labels), len(real), len(synthetic))


def synthetic_only(pools: Pools, condition: Condition) -> TrainingSet:
    n = max(1, round(condition.synthetic_amount * pools.n_train_split))
    docs = shuffled(pools.synthetic.documents, pools.seed)[:n]
    return _built([], docs, pools)


def real_only(pools: Pools, condition: Condition) -> TrainingSet:
    return _built(list(pools.real.documents), [], pools)


def augmentation(pools: Pools, condition: Condition) -> TrainingSet:
    """All real documents plus S = round(f / (1 - f) * R) synthetic (capped by the pool)."""
    f = condition.synthetic_fraction or 0.0
    n_real = len(pools.real)
    wanted = round(f / (1.0 - f) * n_real)
    docs = shuffled(pools.synthetic.documents, pools.seed)[:wanted]
    return _built(list(pools.real.documents), docs, pools)


def fixed_n(pools: Pools, condition: Condition) -> TrainingSet:
    """N documents, ``real_fraction`` of them real (without replacement, capped by the pools)."""
    total = condition.fixed_n or len(pools.real)
    n_real = min(len(pools.real), round((condition.real_fraction or 1.0) * total))
    n_syn = min(len(pools.synthetic), total - n_real)
    real = shuffled(pools.real.documents, pools.seed)[:n_real]
    return _built(real, shuffled(pools.synthetic.documents, pools.seed)[:n_syn], pools)


def compute_matched(pools: Pools, condition: Condition) -> TrainingSet:
    """``steps`` optimiser steps whatever the mix: steps x batch / epochs chunks, the synthetic
    share ``synthetic_fraction`` of them, each pool drawn with replacement when it runs short."""
    f = condition.synthetic_fraction or 0.0
    chunks = max(1, (condition.steps or 1) * pools.batch_size // pools.epochs)
    n_syn = round(f * chunks)
    real = draw_chunks(pools.real.documents, chunks - n_syn, pools.chunk_words, pools.seed)
    syn = draw_chunks(pools.synthetic.documents, n_syn, pools.chunk_words, pools.seed)
    return _built(real, syn, pools)


Builder = Callable[[Pools, Condition], TrainingSet]

REGIMES: dict[str, Builder] = {
    "synthetic-only": synthetic_only,
    "real-only": real_only,
    "augmentation": augmentation,
    "fixed-n": fixed_n,
    "compute-matched": compute_matched,
}


def training_set(pools: Pools, condition: Condition) -> TrainingSet:
    """The training set of ``condition.regime``."""
    return REGIMES[condition.regime](pools, condition)


def train_and_validation(
    built: TrainingSet, real_validation: Corpus, seed: int
) -> tuple[Corpus, Corpus]:
    """What a regime's model trains and is validated on: a set without a real note is split
    into its own validation share (nothing real may shape a synthetic-only model), any other
    set validates on the real validation split."""
    if built.n_real == 0:
        from site_agent.train_synthetic.sets import synthetic_train_validation

        return synthetic_train_validation(built.corpus, seed)
    return built.corpus, real_validation
