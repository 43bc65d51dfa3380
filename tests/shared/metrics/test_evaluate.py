"""The ``evaluate`` entry point: properties over random corpora and a full report."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings

from protocol import Corpus, LabelMapping
from protocol.evaluation import EvaluationReport
from shared.metrics import BootstrapSettings, evaluate
from tests.shared.metrics.builders import corpus, corpus_pairs, doc

SMALL = BootstrapSettings(n_resamples=50, seed=1)


@settings(max_examples=30, deadline=None)
@given(corpus_pairs())
def test_gold_as_prediction_scores_perfectly(pairs: tuple[Corpus, Corpus]) -> None:
    gold, _ = pairs
    # token scores skip whitespace-only spans (shared.metrics.tokens); one real span is needed
    assume(any(d.text[s.start : s.end].strip() for d in gold.documents for s in d.spans))
    report = evaluate(gold, gold, bootstrap=SMALL, language="spanish")
    for scores in (report.token, report.exact, report.overlap):
        assert (scores.micro.precision, scores.micro.recall, scores.micro.f1) == (1.0, 1.0, 1.0)
        assert scores.macro.f1 == 1.0
    assert report.leakage.leakage_rate == report.leakage.label_agnostic_leakage_rate == 0.0
    assert report.confidence_intervals["overlap.micro.f1"].low == 1.0


@settings(max_examples=30, deadline=None)
@given(corpus_pairs())
def test_exact_f1_never_exceeds_overlap_f1(pairs: tuple[Corpus, Corpus]) -> None:
    report = evaluate(*pairs, language="spanish")
    assert report.exact.micro.f1 <= report.overlap.micro.f1
    assert report.exact.micro.recall <= report.overlap.micro.recall
    for label, scores in report.exact.per_label.items():
        assert scores.true_positives <= report.overlap.per_label[label].true_positives


def test_report_is_json_round_trippable_and_intervals_hold_the_estimates() -> None:
    gold = corpus(*(doc([(0, 4, "PER"), (23, 29, "LOC")], f"d{k}") for k in range(30)))
    pred = corpus(
        *(
            doc([(0, 4, "PER")] if k % 3 else [(0, 3, "PER"), (23, 29, "PER")], f"d{k}")
            for k in range(30)
        )
    )
    report = evaluate(gold, pred, bootstrap=BootstrapSettings(n_resamples=200, seed=4))
    assert EvaluationReport.model_validate_json(report.model_dump_json()) == report
    assert report.leakage.leaked_documents == 30  # LOC is never found with its label
    assert report.leakage.label_agnostic_leaked_documents == 20  # ... but covered in every 3rd
    assert report.exact.per_label["PER"].true_positives == 20
    assert report.overlap.per_label["PER"].true_positives == 30
    for name, ci in report.confidence_intervals.items():
        assert ci.low <= ci.estimate <= ci.high, name
    assert report.confidence_intervals["exact.micro.recall"].estimate == pytest.approx(20 / 60)
    assert report.provenance.config_digest
    assert report.gold_diagnostics.lexical_diversity is not None
    assert report.pred_diagnostics.lexical_diversity is None


def test_mapping_is_applied_to_gold_and_prediction() -> None:
    gold = corpus(doc([(0, 4, "NOMBRE_SUJETO")]))
    pred = corpus(doc([(0, 4, "NOMBRE_PERSONAL")]))
    assert evaluate(gold, pred).exact.micro.f1 == 0.0
    mapping = LabelMapping(
        name="coarse",
        coarse_labels=("PER",),
        mapping={"NOMBRE_SUJETO": "PER", "NOMBRE_PERSONAL": "PER"},
    )
    report = evaluate(gold, pred, mapping)
    assert report.exact.micro.f1 == 1.0
    assert report.labels == ("PER",)
    assert report.label_mapping == "coarse"
