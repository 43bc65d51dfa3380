"""One document id in two splits is refused when the splits are written."""

from __future__ import annotations

from protocol import Corpus
from shared.errors import CorpusFormatError
from site_agent.split.settings import CorpusSettings

SPLIT_ORDER = ("train", "validation", "test")
"""An id is reported in the later split: training first."""


def refuse_shared_ids(parts: dict[str, Corpus], corpus: CorpusSettings) -> None:
    """A document id in two splits is refused now, not hours later where the audit joins the
    training and validation notes: files a site split itself often number from 1 each."""
    files = {"train": corpus.path, "validation": corpus.validation_path, "test": corpus.test_path}
    seen: dict[str, str] = {}
    for name in SPLIT_ORDER:
        for line, doc in enumerate(parts[name].documents, start=1):
            first = seen.setdefault(doc.id, name)
            if first != name:
                raise CorpusFormatError(
                    f"document {line}, field 'id': {doc.id!r} is also a document id of the "
                    f"{first} split ({files[first] or corpus.path}); fix: give every document "
                    "a unique id across the train, validation and test files (e.g. prefix "
                    "each file's ids with its split)",
                    path=files[name] or corpus.path,
                    line=line,
                )
