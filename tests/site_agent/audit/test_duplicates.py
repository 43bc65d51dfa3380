"""Exact and near duplicates: normalised hashes, exact Jaccard near copies, greedy keep."""

from __future__ import annotations

import random

import numpy as np
import pytest

from protocol import Corpus, Document
from site_agent.audit.duplicates import document_hashes
from site_agent.privacy import reference
from site_agent.privacy.tokens import word_stream

from .builders import FILLER, measured


def _text(rng: random.Random, n: int = 80) -> str:
    return " ".join(rng.choice(FILLER) + str(rng.randint(0, 30)) for _ in range(n))


def _docs(prefix: str, texts: list[str]) -> Corpus:
    return Corpus(documents=tuple(Document(id=f"{prefix}{i}", text=t) for i, t in enumerate(texts)))


def test_exact_hash_ignores_case_punctuation_and_spacing_only() -> None:
    texts = [
        "Dolor  torácico, leve.",
        "dolor torácico leve",
        "leve dolor torácico",
        "dolor torácico",
    ]
    hashes = document_hashes(word_stream(_docs("d", texts).documents))
    assert hashes[0] == hashes[1]
    assert len(set(hashes.tolist())) == 3


@pytest.mark.parametrize(
    ("edit", "near"),
    [(lambda t: t, True), (lambda t: t.replace(t.split()[40], "otro", 1), True), (None, False)],
)
def test_near_duplicates_of_real_match_exact_jaccard(edit: object, near: bool) -> None:
    rng = random.Random(5)
    real_texts = [_text(rng, 150) for _ in range(4)]
    synth_text = edit(real_texts[2]) if callable(edit) else _text(rng, 150)
    result = measured(_docs("r", real_texts), _docs("s", [synth_text]), "duplicates")
    expected = max(reference.jaccard(r, synth_text, 3) for r in real_texts) >= 0.9
    assert bool(result.near_real[0]) is near is expected


def test_earliest_retained_synthetic_document_stays() -> None:
    rng = random.Random(7)
    a, b = _text(rng, 150), _text(rng, 150)
    a_edit = a.replace(a.split()[70], "otro", 1)
    texts = [a, b, a.upper(), a_edit, b]
    result = measured(_docs("r", [_text(rng)]), _docs("s", texts), "duplicates")
    alive = np.ones(5, dtype=bool)
    assert result.synthetic_duplicates(alive, near=False).tolist() == [
        False,
        False,
        True,
        False,
        True,
    ]
    assert result.synthetic_duplicates(alive, near=True).tolist() == [
        False,
        False,
        True,
        True,
        True,
    ]
    alive[0] = False  # dropped by an earlier filter: its copies are no longer duplicates of it
    assert result.synthetic_duplicates(alive, near=True).tolist() == [
        False,
        False,
        False,
        True,
        True,
    ]
