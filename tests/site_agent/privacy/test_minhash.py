"""MinHash signatures and LSH banding: the pairs datasketch's LSH finds, recall at the threshold,
and bounded work for huge buckets."""

from __future__ import annotations

import random

import numpy as np
from datasketch import LeanMinHash, MinHashLSH

from protocol import Corpus, Document
from site_agent.privacy.minhash import band_keys, candidate_pairs, lsh_params, signatures
from site_agent.privacy.tokens import word_stream
from tests.site_agent.audit.builders import FILLER


def _text(rng: random.Random, n: int = 80) -> str:
    return " ".join(rng.choice(FILLER) + str(rng.randint(0, 30)) for _ in range(n))


def _docs(prefix: str, texts: list[str]) -> Corpus:
    return Corpus(documents=tuple(Document(id=f"{prefix}{i}", text=t) for i, t in enumerate(texts)))


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


def test_huge_buckets_pair_with_anchors_only() -> None:
    keys = np.zeros((1000, 2), dtype=np.uint64)  # every document in the same bucket
    pairs = candidate_pairs(keys, np.arange(1000), max_bucket=100, anchors=8)
    assert len(pairs) == sum(1000 - 1 - a for a in range(8))
    assert all(i < 8 for i, _ in pairs)
