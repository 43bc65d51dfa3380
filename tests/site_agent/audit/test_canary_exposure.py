"""Canary exposure: planted canaries are counted in the synthetic corpus; none reach export."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from protocol import Corpus, Document
from shared.corpus_io import read_corpus
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.policy import AuditPolicy
from site_agent.canaries.identifiers import plant_canaries
from tests.site_agent.audit.builders import random_corpus


@pytest.fixture(scope="module")
def planted() -> tuple[Corpus, Corpus, object]:
    original = random_corpus(11, 24, "r", words=50)
    copy, record = plant_canaries(original, 6, seed=3)
    return original, copy, record


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
