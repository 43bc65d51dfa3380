"""JSONL corpora: one document per line, ``{"id", "text", "spans": [...], "source"}``.

This is the format of the MEDDOCAN conversion in ``../shared/data/meddocan``. Corpus-level
provenance and the label set travel in an optional sidecar ``<file>.provenance.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol import Corpus, Document, Provenance
from shared.atomic import atomic_open, atomic_write_text
from shared.corpus_io import CorpusFormat, register_format
from shared.errors import CorpusFormatError
from shared.validation_messages import validation_lines


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + ".provenance.json")


def document_to_json(doc: Document) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": doc.id,
        "text": doc.text,
        "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in doc.spans],
    }
    if doc.source is not None:
        row["source"] = doc.source
    if doc.meta:
        row["meta"] = doc.meta
    return row


def parse_documents(path: Path) -> tuple[list[Document], list[str]]:
    """Every document that validates, and every problem found (``file:line: message``)."""
    documents: list[Document] = []
    problems: list[str] = []
    ids: list[str] = []
    line_of: list[int] = []
    try:
        handle = path.open(encoding="utf-8-sig")
    except OSError as exc:
        raise CorpusFormatError(f"cannot open: {exc.strerror}", path=path) from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(
                    f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); "
                    "fix: one JSON object per line"
                )
                continue
            try:
                doc = Document.model_validate(row)
            except ValidationError as exc:
                problems.extend(f"{path}:{number}: {msg}" for msg in validation_lines(exc))
                continue
            documents.append(doc)
            ids.append(doc.id)
            line_of.append(number)
    lines_by_id: dict[str, list[int]] = {}
    for doc_id, number in zip(ids, line_of, strict=True):
        lines_by_id.setdefault(doc_id, []).append(number)
    for doc_id, lines in lines_by_id.items():
        if len(lines) > 1:
            problems.append(
                f"{path}:{lines[1]}: duplicate document id {doc_id!r} "
                f"(lines {', '.join(map(str, lines))}); fix: give every document a unique id"
            )
    return documents, problems


def read_jsonl(path: Path) -> Corpus:
    documents, problems = parse_documents(path)
    if problems:
        raise CorpusFormatError(
            f"{len(problems)} problem(s) in the corpus", path=path, problems=problems
        )
    extra: dict[str, Any] = {}
    side = sidecar_path(path)
    if side.exists():
        meta = json.loads(side.read_text(encoding="utf-8"))
        extra["provenance"] = Provenance.model_validate(meta["provenance"])
        extra["labels"] = tuple(meta.get("labels", ()))
    try:
        return Corpus(documents=tuple(documents), **extra)
    except ValidationError as exc:
        raise CorpusFormatError(
            "corpus-level problems", path=path, problems=validation_lines(exc)
        ) from exc


def write_jsonl(corpus: Corpus, path: Path) -> None:
    with atomic_open(path, "w") as handle:
        for doc in corpus.documents:
            handle.write(json.dumps(document_to_json(doc), ensure_ascii=False) + "\n")
    meta = {
        "schema_version": corpus.schema_version,
        "labels": list(corpus.labels),
        "provenance": corpus.provenance.model_dump(mode="json"),
    }
    atomic_write_text(sidecar_path(path), json.dumps(meta, indent=2, ensure_ascii=False))


def _detect(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in {".jsonl", ".ndjson"}


register_format(
    CorpusFormat(
        name="jsonl",
        detect=_detect,
        read=read_jsonl,
        write=write_jsonl,
        description="one JSON document per line with character spans",
    )
)
