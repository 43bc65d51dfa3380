"""Per-label recall, leaked documents and missed shapes: hand-worked cases, and agreement with
the document leakage of shared/metrics/leakage.py on generated corpora."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from protocol import Corpus
from protocol.evaluation import LabelRecall, MissedShape
from shared.metrics import evaluate
from shared.metrics.misses import label_recall, missed_shapes
from tests.shared.metrics.builders import SpanTuple, corpus, corpus_pairs, doc

TEXT = "Ana vino el 12/03/2019 y el 12.03.2019; llame al 600 123 456 o a Bea."
ANA, BEA = (0, 3, "Nombre"), (TEXT.index("Bea"), TEXT.index("Bea") + 3, "Nombre")
SLASH = (TEXT.index("12/"), TEXT.index("12/") + 10, "fecha")
DOTS = (TEXT.index("12."), TEXT.index("12.") + 10, "fecha")
PHONE = (TEXT.index("600"), TEXT.index("600") + 11, "Teléfono")
GOLD = [ANA, SLASH, DOTS, PHONE, BEA]


def _corpus(*per_doc: list[SpanTuple]) -> Corpus:
    return corpus(*(doc(spans, f"d{k}", TEXT) for k, spans in enumerate(per_doc)))


def test_recall_and_leaked_documents_per_label_by_hand() -> None:
    gold = _corpus(GOLD, GOLD, [ANA])
    pred = _corpus(
        [ANA, SLASH, PHONE, BEA],  # misses the dotted date
        [ANA, (SLASH[0], SLASH[1] - 4, "fecha"), DOTS],  # partial date still overlaps; no phone
        [(0, 3, "fecha")],  # the right place, the wrong label: a miss
    )
    assert label_recall(gold, pred) == {
        "Nombre": LabelRecall(support=5, recall=3 / 5, leaked_documents=2),
        "fecha": LabelRecall(support=4, recall=3 / 4, leaked_documents=1),
        "Teléfono": LabelRecall(support=2, recall=1 / 2, leaked_documents=1),
    }


def test_a_label_only_predicted_has_no_row() -> None:
    gold, pred = _corpus([ANA]), _corpus([ANA, PHONE])
    assert set(label_recall(gold, pred)) == {"Nombre"}


def test_missed_shapes_count_what_one_misses_and_the_other_catches() -> None:
    gold = _corpus(GOLD, GOLD)
    reference = _corpus([ANA, SLASH, DOTS, PHONE], [ANA, SLASH, DOTS, PHONE, BEA])
    pred = _corpus([ANA, SLASH, PHONE], [ANA, SLASH, PHONE])
    rows, left_out = missed_shapes(gold, pred, reference)
    # the dotted date twice; Bea once: in d0 the reference misses her too, so it is not counted
    assert rows == (
        MissedShape(
            label="fecha", shape="dd.dd.dddd", casing="none", length="8-15", position="body",
            count=2,
        ),
        MissedShape(
            label="Nombre", shape="Xx", casing="title", length="1-3", position="body", count=1
        ),
    )  # fmt: skip
    assert left_out == 0
    cut, left_out = missed_shapes(gold, pred, reference, max_rows=1)
    assert cut == rows[:1] and left_out == 1


def test_nothing_missed_gives_no_rows() -> None:
    gold = _corpus(GOLD)
    assert missed_shapes(gold, gold, gold) == ((), 0)


@settings(max_examples=60, deadline=None)
@given(corpus_pairs())
def test_per_label_misses_add_up_to_the_documents_leakage(pairs: tuple[Corpus, Corpus]) -> None:
    gold, pred = pairs
    leakage = evaluate(gold, pred).leakage
    per_label = label_recall(gold, pred)
    missed = sum(round(r.support * (1 - r.recall)) for r in per_label.values())
    assert missed == leakage.missed_spans
    assert sum(r.support for r in per_label.values()) == sum(len(d.spans) for d in gold.documents)
    worst = max((r.leaked_documents for r in per_label.values()), default=0)
    total = sum(r.leaked_documents for r in per_label.values())
    assert worst <= leakage.leaked_documents <= total
    # against itself nothing is missed; against the gold corpus every miss is caught
    assert missed_shapes(gold, pred, pred) == ((), 0)
    rows, _ = missed_shapes(gold, pred, gold, max_rows=10_000)
    assert sum(r.count for r in rows) == leakage.missed_spans


@pytest.mark.parametrize("label", ["PER", "per", "Nombre-Sujeto_Asistencia", "Fecha.Día", "名前"])
def test_any_label_name(label: str) -> None:
    gold = _corpus([(0, 3, label)])
    assert label_recall(gold, _corpus([])) == {
        label: LabelRecall(support=1, recall=0.0, leaked_documents=1)
    }
    (row,), _ = missed_shapes(gold, _corpus([]), gold)
    assert row.label == label
