"""Canaries: planted as unique gold spans; counted in the synthetic corpus; none reach export."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from protocol import Corpus, Document
from shared.corpus_io import read_corpus
from shared.errors import UsageError
from site_agent.audit import AUDITED_CORPUS, AuditPolicy, run_audit
from site_agent.audit.canaries import kind_of, plant_canaries
from site_agent.audit.digest import corpus_sha256

from .builders import corpus, make_doc, random_corpus


@pytest.fixture(scope="module")
def planted() -> tuple[Corpus, Corpus, object]:
    original = random_corpus(11, 24, "r", words=50)
    copy, record = plant_canaries(original, 6, seed=3)
    return original, copy, record


def test_canaries_are_unique_gold_spans_absent_from_the_original(planted: tuple) -> None:
    original, copy, record = planted
    by_id = copy.by_id()
    values = [c.value for c in record.canaries]
    assert len(values) == len(set(values)) == 6
    assert {c.kind for c in record.canaries} == {"name", "id", "date"}
    original_text = "\n".join(d.text for d in original.documents).lower()
    for canary in record.canaries:
        doc = by_id[canary.document_id]
        assert doc.text[canary.start : canary.end] == canary.value
        assert any(
            (s.start, s.end, s.label) == (canary.start, canary.end, canary.label) for s in doc.spans
        )
        assert canary.value.lower() not in original_text
    assert record.source_corpus_sha256 == corpus_sha256(original)
    assert record.planted_corpus_sha256 == corpus_sha256(copy)
    assert len(copy) == len(original)


def test_planting_is_seeded(planted: tuple) -> None:
    original, _, record = planted
    again = plant_canaries(original, 6, seed=3)[1]
    assert [c.value for c in again.canaries] == [c.value for c in record.canaries]


@pytest.mark.parametrize(
    ("label", "surface", "kind"),
    [
        ("NOMBRE_SUJETO_ASISTENCIA", "Ernesto Rivera", "name"),
        ("ID_SUJETO_ASISTENCIA", "368503", "id"),
        ("NUMERO_TELEFONO", "912 345 678", "phone"),
        ("FECHAS", "12/12/2016", "date"),
        ("FECHAS", "marzo de 2016", None),
        ("TERRITORIO", "Madrid", None),
    ],
)
def test_kind_of_span(label: str, surface: str, kind: str | None) -> None:
    assert kind_of(label, surface) == kind


def test_no_carrier_spans_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="no gold span can carry a canary"):
        plant_canaries(corpus(make_doc("d", "sin", ("Madrid", "TERRITORIO"))), 2)


def _copying_generator(train: Corpus, rng: random.Random, n: int) -> Corpus:
    """A stand-in for synthesis: some notes copy a training sentence, others are new text."""
    docs = []
    for i in range(n):
        source = rng.choice(train.documents)
        sentence = source.text.split(". ")[rng.randint(0, 2)]
        text = (
            f"Nota {i}. {sentence}. Evolución favorable." if i % 2 else f"Nota {i} sin incidencias."
        )
        docs.append(Document(id=f"s{i}", text=text))
    return Corpus(documents=tuple(docs))


def test_canaries_are_counted_and_none_reach_the_export(planted: tuple, tmp_path: Path) -> None:
    _, copy, record = planted
    carriers = {c.document_id for c in record.canaries}
    train_with_canaries = Corpus(documents=tuple(d for d in copy.documents if d.id in carriers))
    synthetic = _copying_generator(train_with_canaries, random.Random(1), 40)
    report = run_audit(copy, synthetic, AuditPolicy(), tmp_path, canaries=record)
    before, after = report.measures["canaries"]["before"], report.measures["canaries"]["after"]
    copied = {
        c.value for c in record.canaries if any(c.value in d.text for d in synthetic.documents)
    }
    assert before["found"] == len(copied) > 0
    assert before["context_5grams_found"] > 0
    assert after["found"] == 0 and after["context_5grams_found"] == 0
    assert report.passed
    assert {r.name for r in report.rules} >= {"canaries_in_export"}
    exported = read_corpus(tmp_path / AUDITED_CORPUS)
    assert not any(c.value in d.text for c in record.canaries for d in exported.documents)
    assert len(exported) > 0


def test_meddocan_canaries_are_found_then_filtered(meddocan_dir: Path, tmp_path: Path) -> None:
    train = read_corpus(meddocan_dir / "train.jsonl")
    small = Corpus(documents=train.documents[:60], labels=train.labels)
    copy, record = plant_canaries(small, 8, seed=5)
    assert {c.kind for c in record.canaries} >= {"name", "id", "date"}
    by_id = copy.by_id()
    copied = [  # a "generator" that reproduces the line holding each canary
        next(line for line in by_id[c.document_id].text.splitlines() if c.value in line)
        for c in record.canaries
    ]
    fresh = [d.text for d in read_corpus(meddocan_dir / "dev.jsonl").documents[:10]]
    synthetic = Corpus(
        documents=tuple(Document(id=f"s{i}", text=text) for i, text in enumerate([*copied, *fresh]))
    )
    report = run_audit(copy, synthetic, AuditPolicy(), tmp_path, canaries=record)
    assert report.measures["canaries"]["before"]["found"] == 8
    assert report.measures["canaries"]["after"]["found"] == 0
    exported = (tmp_path / AUDITED_CORPUS).read_text()
    assert not any(c.value in exported for c in record.canaries)
