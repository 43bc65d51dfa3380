"""A small synthetic corpus whose PII follows patterns a tiny model can pick up in seconds."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from protocol import Corpus, Document, Span
from protocol.annotator import AnnotatorResult, AnnotatorSettings
from tests.tiny_models import tiny_encoder

NAMES = ["Juan López", "Ana García", "Pedro Ruiz", "Lucía Martín", "Sara Gil", "Luis Vega"]
CITIES = ["Madrid", "Sevilla", "Bilbao", "Valencia", "Murcia"]
FILLER = [
    "el",
    "paciente",
    "refiere",
    "dolor",
    "abdominal",
    "desde",
    "hace",
    "tres",
    "días",
    "sin",
    "fiebre",
]


def _note(rng: random.Random, doc_id: str, filler_words: int) -> Document:
    """A note built left to right, recording each PII span's offsets as it is written."""
    parts: list[tuple[str, str | None]] = [("Paciente", None), (rng.choice(NAMES), "NAME")]
    date = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/19{rng.randint(30, 99)}"
    parts += [("nacido el", None), (date, "DATE"), ("en", None), (rng.choice(CITIES), "LOC")]
    parts += [(" ".join(rng.choice(FILLER) for _ in range(filler_words)) + ".", None)]
    parts += [("NHC", None), (str(rng.randint(100000, 999999)), "ID"), (".", None)]
    text, spans = "", []
    for surface, label in parts:
        text += "" if not text or surface == "." else " "
        if label:
            spans.append(Span(start=len(text), end=len(text) + len(surface), label=label))
        text += surface
    return Document(id=doc_id, text=text, spans=tuple(spans))


def synthetic_corpus(n: int, seed: int, prefix: str) -> Corpus:
    """``n`` notes of 15 to 50 words (so that some need several chunks of 24 words)."""
    rng = random.Random(seed)
    return Corpus(documents=tuple(_note(rng, f"{prefix}{i}", rng.randint(2, 36)) for i in range(n)))


@pytest.fixture(scope="session")
def pattern_corpora() -> tuple[Corpus, Corpus]:
    return synthetic_corpus(48, 1, "tr"), synthetic_corpus(12, 2, "va")


@pytest.fixture(scope="session")
def encoder_dir(
    tmp_path_factory: pytest.TempPathFactory, pattern_corpora: tuple[Corpus, Corpus]
) -> Path:
    texts = [d.text for c in pattern_corpora for d in c.documents]
    return tiny_encoder(tmp_path_factory.mktemp("enc") / "tiny", texts, hidden=64)


FAST = AnnotatorSettings(
    epochs=4, batch_size=8, learning_rate=3e-3, chunk_words=24, num_threads=1, seed=3, bf16=False,
    min_steps=0, patience=0,
)  # fmt: skip


@pytest.fixture(scope="session")
def trained(
    tmp_path_factory: pytest.TempPathFactory,
    pattern_corpora: tuple[Corpus, Corpus],
    encoder_dir: Path,
) -> AnnotatorResult:
    from ner.train import train_annotator

    train, validation = pattern_corpora
    out = tmp_path_factory.mktemp("ann") / "annotator"
    return train_annotator(train, validation, encoder_dir, FAST, out)


def gold_round_trip(tokenizer: Any, corpus: Corpus) -> Corpus:
    """Gold spans -> token labels -> decoded spans, with the gold labels taken as predictions.

    The oracle for tokenisation and decoding: whatever this loses, no model can win back.
    """
    from ner.features import encode_corpus, predicted_documents
    from shared.ner_tokens import IGNORE, iob2_labels

    tags = iob2_labels(corpus.labels)
    chunks = encode_corpus(corpus, tokenizer, 128, 512, {t: i for i, t in enumerate(tags)})
    predictions = [[0 if lab == IGNORE else lab for lab in c.labels or []] for c in chunks]
    documents = predicted_documents(corpus, chunks, predictions, dict(enumerate(tags)))
    return Corpus(documents=documents, labels=corpus.labels)
