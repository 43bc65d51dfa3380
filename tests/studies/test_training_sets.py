"""Each regime's training set against sizes worked out by hand (seed 002 §2.5 designs)."""

from __future__ import annotations

import math

import pytest

from protocol import Corpus, Document, Span
from studies.spec import Condition
from studies.training_sets import Pools, chunks_of, fraction_of, training_set


def corpus(prefix: str, n: int, words: int = 10) -> Corpus:
    text = " ".join(["w"] * (words - 1)) + " Ana"
    span = Span(start=len(text) - 3, end=len(text), label="PER")
    return Corpus(
        documents=tuple(Document(id=f"{prefix}{i}", text=text, spans=(span,)) for i in range(n))
    )


def pools(real: int = 20, synthetic: int = 50, words: int = 10, **kw: int) -> Pools:
    return Pools(corpus("r", real, words), corpus("s", synthetic, words), real, seed=3, **kw)


@pytest.mark.parametrize(
    ("f", "n_syn"),
    [(0.0, 0), (0.25, 7), (0.5, 20), (0.75, 50), (0.9, 50)],  # round(f/(1-f)*20), capped at 50
)
def test_augmentation_keeps_every_real_note_and_adds_f_over_1_minus_f(f: float, n_syn: int) -> None:
    built = training_set(pools(), Condition(regime="augmentation", synthetic_fraction=f))
    assert (built.n_real, built.n_synthetic) == (20, n_syn)
    assert len(built.corpus) == 20 + n_syn
    assert len({d.id for d in built.corpus.documents}) == len(built.corpus)


@pytest.mark.parametrize(("r", "n_real"), [(1.0, 20), (0.5, 10), (0.25, 5), (0.1, 2), (0.05, 1)])
def test_fixed_n_holds_the_total_and_swaps_real_for_synthetic(r: float, n_real: int) -> None:
    built = training_set(pools(), Condition(regime="fixed-n", real_fraction=r))
    assert (built.n_real, built.n_synthetic) == (n_real, 20 - n_real)


@pytest.mark.parametrize("f", [0.0, 0.5, 0.9])
def test_compute_matched_draws_the_same_chunks_whatever_the_mix(f: float) -> None:
    # 250 words: 2 chunks of 128 words per note; 30 steps x 4 per batch / 2 epochs = 60 chunks
    p = pools(real=5, synthetic=8, words=250, chunk_words=128, batch_size=4, epochs=2)
    built = training_set(p, Condition(regime="compute-matched", synthetic_fraction=f, steps=30))
    chunks = sum(chunks_of(d, 128) for d in built.corpus.documents)
    assert chunks == 60
    assert built.n_synthetic * 2 == round(f * 60)
    assert built.n_real > 5 or f > 0  # real-only is oversampled with replacement
    assert len({d.id for d in built.corpus.documents}) == len(built.corpus)


def test_synthetic_only_takes_amount_times_the_training_split() -> None:
    built = training_set(pools(real=20), Condition(synthetic_amount=0.5))
    assert (built.n_real, built.n_synthetic) == (0, 10)
    assert training_set(pools(real=20), Condition(synthetic_amount=4.0)).n_synthetic == 50


def test_fractions_are_nested_and_keep_document_order() -> None:
    real = corpus("r", 40)
    small, large = fraction_of(real, 0.25, 7), fraction_of(real, 0.5, 7)
    assert len(small) == 10 and len(large) == 20
    assert {d.id for d in small.documents} <= {d.id for d in large.documents}
    order = [d.id for d in real.documents]
    assert [d.id for d in large.documents] == sorted(
        (d.id for d in large.documents), key=order.index
    )
    assert len(fraction_of(real, 0.001, 7)) == 1
    assert math.isclose(len(fraction_of(real, 1.0, 7)), 40)


def test_k_folds_partition_train_and_test_into_disjoint_test_sets() -> None:
    from studies.stages import fold_of

    train, test = corpus("a", 17), corpus("b", 6)
    folds = [fold_of(train, test, f, 5, seed=13) for f in range(5)]
    tests = [{d.id for d in held.documents} for _, held in folds]
    everything = {d.id for d in (*train.documents, *test.documents)}
    assert set().union(*tests) == everything
    assert sum(len(t) for t in tests) == 23 and {len(t) for t in tests} <= {4, 5}
    for (kept, _), ids in zip(folds, tests, strict=True):
        assert {d.id for d in kept.documents} == everything - ids
    again = fold_of(train, test, 2, 5, seed=13)[1]
    assert {d.id for d in again.documents} == tests[2]  # seeded
