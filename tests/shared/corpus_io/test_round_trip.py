"""Every format keeps a whole corpus: order, text, spans, source, meta, label set, provenance."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import Corpus, Document, Provenance, Span
from shared.corpus_io import detect_format, read_corpus, write_corpus

CORPUS = Corpus(
    documents=(
        Document(
            id="z-2",
            text=" Paciente: Ana Ruiz,\t45 años.\r\nTel 600-123-456\n\n",
            spans=[
                Span(start=11, end=19, label="PER"),
                Span(start=21, end=28, label="AGE"),
                Span(start=35, end=46, label="PHONE"),
            ],
            source="hospital-a",
            meta={"split": "test", "nested": {"k": [1, 2]}},
        ),
        Document(id="a-1", text="Sin datos."),
        Document(id="m-3", text="", source="hospital-b"),
    ),
    labels=("AGE", "LOC", "PER", "PHONE"),
    provenance=Provenance(tool_version="9.9", source="unit", notes={"why": "round trip"}),
)
TARGETS = {"jsonl": "c.jsonl", "brat": "brat", "conll": "c.conll", "datasets": "ds"}


@pytest.mark.parametrize("fmt", sorted(TARGETS))
def test_format_round_trip_is_lossless(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / TARGETS[fmt]
    write_corpus(CORPUS, path, fmt)
    assert detect_format(path) == fmt
    assert read_corpus(path) == CORPUS


def test_writing_twice_gives_identical_files(tmp_path: Path) -> None:
    for fmt, name in TARGETS.items():
        if fmt == "datasets":
            continue  # Arrow files carry a fingerprint of their own
        write_corpus(CORPUS, tmp_path / name, fmt)
        first = {p.name: p.read_bytes() for p in (tmp_path / name).parent.rglob("*") if p.is_file()}
        write_corpus(read_corpus(tmp_path / name), tmp_path / name, fmt)
        assert {
            p.name: p.read_bytes() for p in (tmp_path / name).parent.rglob("*") if p.is_file()
        } == first
