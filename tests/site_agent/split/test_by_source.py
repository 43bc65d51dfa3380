"""Deterministic splits: partition, fractions, seeds, grouping by source, pinned splits."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Corpus, Document, Span
from shared.corpus_io import read_corpus
from shared.errors import ConfigError
from site_agent.split.by_source import split_corpus


def corpus_of(n: int, sources: int | None = None, pinned: dict[int, str] | None = None) -> Corpus:
    pinned = pinned or {}
    docs = tuple(
        Document(
            id=f"d{i:03d}",
            text="Ana",
            spans=[Span(start=0, end=3, label="PER")] if i % 2 else [],
            source=f"s{i % sources}" if sources else None,
            meta={"split": pinned[i]} if i in pinned else None,
        )
        for i in range(n)
    )
    return Corpus(documents=docs, labels=("LOC", "PER"))


def ids(splits: dict[str, Corpus]) -> dict[str, list[str]]:
    return {name: [d.id for d in c.documents] for name, c in splits.items()}


def test_default_fractions_are_exact_for_documents() -> None:
    splits = split_corpus(corpus_of(100))
    assert {name: len(c) for name, c in splits.items()} == {
        "train": 80,
        "validation": 10,
        "test": 10,
    }


@pytest.mark.parametrize(
    ("n", "fractions", "sizes"),
    [
        (7, None, {"train": 5, "validation": 1, "test": 1}),
        (10, {"train": 0.5, "test": 0.5}, {"train": 5, "test": 5}),
        (9, {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, {"a": 3, "b": 3, "c": 3}),
        (5, {"train": 1.0, "test": 0.0}, {"train": 5, "test": 0}),
    ],
)
def test_fractions_give_sizes(n: int, fractions: dict[str, float] | None, sizes: dict) -> None:
    splits = split_corpus(corpus_of(n), fractions)
    assert {name: len(c) for name, c in splits.items()} == sizes


def test_same_seed_same_split_whatever_the_document_order() -> None:
    corpus = corpus_of(60)
    shuffled = list(corpus.documents)
    random.Random(7).shuffle(shuffled)
    reordered = corpus.model_copy(update={"documents": tuple(shuffled)})
    first = {k: sorted(v) for k, v in ids(split_corpus(corpus, seed=3)).items()}
    again = {k: sorted(v) for k, v in ids(split_corpus(reordered, seed=3)).items()}
    assert first == again
    assert first != {k: sorted(v) for k, v in ids(split_corpus(corpus, seed=4)).items()}


def test_splits_keep_corpus_order_labels_and_record_provenance() -> None:
    corpus = corpus_of(20)
    splits = split_corpus(corpus, seed=5)
    for name, part in splits.items():
        assert [d.id for d in part.documents] == sorted(d.id for d in part.documents)
        assert part.labels == ("LOC", "PER")
        assert part.provenance.notes["split"] == name
        assert part.provenance.notes["split_seed"] == "5"
        assert part.provenance.notes["split_grouped_by"] == "document"


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=60),
    sources=st.integers(min_value=1, max_value=12),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_grouped_split_is_a_partition_with_no_shared_source(
    n: int, sources: int, seed: int
) -> None:
    corpus = corpus_of(n, sources)
    splits = split_corpus(corpus, seed=seed, group_by_source=True)
    all_ids = [i for part in ids(splits).values() for i in part]
    assert sorted(all_ids) == [d.id for d in corpus.documents]
    seen: dict[str, str] = {}
    for name, part in splits.items():
        for doc in part.documents:
            assert seen.setdefault(str(doc.source), name) == name


def test_grouped_split_of_meddocan_train_hits_the_fractions(meddocan_dir: Path) -> None:
    corpus = read_corpus(meddocan_dir / "train.jsonl")
    for seed in range(3):
        splits = split_corpus(corpus, seed=seed, group_by_source=True)
        sizes = {name: len(c) for name, c in splits.items()}
        assert abs(sizes["train"] - 400) <= 10 and abs(sizes["test"] - 50) <= 10, sizes
        sources = [{d.source for d in c.documents} for c in splits.values()]
        assert sum(map(len, sources)) == len(set().union(*sources)) == 32


def test_pinned_documents_keep_their_split_and_others_fill_up() -> None:
    corpus = corpus_of(20, pinned={0: "test", 1: "test", 2: "train"})
    splits = split_corpus(corpus, {"train": 0.5, "test": 0.5})
    assert {"d000", "d001"} <= set(ids(splits)["test"])
    assert "d002" in ids(splits)["train"]
    assert {name: len(c) for name, c in splits.items()} == {"train": 10, "test": 10}


def test_pinned_document_pulls_its_source_along() -> None:
    corpus = corpus_of(12, sources=3, pinned={0: "test"})  # d000 is from source s0
    splits = split_corpus(corpus, group_by_source=True)
    assert {d.source for d in splits["test"].documents} == {"s0"}


@pytest.mark.parametrize(
    ("corpus", "kwargs", "message"),
    [
        (
            corpus_of(4),
            {"fractions": {"train": 0.8, "test": 0.1}},
            "split fractions {'train': 0.8, 'test': 0.1} must be between 0 and 1 and sum to 1 "
            "(they sum to 0.9); fix: e.g. {'train': 0.8, 'validation': 0.1, 'test': 0.1}",
        ),
        (
            corpus_of(4),
            {"fractions": {"train": 1.5, "test": -0.5}},
            "split fractions {'train': 1.5, 'test': -0.5} must be between 0 and 1 and sum to 1 "
            "(they sum to 1); fix: e.g. {'train': 0.8, 'validation': 0.1, 'test': 0.1}",
        ),
        (
            corpus_of(4, pinned={1: "dev"}),
            {},
            "document 'd001' has meta['split'] = 'dev', which is not one of "
            "['train', 'validation', 'test']; fix: rename it to one of those, or add 'dev' to "
            "the fractions",
        ),
        (
            corpus_of(4, sources=2, pinned={0: "train", 2: "test"}),
            {"group_by_source": True},
            "source:s0 has documents already assigned to splits ['test', 'train'], so it "
            "cannot sit in one split; fix: give all its documents the same meta['split'], or "
            "split without grouping by source",
        ),
    ],
)
def test_bad_settings_are_config_errors(corpus: Corpus, kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        split_corpus(corpus, **kwargs)
    assert str(info.value) == message
    assert info.value.exit_code == 78
