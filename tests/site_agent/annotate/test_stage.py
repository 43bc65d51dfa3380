"""The annotate stage labels by the mode's span source: generator spans are kept as they
are (no annotator is loaded), the annotator is asked only in ``annotate`` mode."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from protocol import Corpus, Document, Span
from shared.corpus_io import read_corpus, write_corpus
from site_agent.generate.modes import SpanSource, mode_for, mode_names
from site_agent.stages import annotate as stage

CORPUS = Corpus(
    documents=(
        Document(
            id="syn-0-0", text="Ana vino el 3/4/20.", spans=(Span(start=0, end=3, label="PER"),)
        ),
        Document(id="syn-0-1", text="Sin datos.", spans=()),
    )
)


def test_every_span_source_has_a_labeller() -> None:
    assert set(stage.LABELLERS) == set(get_args(SpanSource))
    assert {mode_for(m).spans for m in mode_names()} <= set(stage.LABELLERS)


@pytest.mark.parametrize("mode", ["tagged", "template"])
def test_generator_spans_pass_through_without_an_annotator(mode: str, tmp_path: Path) -> None:
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_corpus(CORPUS, source)
    spans = stage.label_synthetic_notes(tmp_path / "no-such-model", source, out, mode_for(mode))
    labelled = read_corpus(out)
    assert spans == 1
    assert [(d.id, d.text, d.spans) for d in labelled.documents] == [
        (d.id, d.text, d.spans) for d in CORPUS.documents
    ]
    assert labelled.provenance.notes["spans_from"] == "generator"


def test_annotate_mode_asks_the_annotator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Path] = []

    def annotator(model_dir: Path, corpus: Corpus, progress: object) -> Corpus:
        asked.append(model_dir)
        return corpus

    monkeypatch.setitem(stage.LABELLERS, "annotator", annotator)
    source = tmp_path / "in.jsonl"
    write_corpus(CORPUS, source)
    stage.label_synthetic_notes(
        tmp_path / "model", source, tmp_path / "out.jsonl", mode_for("annotate")
    )
    assert asked == [tmp_path / "model"]
    notes = read_corpus(tmp_path / "out.jsonl").provenance.notes
    assert (notes["mode"], notes["spans_from"]) == ("annotate", "annotator")
