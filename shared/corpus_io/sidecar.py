"""Corpus-level facts that a format cannot hold itself: label set, provenance, document meta.

BRAT, CoNLL and saved ``datasets`` folders have no place for the corpus label set (which may
name labels no span uses), the provenance record, or a document's ``source``/``meta``. They
travel beside the corpus in small JSON sidecars so that every format round-trips a
:class:`~protocol.Corpus` without loss. The corpus sidecar has the same shape as the JSONL
format's ``<file>.provenance.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol import Corpus, Document, Provenance
from shared.atomic import atomic_open, atomic_write_text
from shared.errors import CorpusFormatError
from shared.text_files import read_text, text_lines
from shared.validation_messages import validation_lines

CORPUS_SIDECAR = "corpus.provenance.json"
DOCUMENT_SIDECAR = "corpus.meta.jsonl"


def file_sidecar(path: Path) -> Path:
    """The corpus sidecar beside a single-file corpus: ``<file>.provenance.json``."""
    return path.with_name(path.name + ".provenance.json")


def write_corpus_sidecar(path: Path, labels: Iterable[str], provenance: Provenance) -> None:
    """Write the label set and provenance of a corpus to ``path``."""
    payload = {
        "labels": list(labels),
        "provenance": provenance.model_dump(mode="json"),
    }
    atomic_write_text(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def read_corpus_sidecar(path: Path) -> dict[str, Any]:
    """``Corpus`` keyword arguments (``labels``, ``provenance``) from ``path``; {} if absent."""
    if not path.exists():
        return {}
    try:
        payload = json.loads(read_text(path, what="corpus sidecar"))
        provenance = Provenance.model_validate(payload["provenance"])
        labels = tuple(str(label) for label in payload.get("labels", ()))
    except json.JSONDecodeError as exc:
        raise CorpusFormatError(
            f"not valid JSON ({exc.msg}); fix: repair the sidecar or delete it to read the "
            "corpus without its recorded provenance",
            path=path,
            line=exc.lineno,
        ) from exc
    except (KeyError, TypeError, ValidationError) as exc:
        raise CorpusFormatError(
            f"not a corpus sidecar ({exc}); fix: it must hold 'labels' and 'provenance' as "
            "written by this toolkit, or delete it",
            path=path,
        ) from exc
    return {"labels": labels, "provenance": provenance}


def write_document_sidecar(path: Path, documents: Iterable[Document]) -> None:
    """One line per document, in corpus order: ``{"id", "source"?, "meta"?}``."""
    with atomic_open(path, "w") as handle:
        for doc in documents:
            row: dict[str, Any] = {"id": doc.id}
            if doc.source is not None:
                row["source"] = doc.source
            if doc.meta:
                row["meta"] = doc.meta
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_document_sidecar(path: Path) -> dict[str, dict[str, Any]]:
    """Per-document ``source``/``meta`` keyed by id, in the recorded order; {} if absent."""
    if not path.exists():
        return {}
    rows: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(text_lines(read_text(path, what="document sidecar")), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            doc_id = row.pop("id")
        except (json.JSONDecodeError, KeyError, AttributeError, TypeError) as exc:
            raise CorpusFormatError(
                f"not a document sidecar row ({exc}); fix: one JSON object per line with "
                "an 'id' and optional 'source' and 'meta'",
                path=path,
                line=number,
            ) from exc
        unknown = set(row) - {"source", "meta"}
        if unknown:
            raise CorpusFormatError(
                f"unknown keys {sorted(unknown)}; fix: only 'id', 'source' and 'meta' are allowed",
                path=path,
                line=number,
            )
        rows[str(doc_id)] = row
    return rows


def assemble_corpus(documents: Iterable[Document], extra: dict[str, Any], path: object) -> Corpus:
    """A validated corpus, or a ``CorpusFormatError`` naming ``path`` with every problem."""
    try:
        return Corpus(documents=tuple(documents), **extra)
    except ValidationError as exc:
        raise CorpusFormatError(
            "corpus-level problems", path=path, problems=validation_lines(exc)
        ) from exc
