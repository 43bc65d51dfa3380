"""Sparse-PHI corpora cut from MEDDOCAN, for ``benchmarks/annotator.py --sparse``.

MEDDOCAN notes are dense (about 11% of words inside an entity, every note holds PHI). Cut
into short pieces (span-safe word chunks), they become "notes" of which some hold PHI and
most do not. The *dense* corpus keeps ``phi_pieces`` PHI-bearing pieces with the PHI-free
pieces of the same notes (MEDDOCAN's own mix); the *sparse* corpus keeps the very same
PHI-bearing pieces (equal PHI mentions) among enough PHI-free pieces of other notes that PHI
words are at most ``density`` of all words and at least ``free_share`` of notes hold none.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from protocol import Corpus, Document
from shared.ner_tokens import chunk_document, split_words


def pieces(corpus: Corpus, words: int) -> list[Document]:
    """Every note cut into span-safe pieces of at most ``words`` words, each its own note."""
    out = []
    for doc in corpus.documents:
        for index, chunk in enumerate(chunk_document(doc.text, doc.spans, words)):
            if split_words(chunk.text):
                out.append(
                    Document(
                        id=f"{doc.id}#{index}", text=chunk.text, spans=chunk.spans, source=doc.id
                    )
                )
    return out


def phi_words(docs: list[Document]) -> int:
    return sum(len(split_words(d.text[s.start : s.end])) for d in docs for s in d.spans)


def all_words(docs: list[Document]) -> int:
    return sum(len(split_words(d.text)) for d in docs)


@dataclass(frozen=True)
class SparsePair:
    """A dense and a sparse training corpus holding the same PHI-bearing pieces."""

    dense: Corpus
    sparse: Corpus


def _corpus(docs: list[Document], labels: tuple[str, ...], rng: random.Random) -> Corpus:
    docs = list(docs)
    rng.shuffle(docs)
    return Corpus(documents=tuple(docs), labels=labels)


def sparse_pair(
    corpus: Corpus,
    phi_pieces: int,
    *,
    words: int = 32,
    density: float = 0.01,
    free_share: float = 0.7,
    seed: int = 0,
) -> SparsePair:
    """Dense and sparse corpora with the same ``phi_pieces`` PHI-bearing pieces."""
    rng = random.Random(seed)
    notes = list(corpus.documents)
    rng.shuffle(notes)
    cut = pieces(Corpus(documents=tuple(notes), labels=corpus.labels), words)
    phi = [p for p in cut if p.spans][:phi_pieces]
    sources = {p.source for p in phi}
    dense_free = [p for p in cut if not p.spans and p.source in sources]
    other_free = [p for p in cut if not p.spans and p.source not in sources]
    rng.shuffle(other_free)
    free: list[Document] = []
    target_words = phi_words(phi) / density
    for piece in other_free:
        enough_words = all_words(phi) + all_words(free) >= target_words
        enough_notes = len(free) >= free_share / (1 - free_share) * len(phi)
        if enough_words and enough_notes:
            break
        free.append(piece)
    return SparsePair(
        dense=_corpus(phi + dense_free, corpus.labels, rng),
        sparse=_corpus(phi + free, corpus.labels, rng),
    )


def describe(corpus: Corpus) -> str:
    docs = list(corpus.documents)
    with_phi = sum(bool(d.spans) for d in docs)
    mentions = sum(len(d.spans) for d in docs)
    return (
        f"{len(docs)} notes, {1 - with_phi / len(docs):.0%} without PHI, {mentions} mentions, "
        f"{phi_words(docs) / all_words(docs):.2%} PHI words"
    )
