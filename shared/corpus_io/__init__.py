"""Read and write corpora in every supported format through one registry.

Formats register themselves (see ``jsonl.py``, ``brat.py``, ``conll.py``, ``hf_datasets.py``);
``read_corpus`` detects the format from the path when none is named.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from protocol import Corpus
from shared.errors import CorpusFormatError, UsageError
from shared.ner_tokens import OUTSIDE
from shared.registry import Registry


@dataclass(frozen=True)
class CorpusFormat:
    """How to recognise, read and write one on-disk corpus format."""

    name: str
    detect: Callable[[Path], bool]
    read: Callable[[Path], Corpus]
    write: Callable[[Corpus, Path], None]
    description: str = ""


def _builtin_formats() -> None:
    """Every built-in format (a format imported directly registers only itself)."""
    from shared.corpus_io import brat, conll, hf_datasets, jsonl  # noqa: F401


FORMATS: Registry[CorpusFormat] = Registry(
    "corpus format", builtins=_builtin_formats, error=UsageError, fix="pass one of them"
)


DETECTION_ORDER = ("jsonl", "brat", "conll", "hf_datasets")
"""Which format's ``detect`` is asked first; plug-in formats come after, as registered."""


def register_format(fmt: CorpusFormat) -> CorpusFormat:
    return FORMATS.add(fmt.name, fmt, replace=True)


def formats() -> dict[str, CorpusFormat]:
    return FORMATS.entries()


def detect_format(path: str | os.PathLike[str]) -> str:
    target = Path(path)
    if not target.exists():
        raise UsageError(f"{target}: no such file or folder; fix: check the corpus path")
    if target.is_dir() and not any(target.iterdir()):
        raise CorpusFormatError(
            "is an empty folder, so there is no corpus to read; fix: point to the folder that "
            "holds the .txt/.ann pairs (or the saved dataset), or to the corpus file",
            path=target,
        )
    known = formats()
    first = [known[name] for name in DETECTION_ORDER if name in known]
    for fmt in [*first, *(f for f in known.values() if f.name not in DETECTION_ORDER)]:
        if fmt.detect(target):
            return fmt.name
    raise UsageError(
        f"{target}: cannot tell the corpus format; supported: {sorted(formats())} "
        "(.jsonl file; folder of .txt+.ann for BRAT; .conll/.bio file; saved datasets folder); "
        "fix: pass --format"
    )


def _get(name: str) -> CorpusFormat:
    return FORMATS.get(name)


def read_corpus(path: str | os.PathLike[str], fmt: str | None = None) -> Corpus:
    target = Path(path)
    return _get(fmt or detect_format(target)).read(target)


def require_documents(corpus: Corpus, path: str | os.PathLike[str]) -> Corpus:
    """``corpus`` if it holds at least one document; an empty gold corpus is an error.

    An empty file or folder reads as a valid but empty corpus; nothing can be validated,
    split or trained on it, so the commands that take a gold corpus refuse it here.
    """
    if len(corpus) == 0:
        raise CorpusFormatError(
            "the corpus holds no documents (an empty file or folder); a gold corpus needs at "
            "least one annotated document; fix: check that the path points to the exported "
            "corpus and that the export finished",
            path=path,
        )
    problems = label_problems(corpus)
    if problems:
        raise CorpusFormatError(
            f"{len(problems)} label(s) cannot be used; every other label name works as written "
            "(any case, digits, hyphens, dots, non-ASCII letters)",
            path=path,
            problems=problems,
        )
    return corpus


def label_problems(corpus: Corpus) -> list[str]:
    """Labels no stage can use, each with the first span that carries it and the fix: an
    empty or blank label (no placeholder or tag can name it), and ``O``, the outside tag of
    the annotator's IOB2 scheme (its spans would read as no entity)."""
    problems: list[str] = []
    seen: set[str] = set()
    for doc in corpus.documents:
        for span in doc.spans:
            if span.label in seen:
                continue
            seen.add(span.label)
            where = f"document {doc.id!r}, span [{span.start}, {span.end})"
            if not span.label.strip():
                problems.append(
                    f"{where}: label {span.label!r} is blank; fix: give the span its label"
                )
            elif span.label == OUTSIDE:
                problems.append(
                    f"{where}: label 'O' is the annotator's outside tag (IOB2), so its spans "
                    "would read as no entity; fix: rename the label (e.g. OTHER) in the corpus"
                )
    return problems


def write_corpus(corpus: Corpus, path: str | os.PathLike[str], fmt: str = "jsonl") -> None:
    _get(fmt).write(corpus, Path(path))


__all__ = [
    "FORMATS",
    "CorpusFormat",
    "detect_format",
    "formats",
    "label_problems",
    "read_corpus",
    "register_format",
    "require_documents",
    "write_corpus",
]
