"""JSONL corpora: one document per line, ``{"id", "text", "spans": [...], "source"}``.

This is the format of the MEDDOCAN conversion in ``../shared/data/meddocan``. Corpus-level
provenance and the label set travel in an optional sidecar ``<file>.provenance.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol import Corpus, Document
from shared.atomic import atomic_open
from shared.corpus_io import CorpusFormat, register_format
from shared.corpus_io.sidecar import (
    assemble_corpus,
    file_sidecar,
    read_corpus_sidecar,
    write_corpus_sidecar,
)
from shared.errors import CorpusFormatError
from shared.limits import JsonLimits, LimitExceeded, parse_json
from shared.text_files import read_text, text_lines
from shared.validation_messages import validation_lines


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


LINE_LIMITS = JsonLimits()  # one document per line: 8 MB, nested 32 deep at most


def parse_documents(path: Path) -> tuple[list[Document], list[str]]:
    """Every document that validates, and every problem found (``file:line: message``).

    Each line is checked against :data:`LINE_LIMITS` before it is parsed."""
    documents: list[Document] = []
    problems: list[str] = []
    ids: list[str] = []
    line_of: list[int] = []
    text = read_text(path, what="JSONL corpus file")
    for number, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        try:
            row = parse_json(line, LINE_LIMITS, "the line")
        except LimitExceeded as exc:
            problems.append(f"{path}:{number}: {exc}")
            continue
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
    return assemble_corpus(documents, read_corpus_sidecar(file_sidecar(path)), path)


def write_jsonl(corpus: Corpus, path: Path) -> None:
    with atomic_open(path, "w") as handle:
        for doc in corpus.documents:
            handle.write(json.dumps(document_to_json(doc), ensure_ascii=False) + "\n")
    write_corpus_sidecar(file_sidecar(path), corpus.labels, corpus.provenance)


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
