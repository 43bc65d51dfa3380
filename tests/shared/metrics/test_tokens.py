"""Token-level scores: our tokenisation and IOB2 tags, checked against seqeval itself."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from seqeval.metrics import accuracy_score, classification_report
from seqeval.scheme import IOB2

from shared.metrics.pairing import evaluation_labels
from shared.metrics.tokens import document_tags, iob2_tags, token_scores, tokenize
from tests.shared.metrics.builders import pair, span_lists

TEXT_1 = "Juan Pérez-Gil vive en Madrid."
TEXT_2 = "Vive en Madridejos."
PAIRS = [
    pair(
        [(0, 14, "PER"), (23, 29, "LOC")],
        [(0, 10, "PER"), (15, 19, "PER"), (23, 29, "LOC")],
        TEXT_1,
    ),
    pair([(8, 14, "LOC")], [(8, 18, "LOC")], TEXT_2),
]
HAND_TRUE = [
    ["B-PER", "I-PER", "I-PER", "I-PER", "O", "O", "B-LOC", "O"],
    ["O", "O", "B-LOC", "O", "O"],
]
HAND_PRED = [
    ["B-PER", "I-PER", "O", "O", "B-PER", "O", "B-LOC", "O"],
    ["O", "O", "B-LOC", "I-LOC", "O"],
]


def test_tokenize_words_punctuation_and_cuts() -> None:
    assert tokenize(TEXT_1) == [
        (0, 4), (5, 10), (10, 11), (11, 14), (15, 19), (20, 22), (23, 29), (29, 30)
    ]  # fmt: skip
    # a span edge inside "Madridejos" splits it; edges at token borders change nothing
    assert tokenize(TEXT_2, [8, 14, 18]) == [(0, 4), (5, 7), (8, 14), (14, 18), (18, 19)]


def test_iob2_tags_of_aligned_spans() -> None:
    tokens = tokenize(TEXT_1)
    assert iob2_tags(tokens, PAIRS[0].gold.spans) == HAND_TRUE[0]


@pytest.mark.parametrize("k", [0, 1])
def test_document_tags_match_hand_written_sequences(k: int) -> None:
    assert document_tags(PAIRS[k]) == (HAND_TRUE[k], HAND_PRED[k])


def test_token_scores_equal_seqeval_on_hand_sequences() -> None:
    scores, counts = token_scores(PAIRS, evaluation_labels(PAIRS))
    oracle = classification_report(
        HAND_TRUE, HAND_PRED, output_dict=True, mode="strict", scheme=IOB2, zero_division=0
    )
    for label in ("PER", "LOC"):
        got = scores.per_label[label]
        assert got.precision == pytest.approx(oracle[label]["precision"])
        assert got.recall == pytest.approx(oracle[label]["recall"])
        assert got.f1 == pytest.approx(oracle[label]["f1-score"])
        assert got.support == oracle[label]["support"]
    for ours, theirs in ((scores.micro, "micro avg"), (scores.macro, "macro avg")):
        assert ours.precision == pytest.approx(oracle[theirs]["precision"])
        assert ours.recall == pytest.approx(oracle[theirs]["recall"])
        assert ours.f1 == pytest.approx(oracle[theirs]["f1-score"])
    # the chunk counts behind the bootstrap: PER 0 of 2 predicted right, LOC 1 of 2
    assert (scores.micro.true_positives, scores.micro.predicted, scores.micro.support) == (1, 4, 3)
    assert scores.micro.precision == pytest.approx(1 / 4)
    assert scores.micro.recall == pytest.approx(1 / 3)
    assert counts.true_positives.sum() == 1
    assert scores.n_tokens == 13
    assert scores.tag_accuracy == pytest.approx(accuracy_score(HAND_TRUE, HAND_PRED))


def test_no_spans_anywhere_scores_zero() -> None:
    scores, _ = token_scores([pair([], [])], ())
    assert scores.micro.f1 == 0.0
    assert scores.per_label == {}
    assert scores.tag_accuracy == 1.0


@settings(max_examples=60, deadline=None)
@given(span_lists(), span_lists())
def test_counts_agree_with_seqeval_in_both_modes(gold: list, pred: list) -> None:
    """The chunker behind the per-document counts equals seqeval strict and default modes."""
    pairs = [pair(gold, pred)]
    labels = evaluation_labels(pairs)
    scores, _ = token_scores(pairs, labels)
    y_true, y_pred = (list(x) for x in zip(*(document_tags(p) for p in pairs), strict=True))
    if not scores.micro.support and not scores.micro.predicted:
        return
    strict = classification_report(
        y_true, y_pred, output_dict=True, mode="strict", scheme=IOB2, zero_division=0
    )
    lenient = classification_report(y_true, y_pred, output_dict=True, zero_division=0)
    for report in (strict, lenient):
        assert scores.micro.f1 == pytest.approx(report["micro avg"]["f1-score"])
        derived = 2 * scores.micro.true_positives / (scores.micro.predicted + scores.micro.support)
        assert derived == pytest.approx(report["micro avg"]["f1-score"])
