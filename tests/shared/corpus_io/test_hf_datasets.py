"""Hugging Face datasets: in-memory conversion, saved folders, and foreign dataset layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import Corpus, Document, Span
from shared.corpus_io import detect_format, read_corpus, write_corpus
from shared.corpus_io.hf_datasets import from_dataset, to_dataset
from shared.errors import CorpusFormatError

datasets = pytest.importorskip("datasets")

CORPUS = Corpus(
    documents=(
        Document(
            id="d2",
            text="Juan vive en Madrid.",
            spans=[Span(start=0, end=4, label="PER"), Span(start=13, end=19, label="LOC")],
            source="site-a",
            meta={"split": "test", "n": 3},
        ),
        Document(id="d1", text=""),
    ),
    labels=("LOC", "ORG", "PER"),
)


def test_to_dataset_columns_and_class_labels() -> None:
    ds = to_dataset(CORPUS)
    assert ds.column_names == ["id", "text", "spans", "source", "meta"]
    assert ds.features["spans"].feature["label"].names == ["LOC", "ORG", "PER"]
    row = ds[0]
    assert row["spans"] == [
        {"start": 0, "end": 4, "label": 2},
        {"start": 13, "end": 19, "label": 0},
    ]
    assert (row["source"], ds[1]["source"], ds[1]["meta"]) == ("site-a", None, None)
    assert from_dataset(ds).model_dump(exclude={"provenance"}) == CORPUS.model_dump(
        exclude={"provenance"}
    )


def test_saved_folder_round_trip_is_detected(tmp_path: Path) -> None:
    write_corpus(CORPUS, tmp_path / "ds", "datasets")
    assert detect_format(tmp_path / "ds") == "datasets"
    assert read_corpus(tmp_path / "ds") == CORPUS


def test_foreign_dataset_with_string_labels_and_sequence_spans() -> None:
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "text": datasets.Value("string"),
            "spans": datasets.Sequence(
                {
                    "start": datasets.Value("int64"),
                    "end": datasets.Value("int64"),
                    "label": datasets.Value("string"),
                }
            ),
        }
    )
    ds = datasets.Dataset.from_dict(
        {"id": ["a"], "text": ["Ana"], "spans": [{"start": [0], "end": [3], "label": ["PER"]}]},
        features=features,
    )
    corpus = from_dataset(ds)
    assert corpus.labels == ("PER",)
    assert corpus.documents[0].spans == (Span(start=0, end=3, label="PER"),)


def test_missing_columns_and_bad_rows_are_reported() -> None:
    with pytest.raises(CorpusFormatError) as info:
        from_dataset(datasets.Dataset.from_dict({"id": ["a"], "sentence": ["x"]}))
    assert str(info.value) == (
        "dataset: dataset lacks column(s) ['text', 'spans'] (has ['id', 'sentence']); fix: "
        "provide 'id', 'text' and 'spans' (list of {start, end, label}), optionally 'source'"
    )
    bad = datasets.Dataset.from_list(
        [
            {"id": "a", "text": "Ana", "spans": [{"start": 0, "end": 3, "label": "PER"}]},
            {"id": "b", "text": "Ana", "spans": [{"start": 2, "end": 9, "label": "PER"}]},
        ]
    )
    with pytest.raises(CorpusFormatError) as info:
        from_dataset(bad)
    assert info.value.problems == [
        "row 1: document 'b': span [2, 9) 'PER' lies outside the text (length 3); "
        "fix: offsets are character offsets with 0 <= start < end <= 3"
    ]


def test_dataset_dict_folder_points_at_a_split(tmp_path: Path) -> None:
    datasets.DatasetDict({"train": to_dataset(CORPUS), "test": to_dataset(CORPUS)}).save_to_disk(
        str(tmp_path / "dd")
    )
    with pytest.raises(CorpusFormatError) as info:
        read_corpus(tmp_path / "dd")
    assert str(info.value) == (
        f"{tmp_path / 'dd'}: holds a DatasetDict with splits ['test', 'train'], not one "
        f"corpus; fix: point at one split folder, e.g. {tmp_path / 'dd' / 'test'}"
    )
