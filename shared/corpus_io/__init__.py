"""Read and write corpora in every supported format through one registry.

Formats register themselves (see ``jsonl.py``, ``brat.py``, ``conll.py``, ``hf_datasets.py``);
``read_corpus`` detects the format from the path when none is named.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from protocol import Corpus
from shared.errors import CorpusFormatError, UsageError


@dataclass(frozen=True)
class CorpusFormat:
    """How to recognise, read and write one on-disk corpus format."""

    name: str
    detect: Callable[[Path], bool]
    read: Callable[[Path], Corpus]
    write: Callable[[Corpus, Path], None]
    description: str = ""


_FORMATS: dict[str, CorpusFormat] = {}
_BUILTIN_MODULES = ("jsonl", "brat", "conll", "hf_datasets")
_BUILTINS_LOADED = False


def register_format(fmt: CorpusFormat) -> CorpusFormat:
    _FORMATS[fmt.name] = fmt
    return fmt


def _load_builtins() -> None:
    """Import every built-in format once (a format imported directly registers only itself)."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    for module in _BUILTIN_MODULES:
        try:
            importlib.import_module(f"shared.corpus_io.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"shared.corpus_io.{module}":
                raise


def formats() -> dict[str, CorpusFormat]:
    _load_builtins()
    return dict(_FORMATS)


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
    for fmt in formats().values():
        if fmt.detect(target):
            return fmt.name
    raise UsageError(
        f"{target}: cannot tell the corpus format; supported: {sorted(formats())} "
        "(.jsonl file; folder of .txt+.ann for BRAT; .conll/.bio file; saved datasets folder); "
        "fix: pass --format"
    )


def _get(name: str) -> CorpusFormat:
    known = formats()
    if name not in known:
        raise UsageError(f"unknown corpus format {name!r}; supported: {sorted(known)}")
    return known[name]


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
    return corpus


def write_corpus(corpus: Corpus, path: str | os.PathLike[str], fmt: str = "jsonl") -> None:
    _get(fmt).write(corpus, Path(path))


__all__ = [
    "CorpusFormat",
    "detect_format",
    "formats",
    "read_corpus",
    "register_format",
    "require_documents",
    "write_corpus",
]
