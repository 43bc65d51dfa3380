"""The sets the synthetic annotator trains, validates and is tested on."""

from __future__ import annotations

from protocol import Corpus, Document
from site_agent.split.by_source import split_corpus

SYNTHETIC_VALIDATION_FRACTION = 0.1


def without_spans(corpus: Corpus) -> Corpus:
    """The notes without their spans (what an annotator is given to label)."""
    docs = tuple(Document(id=d.id, text=d.text, source=d.source) for d in corpus.documents)
    return Corpus(documents=docs, labels=corpus.labels, provenance=corpus.provenance)


def synthetic_train_validation(corpus: Corpus, seed: int) -> tuple[Corpus, Corpus]:
    """A seeded 90/10 split of the synthetic corpus (the same notes serve both if tiny)."""
    fractions = {
        "train": 1 - SYNTHETIC_VALIDATION_FRACTION,
        "validation": SYNTHETIC_VALIDATION_FRACTION,
    }
    parts = split_corpus(corpus, fractions, seed=seed)
    if len(parts["train"]) == 0 or len(parts["validation"]) == 0:
        return corpus, corpus
    return parts["train"], parts["validation"]
