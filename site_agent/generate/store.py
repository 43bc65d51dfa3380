"""The resumable JSONL: documents appended and fsync'd batch by batch.

A run killed mid-write can leave a torn last line; it is detected and cut off before
appending, so a resumed run neither loses nor duplicates documents.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from protocol import Document
from shared.corpus_io.jsonl import document_to_json
from shared.errors import CorpusFormatError


def _good_prefix(path: Path) -> tuple[list[Document], int]:
    """Documents of all complete lines, and the byte length they occupy."""
    documents: list[Document] = []
    good_end = 0
    data = path.read_bytes()
    lines = data.split(b"\n")
    offset = 0
    for number, raw in enumerate(lines, start=1):
        complete = number < len(lines)  # the last piece has no newline after it
        end = offset + len(raw) + (1 if complete else 0)
        if raw.strip():
            try:
                documents.append(Document.model_validate(json.loads(raw)))
            except (ValueError, ValidationError) as exc:
                if complete and number < len(lines) - 1:
                    raise CorpusFormatError(
                        f"unreadable document ({exc.__class__.__name__}); fix: this is not a "
                        "torn final line, so the file was edited: restore it or start a new one",
                        path=path,
                        line=number,
                    ) from exc
                return documents, good_end
            if not complete:
                return documents, good_end  # valid JSON but no newline: written half-way
        good_end = end
        offset = end
    return documents, good_end


def load_done(path: Path) -> dict[str, Document]:
    """Documents already generated, by id; a torn final line is removed from the file."""
    if not path.exists():
        return {}
    documents, good_end = _good_prefix(path)
    if good_end < path.stat().st_size:
        os.truncate(path, good_end)
    return {d.id: d for d in documents}


def append_documents(path: Path, documents: Iterable[Document]) -> None:
    """Append one line per document and fsync before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for doc in documents:
            handle.write(json.dumps(document_to_json(doc), ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
