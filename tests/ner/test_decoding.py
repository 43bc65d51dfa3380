"""Decoding per-word tag scores: Viterbi is checked against brute force over all sequences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ner.decoding import (
    DECODERS,
    argmax_decode,
    iob2_constraints,
    viterbi_decode,
)
from protocol.annotator import AnnotatorResult
from shared.ner_tokens import IGNORE

TAGS = ["O", "B-CALLE", "I-CALLE", "B-TERRITORIO", "I-TERRITORIO"]


def valid_iob2(path: list[int], tags: list[str]) -> bool:
    previous = "O"
    for index in path:
        tag = tags[index]
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            return False
        previous = tag
    return True


def brute_force(log_probs: np.ndarray, tags: list[str]) -> list[int]:
    """The best valid sequence by enumerating every sequence (the oracle)."""
    best, best_score = None, -np.inf
    for path in itertools.product(range(len(tags)), repeat=len(log_probs)):
        if not valid_iob2(list(path), tags):
            continue
        score = sum(log_probs[w, t] for w, t in enumerate(path))
        if score > best_score:
            best, best_score = list(path), score
    assert best is not None
    return best


def test_constraints_allow_inside_only_after_the_same_label() -> None:
    may_start, may_follow = iob2_constraints(TAGS)
    assert may_start.tolist() == [True, True, False, True, False]
    assert may_follow[TAGS.index("B-CALLE"), TAGS.index("I-CALLE")]
    assert may_follow[TAGS.index("I-CALLE"), TAGS.index("I-CALLE")]
    assert not may_follow[TAGS.index("O"), TAGS.index("I-CALLE")]
    assert not may_follow[TAGS.index("B-TERRITORIO"), TAGS.index("I-CALLE")]
    assert may_follow[:, TAGS.index("B-CALLE")].all() and may_follow[:, 0].all()


@pytest.mark.parametrize("seed", range(40))
def test_viterbi_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    words = int(rng.integers(1, 6))
    log_probs = np.log(rng.dirichlet(np.ones(len(TAGS)) * 0.5, size=words))
    path = viterbi_decode(log_probs, TAGS)
    assert valid_iob2(path, TAGS)
    assert np.isclose(
        sum(log_probs[w, t] for w, t in enumerate(path)),
        sum(log_probs[w, t] for w, t in enumerate(brute_force(log_probs, TAGS))),
    )


def test_viterbi_repairs_a_label_flip_that_argmax_keeps() -> None:
    # "Jerez de la Frontera": the model wavers between TERRITORIO and CALLE inside the name
    probs = np.array(
        [
            [0.05, 0.05, 0.00, 0.90, 0.00],
            [0.05, 0.00, 0.50, 0.00, 0.45],
            [0.05, 0.00, 0.50, 0.00, 0.45],
            [0.05, 0.00, 0.10, 0.00, 0.85],
        ]
    )
    log_probs = np.log(probs + 1e-9)
    assert [TAGS[i] for i in argmax_decode(log_probs, TAGS)] == [
        "B-TERRITORIO", "I-CALLE", "I-CALLE", "I-TERRITORIO",
    ]  # fmt: skip
    assert [TAGS[i] for i in viterbi_decode(log_probs, TAGS)] == [
        "B-TERRITORIO", "I-TERRITORIO", "I-TERRITORIO", "I-TERRITORIO",
    ]  # fmt: skip


def test_prefixless_tags_are_unconstrained() -> None:
    tags = ["O", "PER", "LOC"]
    rng = np.random.default_rng(1)
    log_probs = np.log(rng.dirichlet(np.ones(3), size=7))
    assert viterbi_decode(log_probs, tags) == argmax_decode(log_probs, tags)
    assert viterbi_decode(np.zeros((0, 3)), tags) == []
    assert set(DECODERS) == {"argmax", "viterbi"}


def test_machine_annotation_tags_are_well_formed(trained: AnnotatorResult) -> None:
    from transformers import AutoModelForTokenClassification

    from ner.backbone import load_fast_tokenizer
    from ner.features import encode_corpus
    from ner.loop import predict
    from tests.ner.conftest import synthetic_corpus

    tags = list(trained.record.tags)
    tokenizer = load_fast_tokenizer(trained.model_dir)
    model = AutoModelForTokenClassification.from_pretrained(trained.model_dir)
    corpus = synthetic_corpus(10, 9, "x")
    chunks = encode_corpus(corpus, tokenizer, 24, 512, {t: i for i, t in enumerate(tags)})
    predicted = predict(model, chunks, batch_size=4, pad_id=0, decoder="viterbi", tags=tags)
    for chunk, ids in zip(chunks, predicted, strict=True):
        words = [ids[p] for p in chunk.word_starts()]
        assert valid_iob2(words, tags)
        assert len(words) == sum(lab != IGNORE for lab in chunk.labels or [])
