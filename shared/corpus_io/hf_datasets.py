"""Hugging Face ``datasets``: convert a corpus to and from a ``Dataset``, and save/load it.

Columns: ``id``, ``text``, ``spans`` (list of ``{start, end, label}``), ``source``, and
``meta`` (a JSON string, since free-form dicts do not fit one Arrow schema). Span labels are a
``ClassLabel`` over the corpus label set, so the label set (including labels no span uses)
travels inside the dataset; datasets made elsewhere may use plain string labels instead.

The on-disk format ``datasets`` is a ``Dataset.save_to_disk`` folder with the corpus
provenance in ``corpus.provenance.json`` beside the Arrow files.

``datasets`` is imported inside the functions: ``shared`` must stay importable without the
ML stack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from protocol import Corpus, Document
from shared.atomic import atomic_directory
from shared.corpus_io import CorpusFormat, register_format
from shared.corpus_io.sidecar import (
    CORPUS_SIDECAR,
    assemble_corpus,
    read_corpus_sidecar,
    write_corpus_sidecar,
)
from shared.errors import CorpusFormatError
from shared.limits import JsonLimits, LimitExceeded, parse_json
from shared.text_files import read_text
from shared.validation_messages import validation_lines

if TYPE_CHECKING:
    from datasets import Dataset

REQUIRED_COLUMNS = ("id", "text", "spans")


def corpus_features(labels: tuple[str, ...]) -> Any:
    """The Arrow schema of a corpus dataset, with span labels as a ``ClassLabel``."""
    from datasets import ClassLabel, Features, List, Value

    return Features(
        {
            "id": Value("string"),
            "text": Value("string"),
            "spans": List(
                {
                    "start": Value("int64"),
                    "end": Value("int64"),
                    "label": ClassLabel(names=list(labels)),
                }
            ),
            "source": Value("string"),
            "meta": Value("string"),
        }
    )


def to_dataset(corpus: Corpus) -> Dataset:
    """One row per document, in corpus order."""
    from datasets import Dataset

    docs = corpus.documents
    columns = {
        "id": [d.id for d in docs],
        "text": [d.text for d in docs],
        "spans": [[s.model_dump() for s in d.spans] for d in docs],
        "source": [d.source for d in docs],
        "meta": [json.dumps(d.meta, ensure_ascii=False) if d.meta else None for d in docs],
    }
    return Dataset.from_dict(columns, features=corpus_features(corpus.labels))


def _label_names(ds: Dataset) -> list[str] | None:
    """The ``ClassLabel`` names of the span labels, or None when labels are strings."""
    from datasets import ClassLabel

    spans = ds.features["spans"]
    inner = getattr(spans, "feature", spans)  # List({...}) or the dict of a Sequence({...})
    label = inner.get("label") if isinstance(inner, dict) else None
    label = getattr(label, "feature", label)
    return list(label.names) if isinstance(label, ClassLabel) else None


def _span_records(spans: Any) -> list[dict[str, Any]]:
    """Span records from a list of dicts, or from a ``Sequence`` dict of parallel lists."""
    if isinstance(spans, dict):
        return [
            dict(zip(spans, values, strict=True)) for values in zip(*spans.values(), strict=True)
        ]
    return list(spans or ())


def _row_document(row: dict[str, Any], names: list[str] | None) -> Document:
    spans = [
        {**span, "label": names[span["label"]] if names is not None else span["label"]}
        for span in _span_records(row["spans"])
    ]
    meta = row.get("meta")
    return Document(
        id=row["id"],
        text=row["text"],
        spans=spans,
        source=row.get("source"),
        meta=json.loads(meta) if isinstance(meta, str) else meta,
    )


def documents_from_dataset(ds: Dataset, where: object) -> list[Document]:
    """Every row as a document; all bad rows are reported at once, by row number."""
    missing = [c for c in REQUIRED_COLUMNS if c not in ds.column_names]
    if missing:
        raise CorpusFormatError(
            f"dataset lacks column(s) {missing} (has {ds.column_names}); fix: provide "
            "'id', 'text' and 'spans' (list of {start, end, label}), optionally 'source'",
            path=where,
        )
    names = _label_names(ds)
    documents: list[Document] = []
    problems: list[str] = []
    for number, row in enumerate(ds.to_list()):
        try:
            documents.append(_row_document(row, names))
        except ValidationError as exc:
            problems.extend(f"row {number}: {line}" for line in validation_lines(exc))
        except (json.JSONDecodeError, KeyError, TypeError, IndexError, ValueError) as exc:
            problems.append(
                f"row {number}: cannot read the row ({exc!r}); fix: spans are "
                "{start, end, label} records and meta a JSON object string"
            )
    if problems:
        raise CorpusFormatError(
            f"{len(problems)} problem(s) in the dataset", path=where, problems=problems
        )
    return documents


def from_dataset(ds: Dataset) -> Corpus:
    """A corpus from a dataset with at least ``id``, ``text`` and ``spans`` columns."""
    documents = documents_from_dataset(ds, "dataset")
    names = _label_names(ds)
    extra = {"labels": tuple(names)} if names else {}
    return assemble_corpus(documents, extra, "dataset")


def read_saved_dataset(folder: Path) -> Corpus:
    """Load a ``save_to_disk`` folder (one split) and its provenance sidecar."""
    from datasets import load_from_disk

    if (folder / "dataset_dict.json").exists():
        splits = sorted(p.name for p in folder.iterdir() if p.is_dir())
        raise CorpusFormatError(
            f"holds a DatasetDict with splits {splits}, not one corpus; fix: point at one "
            f"split folder, e.g. {folder / splits[0] if splits else folder / 'train'}",
            path=folder,
        )
    check_dataset_files(folder)
    try:
        ds = load_from_disk(str(folder))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorpusFormatError(
            f"is not a readable `datasets` folder ({exc}); fix: save it again with "
            "Dataset.save_to_disk",
            path=folder,
        ) from exc
    documents = documents_from_dataset(ds, folder)
    extra = read_corpus_sidecar(folder / CORPUS_SIDECAR)
    names = _label_names(ds)
    if names and "labels" not in extra:
        extra["labels"] = tuple(names)
    return assemble_corpus(documents, extra, folder)


DATASET_FILES = ("state.json", "dataset_info.json")


def check_dataset_files(folder: Path) -> None:
    """The folder's ``state.json`` and ``dataset_info.json`` are JSON objects (within caps),
    so a truncated or empty one is named instead of failing deep inside ``datasets``."""
    for name in DATASET_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            value = parse_json(read_text(path, what="dataset file"), JsonLimits(), str(path))
        except LimitExceeded as exc:
            raise CorpusFormatError(str(exc), path=path) from exc
        except ValueError as exc:
            line = getattr(exc, "lineno", 1)
            raise CorpusFormatError(
                f"is not valid JSON ({getattr(exc, 'msg', exc)}); `datasets` needs it to load "
                f"the folder; fix: save the dataset again with Dataset.save_to_disk",
                path=path,
                line=line,
            ) from exc
        if not isinstance(value, dict):
            raise CorpusFormatError(
                f"holds a {type(value).__name__}, not a JSON object; fix: save the dataset "
                "again with Dataset.save_to_disk",
                path=path,
                line=1,
            )


def write_saved_dataset(corpus: Corpus, folder: Path) -> None:
    """``save_to_disk`` into a folder that appears complete or not at all."""
    ds = to_dataset(corpus)
    with atomic_directory(folder) as tmp:
        ds.save_to_disk(str(tmp))
        write_corpus_sidecar(tmp / CORPUS_SIDECAR, corpus.labels, corpus.provenance)


def _detect(path: Path) -> bool:
    return path.is_dir() and any(
        (path / name).exists() for name in ("dataset_info.json", "state.json", "dataset_dict.json")
    )


register_format(
    CorpusFormat(
        name="datasets",
        detect=_detect,
        read=read_saved_dataset,
        write=write_saved_dataset,
        description="Hugging Face datasets save_to_disk folder (id, text, spans, source)",
    )
)
