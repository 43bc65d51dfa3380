"""Exact and overlap span matching on hand-worked examples with exact expected numbers."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings

from protocol import Span
from shared.metrics.pairing import evaluation_labels
from shared.metrics.spans import (
    count_spans,
    greedy_overlap_matching,
    intersection,
    overlapping_pairs,
    span_scores,
)
from tests.shared.metrics.builders import SpanTuple, pair, span_lists


def spans(items: list[SpanTuple]) -> list[Span]:
    return [Span(start=s, end=e, label=lab) for s, e, lab in items]


def micro(gold: list[SpanTuple], pred: list[SpanTuple]) -> tuple[tuple[float, ...], ...]:
    pairs = [pair(gold, pred)]
    exact, overlap = span_scores(count_spans(pairs, evaluation_labels(pairs)))
    return tuple(
        (m.micro.true_positives, m.micro.precision, m.micro.recall, m.micro.f1)
        for m in (exact, overlap)
    )


@pytest.mark.parametrize(
    ("gold", "pred", "exact", "overlap"),
    [
        # identical span
        ([(0, 10, "PER")], [(0, 10, "PER")], (1, 1.0, 1.0, 1.0), (1, 1.0, 1.0, 1.0)),
        # partial overlap: no exact hit, one overlap hit
        ([(0, 10, "PER")], [(5, 15, "PER")], (0, 0.0, 0.0, 0.0), (1, 1.0, 1.0, 1.0)),
        # one prediction over two gold spans recovers one of them (one-to-one matching)
        (
            [(0, 4, "PER"), (6, 12, "PER")],
            [(2, 10, "PER")],
            (0, 0.0, 0.0, 0.0),
            (1, 1.0, 0.5, 2 / 3),
        ),
        # same boundaries, wrong label: no hit under either criterion
        ([(0, 5, "PER")], [(0, 5, "LOC")], (0, 0.0, 0.0, 0.0), (0, 0.0, 0.0, 0.0)),
        # greedy by largest intersection, not maximum cardinality: G1-P1 (4) blocks G2-P1 (3)
        # and G1-P2 (2), so only one of the two possible matches is made
        (
            [(0, 10, "PER"), (10, 14, "PER")],
            [(0, 2, "PER"), (6, 13, "PER")],
            (0, 0.0, 0.0, 0.0),
            (1, 0.5, 0.5, 0.5),
        ),
        # nothing predicted
        ([(0, 5, "PER")], [], (0, 0.0, 0.0, 0.0), (0, 0.0, 0.0, 0.0)),
        # only false positives
        ([], [(0, 5, "PER")], (0, 0.0, 0.0, 0.0), (0, 0.0, 0.0, 0.0)),
    ],
)
def test_hand_worked_examples(
    gold: list[SpanTuple], pred: list[SpanTuple], exact: tuple, overlap: tuple
) -> None:
    got_exact, got_overlap = micro(gold, pred)
    assert got_exact == pytest.approx(exact)
    assert got_overlap == pytest.approx(overlap)


def test_greedy_takes_largest_intersection_and_breaks_ties_by_position() -> None:
    gold = spans([(0, 4, "PER"), (6, 12, "PER")])
    assert greedy_overlap_matching(gold, spans([(2, 10, "PER")])) == [(1, 0)]  # 4 > 2
    # equal intersections (2 and 2): the earlier gold span wins
    assert greedy_overlap_matching(gold, spans([(2, 8, "PER")])) == [(0, 0)]


def test_per_label_and_macro_over_two_documents() -> None:
    pairs = [
        pair([(0, 4, "PER"), (23, 29, "LOC")], [(0, 4, "PER"), (23, 27, "LOC")]),
        pair([(0, 4, "PER"), (40, 45, "LOC")], [(0, 3, "LOC")]),
    ]
    exact, overlap = span_scores(count_spans(pairs, evaluation_labels(pairs)))
    per = {k: (v.true_positives, v.predicted, v.support) for k, v in exact.per_label.items()}
    assert per == {"LOC": (0, 2, 2), "PER": (1, 1, 2)}
    per = {k: (v.true_positives, v.predicted, v.support) for k, v in overlap.per_label.items()}
    assert per == {"LOC": (1, 2, 2), "PER": (1, 1, 2)}
    # overlap: LOC P=1/2 R=1/2 F1=1/2; PER P=1 R=1/2 F1=2/3 (the LOC guess on "Juan" is wrong)
    assert overlap.macro.precision == pytest.approx(0.75)
    assert overlap.macro.recall == pytest.approx(0.5)
    assert overlap.macro.f1 == pytest.approx((0.5 + 2 / 3) / 2)
    assert overlap.micro.precision == pytest.approx(2 / 3)
    assert overlap.micro.recall == pytest.approx(2 / 4)
    assert exact.micro.f1 == pytest.approx(2 * 1 / (3 + 4))


@settings(max_examples=100, deadline=None)
@given(span_lists(labels="ABC"), span_lists(labels="ABC"))
def test_sweep_finds_exactly_the_brute_force_overlaps(gold: list, pred: list) -> None:
    g, p = spans(gold), spans(pred)
    brute = [
        (i, j, intersection(a, b))
        for (i, a), (j, b) in itertools.product(enumerate(g), enumerate(p))
        if intersection(a, b) > 0
    ]
    assert sorted(overlapping_pairs(g, p)) == sorted(brute)


@settings(max_examples=100, deadline=None)
@given(span_lists(), span_lists())
def test_exact_never_beats_overlap(gold: list, pred: list) -> None:
    pairs = [pair(gold, pred)]
    exact, overlap = span_scores(count_spans(pairs, evaluation_labels(pairs)))
    assert exact.micro.true_positives <= overlap.micro.true_positives
    assert exact.micro.f1 <= overlap.micro.f1
    matches = greedy_overlap_matching(spans(gold), spans(pred))
    assert len({i for i, _ in matches}) == len({j for _, j in matches}) == len(matches)
