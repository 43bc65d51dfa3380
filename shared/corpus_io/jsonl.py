"""JSONL corpora: one document per line, ``{"id", "text", "spans": [...], "source"}``.

This is the format of the MEDDOCAN conversion in ``../shared/data/meddocan``. Corpus-level
provenance and the label set travel in an optional sidecar ``<file>.provenance.json``.

A corpus too large to hold (a million synthetic notes) is read a document at a time with
:func:`iter_jsonl` (each line checked as :func:`read_jsonl` checks it) and written a line at a
time with :func:`document_line`.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Container, Iterator
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
from shared.text_files import decode_text, read_text, text_lines
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


def parse_line(line: str, path: Path, number: int) -> Document | list[str]:
    """The document on line ``number``, or its problems (``file:line: message``)."""
    try:
        row = parse_json(line, LINE_LIMITS, "the line")
    except LimitExceeded as exc:
        return [f"{path}:{number}: {exc}"]
    except json.JSONDecodeError as exc:
        return [
            f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); "
            "fix: one JSON object per line"
        ]
    try:
        return Document.model_validate(row)
    except ValidationError as exc:
        return [f"{path}:{number}: {msg}" for msg in validation_lines(exc)]


def parse_documents(path: Path) -> tuple[list[Document], list[str]]:
    """Every document that validates, and every problem found (``file:line: message``).

    Each line is checked against :data:`LINE_LIMITS` before it is parsed."""
    documents: list[Document] = []
    problems: list[str] = []
    line_of: list[int] = []
    text = read_text(path, what="JSONL corpus file")
    for number, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        parsed = parse_line(line, path, number)
        if isinstance(parsed, list):
            problems.extend(parsed)
            continue
        documents.append(parsed)
        line_of.append(number)
    lines_by_id: dict[str, list[int]] = {}
    for doc, number in zip(documents, line_of, strict=True):
        lines_by_id.setdefault(doc.id, []).append(number)
    for doc_id, lines in lines_by_id.items():
        if len(lines) > 1:
            problems.append(
                f"{path}:{lines[1]}: duplicate document id {doc_id!r} "
                f"(lines {', '.join(map(str, lines))}); fix: give every document a unique id"
            )
    return documents, problems


def _numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of ``path`` as :func:`text_lines` splits the whole decoded file, numbered
    from 1, read from disk one at a time (a UTF-8 BOM is dropped, any other encoding
    refused with the line it fails on)."""
    if not path.exists():
        raise CorpusFormatError("no such file; fix: check the path of the corpus", path=path)
    if not stat.S_ISREG(path.stat().st_mode):
        raise CorpusFormatError(
            "is not a regular file; fix: pass the path of the JSONL corpus file", path=path
        )
    number = 0
    with path.open("rb") as handle:
        for raw in handle:
            if number == 0:
                text = decode_text(raw, path, what="JSONL corpus file").text
            else:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    text = decode_text(
                        raw, path, what="JSONL corpus file", first_line=number + 1
                    ).text
            for line in text_lines(text) if "\r" in text else (text,):
                number += 1
                yield number, line


def iter_jsonl_lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """(position, line number, line) of every non-blank line, read from disk one at a time."""
    position = -1
    for number, line in _numbered_lines(path):
        if line.strip():
            position += 1
            yield position, number, line


def parsed_line(path: Path, number: int, line: str) -> Document:
    """The document on a line, or a :class:`CorpusFormatError` naming the line's problems."""
    parsed = parse_line(line, path, number)
    if isinstance(parsed, list):
        raise CorpusFormatError(
            f"{len(parsed)} problem(s) in the corpus", path=path, problems=parsed
        )
    return parsed


def iter_jsonl(path: Path, only: Container[int] | None = None) -> Iterator[tuple[int, Document]]:
    """(position, document) for every document of a JSONL corpus, in file order, read a line
    at a time; with ``only``, just the documents at those positions are parsed.

    A problem stops the reading with a :class:`CorpusFormatError` naming its line (whole-file
    :func:`read_jsonl` lists every problem at once); duplicate ids and labels outside the
    sidecar's label set are for the caller to check, as it sees every document.
    """
    for position, number, line in iter_jsonl_lines(path):
        if only is None or position in only:
            yield position, parsed_line(path, number, line)


def read_jsonl(path: Path) -> Corpus:
    documents, problems = parse_documents(path)
    if problems:
        raise CorpusFormatError(
            f"{len(problems)} problem(s) in the corpus", path=path, problems=problems
        )
    return assemble_corpus(documents, read_corpus_sidecar(file_sidecar(path)), path)


def document_line(doc: Document) -> str:
    """The line :func:`write_jsonl` writes for ``doc`` (with its newline)."""
    return json.dumps(document_to_json(doc), ensure_ascii=False) + "\n"


def write_jsonl(corpus: Corpus, path: Path) -> None:
    with atomic_open(path, "w") as handle:
        for doc in corpus.documents:
            handle.write(document_line(doc))
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
