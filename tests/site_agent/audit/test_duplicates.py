"""Exact and near duplicates: normalised hashes, LSH banding as datasketch does it, greedy keep."""

from __future__ import annotations

import random

import numpy as np
import pytest
from datasketch import LeanMinHash, MinHashLSH

from protocol import Corpus, Document
from site_agent.audit import reference
from site_agent.audit.context import AuditContext
from site_agent.audit.duplicates import document_hashes, measure_duplicates
from site_agent.audit.minhash import band_keys, candidate_pairs, lsh_params, signatures
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.tokens import word_stream

from .builders import FILLER


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


def test_banding_finds_exactly_the_pairs_datasketch_lsh_finds() -> None:
    rng = random.Random(3)
    base = [_text(rng) for _ in range(12)]
    texts = (
        base
        + [t.replace(t.split()[5], "cambio") for t in base[:6]]
        + [_text(rng) for _ in range(6)]
    )
    stream = word_stream(_docs("d", texts).documents)
    sigs, present = signatures(stream, shingle=3, num_perm=64, seed=1)
    bands, rows = lsh_params(0.9, 64)
    ours = candidate_pairs(band_keys(sigs, bands, rows), np.arange(len(texts)))
    lsh = MinHashLSH(num_perm=64, params=(bands, rows))
    minhashes = [LeanMinHash(seed=1, hashvalues=sig, scheme="affine64") for sig in sigs]
    for i, m in enumerate(minhashes):
        lsh.insert(i, m)
    theirs = {
        (min(i, j), max(i, j)) for i, m in enumerate(minhashes) for j in lsh.query(m) if i != j
    }
    assert present.all()
    assert ours == theirs
    assert {(i, i + 12) for i in range(6)} <= ours


def test_lsh_params_keep_recall_at_the_threshold() -> None:
    bands, rows = lsh_params(0.9, 128)
    assert bands * rows <= 128
    assert 1 - (1 - 0.9**rows) ** bands >= 0.999
    assert 1 - (1 - 0.5**rows) ** bands < 0.1


@pytest.mark.parametrize(
    ("edit", "near"),
    [(lambda t: t, True), (lambda t: t.replace(t.split()[40], "otro", 1), True), (None, False)],
)
def test_near_duplicates_of_real_match_exact_jaccard(edit: object, near: bool) -> None:
    rng = random.Random(5)
    real_texts = [_text(rng, 150) for _ in range(4)]
    synth_text = edit(real_texts[2]) if callable(edit) else _text(rng, 150)
    result = measure_duplicates(
        AuditContext(_docs("r", real_texts), _docs("s", [synth_text]), AuditPolicy())
    )
    expected = max(reference.jaccard(r, synth_text, 3) for r in real_texts) >= 0.9
    assert bool(result.near_real[0]) is near is expected


def test_earliest_retained_synthetic_document_stays() -> None:
    rng = random.Random(7)
    a, b = _text(rng, 150), _text(rng, 150)
    a_edit = a.replace(a.split()[70], "otro", 1)
    texts = [a, b, a.upper(), a_edit, b]
    result = measure_duplicates(
        AuditContext(_docs("r", [_text(rng)]), _docs("s", texts), AuditPolicy())
    )
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


def test_huge_buckets_pair_with_anchors_only() -> None:
    keys = np.zeros((1000, 2), dtype=np.uint64)  # every document in the same bucket
    pairs = candidate_pairs(keys, np.arange(1000), max_bucket=100, anchors=8)
    assert len(pairs) == sum(1000 - 1 - a for a in range(8))
    assert all(i < 8 for i, _ in pairs)
