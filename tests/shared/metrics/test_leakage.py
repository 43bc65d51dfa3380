"""Document-level leakage edge cases, and pairing of predictions with gold documents."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from protocol import Corpus, LabelMapping
from protocol.evaluation import LeakageMetrics
from shared.errors import ConfigError, CorpusFormatError
from shared.metrics.leakage import (
    LeakageCounts,
    count_leakage,
    leakage_metrics,
    leaked_document_ids,
)
from shared.metrics.pairing import DocumentPair, evaluation_labels, map_labels, pair_documents
from shared.metrics.spans import count_spans
from tests.shared.metrics.builders import corpus, corpus_pairs, doc, pair


def leakage(pairs: list[DocumentPair]) -> tuple[LeakageMetrics, LeakageCounts]:
    counts = count_leakage(pairs, count_spans(pairs, evaluation_labels(pairs)))
    return leakage_metrics(counts), counts


def test_documents_without_gold_spans_cannot_leak() -> None:
    metrics, _ = leakage([pair([], []), pair([], [(0, 4, "PER")]), pair([(0, 4, "PER")], [])])
    assert (metrics.n_documents, metrics.n_pii_documents, metrics.leaked_documents) == (3, 1, 1)
    assert metrics.leakage_rate == pytest.approx(1 / 3)
    assert metrics.leakage_rate_pii == pytest.approx(1.0)
    assert metrics.missed_spans == 1


def test_wrong_label_overlap_counts_only_for_the_label_agnostic_view() -> None:
    metrics, _ = leakage(
        [pair([(0, 4, "PER")], [(0, 6, "LOC")]), pair([(0, 4, "PER")], [(0, 4, "PER")])]
    )
    assert metrics.leaked_documents == 1
    assert metrics.leakage_rate == pytest.approx(0.5)
    assert metrics.label_agnostic_leaked_documents == 0
    assert metrics.label_agnostic_leakage_rate == 0.0
    assert metrics.label_agnostic_missed_spans == 0


def test_one_prediction_over_two_gold_spans_leaks_under_matching_only() -> None:
    metrics, counts = leakage([pair([(0, 4, "PER"), (6, 12, "PER")], [(2, 10, "PER")])])
    assert (metrics.missed_spans, metrics.leaked_documents) == (1, 1)
    assert metrics.label_agnostic_leaked_documents == 0
    assert leaked_document_ids(
        [pair([(0, 4, "PER"), (6, 12, "PER")], [(2, 10, "PER")])], counts
    ) == ["d1"]


def test_empty_corpus_has_zero_rates() -> None:
    metrics, _ = leakage([])
    assert metrics.n_documents == 0
    assert metrics.leakage_rate == metrics.leakage_rate_pii == 0.0
    assert metrics.label_agnostic_leakage_rate == 0.0


def test_missing_prediction_means_nothing_predicted() -> None:
    gold = corpus(doc([(0, 4, "PER")], "a"), doc([(0, 4, "PER")], "b"))
    pred = corpus(doc([(0, 4, "PER")], "a"))
    pairs = pair_documents(gold, pred)
    assert [(p.id, len(p.predicted)) for p in pairs] == [("a", 1), ("b", 0)]
    metrics, _ = leakage(pairs)
    assert metrics.leaked_documents == 1


def test_prediction_for_unknown_document_is_an_error() -> None:
    gold = corpus(doc([(0, 4, "PER")], "a"))
    pred = corpus(doc([], "a"), doc([], "zz"))
    with pytest.raises(CorpusFormatError) as caught:
        pair_documents(gold, pred)
    assert caught.value.exit_code == 65
    assert "predicted document 'zz' is not in the gold corpus" in caught.value.problems[0]


def test_prediction_on_a_different_text_is_an_error() -> None:
    gold = corpus(doc([], "a"))
    with pytest.raises(CorpusFormatError, match="cannot be scored") as caught:
        pair_documents(gold, corpus(doc([], "a", text="other text")))
    assert "different text" in caught.value.problems[0]


def test_mapping_moves_labels_to_the_coarse_scheme() -> None:
    mapping = LabelMapping(
        name="toy", coarse_labels=("PER", "LOC"), mapping={"NOMBRE": "PER", "CALLE": "LOC"}
    )
    mapped = map_labels(corpus(doc([(0, 4, "NOMBRE"), (23, 29, "CALLE")])), mapping)
    assert [s.label for s in mapped.documents[0].spans] == ["PER", "LOC"]
    assert mapped.labels == ("PER", "LOC")
    with pytest.raises(ConfigError, match="'FECHA' has no entry"):
        map_labels(corpus(doc([(0, 4, "FECHA")])), mapping)


@settings(max_examples=60, deadline=None)
@given(corpus_pairs())
def test_label_agnostic_leakage_never_exceeds_matched_leakage(pairs: tuple[Corpus, Corpus]) -> None:
    metrics, _ = leakage(pair_documents(*pairs))
    assert metrics.label_agnostic_leaked_documents <= metrics.leaked_documents
    assert metrics.leaked_documents <= metrics.n_pii_documents
    assert 0.0 <= metrics.leakage_rate <= metrics.leakage_rate_pii <= 1.0
