"""All of MEDDOCAN train through JSONL -> BRAT -> CoNLL -> datasets -> JSONL without loss.

Each hop is read back with format auto-detection and compared with the original, document by
document: identical text, identical (start, end, label) spans with identical surfaces, and
identical source. The last hop must reproduce the original JSONL file byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import Corpus
from shared.corpus_io import detect_format, read_corpus, write_corpus

HOPS = [("brat", "brat"), ("conll", "train.conll"), ("datasets", "ds"), ("jsonl", "back.jsonl")]


@pytest.fixture(scope="module")
def original(meddocan_dir: Path) -> Corpus:
    return read_corpus(meddocan_dir / "train.jsonl")


def differences(expected: Corpus, got: Corpus) -> list[str]:
    """Every document whose text, spans, surfaces or source changed (empty when lossless)."""
    found = [f"order or ids differ: {len(expected)} vs {len(got)} documents"] * (
        [d.id for d in expected.documents] != [d.id for d in got.documents]
    )
    for want, have in zip(expected.documents, got.documents, strict=False):
        if want.text != have.text:
            found.append(f"{want.id}: text differs")
        surfaces = [(s.start, s.end, s.label, want.surface(s)) for s in want.spans]
        if surfaces != [(s.start, s.end, s.label, have.surface(s)) for s in have.spans]:
            found.append(f"{want.id}: spans differ")
        if want.source != have.source:
            found.append(f"{want.id}: source {want.source!r} became {have.source!r}")
    return found


def test_train_survives_every_format(meddocan_dir: Path, original: Corpus, tmp_path: Path) -> None:
    assert len(original) == 500 and sum(len(d.spans) for d in original.documents) == 11333
    corpus = original
    for fmt, name in HOPS:
        write_corpus(corpus, tmp_path / name, fmt)
        assert detect_format(tmp_path / name) == fmt
        corpus = read_corpus(tmp_path / name)
        assert differences(original, corpus) == [], fmt
        assert corpus.labels == original.labels
        assert corpus.provenance == original.provenance
    back = (tmp_path / "back.jsonl").read_bytes()
    assert back == (meddocan_dir / "train.jsonl").read_bytes()


def test_difference_check_catches_a_shifted_span(original: Corpus) -> None:
    doc = original.documents[3]
    span = doc.spans[0]
    moved = span.model_copy(update={"start": span.start + 1})
    shifted = doc.model_copy(update={"spans": (moved, *doc.spans[1:])})
    docs = list(original.documents)
    docs[3] = shifted
    changed = original.model_copy(update={"documents": tuple(docs)})
    assert differences(original, changed) == [f"{doc.id}: spans differ"]
