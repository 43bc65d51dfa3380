"""Where the audit reads the synthetic notes from, a chunk at a time.

The audit reads the synthetic corpus more than once: every note to measure it, the notes
in near-duplicate candidate pairs to compare them exactly, and every note again to write the
kept ones and re-measure the dropped ones. A :class:`SyntheticSource` yields consecutive
chunks of notes (or only the notes at given positions), so a JSONL file of a million notes is
never held whole; :class:`CorpusSource` serves a corpus already in memory the same way.

A JSONL line that is already written as the audited corpus writes it (the toolkit's own
files) is copied as it is when its note is kept, instead of being parsed and written again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

import numpy as np

from protocol import Corpus, Document
from shared.corpus_io import detect_format, read_corpus
from shared.corpus_io.jsonl import document_line, iter_jsonl_lines, parsed_line
from shared.corpus_io.sidecar import file_sidecar, read_corpus_sidecar
from shared.errors import CorpusFormatError


@dataclass(frozen=True)
class SourceChunk:
    """Notes of the synthetic corpus and their positions in it (0-based, increasing)."""

    positions: np.ndarray
    documents: Sequence[Document]


class SyntheticSource(Protocol):
    @property
    def labels(self) -> tuple[str, ...] | None:
        """The declared label set (``None``: the labels the spans use)."""
        ...

    def chunks(self, size: int, only: np.ndarray | None = None) -> Iterator[SourceChunk]:
        """Runs of at most ``size`` notes in corpus order: every note, or those at the sorted
        positions ``only``."""
        ...

    def write_kept(self, size: int, kept: np.ndarray, handle: IO[str]) -> Iterator[SourceChunk]:
        """Write the notes where ``kept`` to ``handle`` (JSONL, as ``write_jsonl`` writes
        them), in order, and yield the others in runs of at most ``size`` notes."""
        ...


def _runs(notes: Iterable[tuple[int, Document]], size: int) -> Iterator[SourceChunk]:
    """(position, note) pairs in runs of at most ``size``."""
    positions: list[int] = []
    docs: list[Document] = []
    for position, doc in notes:
        positions.append(position)
        docs.append(doc)
        if len(docs) == size:
            yield SourceChunk(np.array(positions, dtype=np.int64), docs)
            positions, docs = [], []
    if docs:
        yield SourceChunk(np.array(positions, dtype=np.int64), docs)


def _split(
    pieces: Iterable[SourceChunk], size: int, kept: np.ndarray, handle: IO[str]
) -> Iterator[SourceChunk]:
    def dropped() -> Iterator[tuple[int, Document]]:
        for piece in pieces:
            for position, doc in zip(piece.positions.tolist(), piece.documents, strict=True):
                if kept[position]:
                    handle.write(document_line(doc))
                else:
                    yield position, doc

    return _runs(dropped(), size)


@dataclass(frozen=True)
class CorpusSource:
    """A corpus in memory, served in chunks."""

    corpus: Corpus

    @property
    def labels(self) -> tuple[str, ...] | None:
        return self.corpus.labels

    def chunks(self, size: int, only: np.ndarray | None = None) -> Iterator[SourceChunk]:
        docs = self.corpus.documents
        if only is None:
            for begin in range(0, len(docs), size):
                end = min(begin + size, len(docs))
                yield SourceChunk(np.arange(begin, end, dtype=np.int64), docs[begin:end])
            return
        for begin in range(0, len(only), size):
            positions = np.asarray(only[begin : begin + size], dtype=np.int64)
            yield SourceChunk(positions, [docs[i] for i in positions.tolist()])

    def write_kept(self, size: int, kept: np.ndarray, handle: IO[str]) -> Iterator[SourceChunk]:
        return _split(self.chunks(size), size, kept, handle)


class JsonlSource:
    """A JSONL corpus file read a line at a time (each line checked as ``read_corpus`` checks
    it). The file must not change between the reads of one audit; each read checks so."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise CorpusFormatError(
                "no such file; fix: check the path of the synthetic corpus", path=path
            )
        self.path = path
        self._labels = tuple(read_corpus_sidecar(file_sidecar(path)).get("labels", ())) or None
        self._stamp = self._stat()
        self._as_written = bytearray()  # per note: its line is the one write_jsonl writes

    def _stat(self) -> tuple[int, int]:
        info = os.stat(self.path)
        return info.st_size, info.st_mtime_ns

    @property
    def labels(self) -> tuple[str, ...] | None:
        return self._labels

    def _lines(self) -> Iterator[tuple[int, int, str]]:
        if self._stat() != self._stamp:
            raise CorpusFormatError(
                "changed while the audit was reading it; fix: audit a corpus file that no "
                "other process writes, and run the audit again",
                path=self.path,
            )
        return iter_jsonl_lines(self.path)

    def _document(self, number: int, line: str) -> Document:
        doc = parsed_line(self.path, number, line)
        self._check_labels(doc)
        return doc

    def chunks(self, size: int, only: np.ndarray | None = None) -> Iterator[SourceChunk]:
        wanted = None if only is None else set(np.asarray(only).tolist())
        if only is None:
            self._as_written = bytearray()

        def notes() -> Iterator[tuple[int, Document]]:
            for position, number, line in self._lines():
                if wanted is not None and position not in wanted:
                    continue
                doc = self._document(number, line)
                if only is None:
                    self._as_written.append(document_line(doc) == line)
                yield position, doc

        return _runs(notes(), size)

    def write_kept(self, size: int, kept: np.ndarray, handle: IO[str]) -> Iterator[SourceChunk]:
        """As the protocol says; a kept line already as written is copied without parsing."""
        as_written = np.frombuffer(bytes(self._as_written), dtype=bool)
        if len(as_written) != len(kept):
            as_written = np.zeros(len(kept), dtype=bool)

        def pieces() -> Iterator[SourceChunk]:
            for position, number, line in self._lines():
                if kept[position] and as_written[position]:
                    handle.write(line)
                else:
                    yield SourceChunk(
                        np.array([position], dtype=np.int64), [self._document(number, line)]
                    )

        return _split(pieces(), size, kept, handle)

    def _check_labels(self, doc: Document) -> None:
        if self._labels is None:
            return
        unknown = sorted({s.label for s in doc.spans} - set(self._labels))
        if unknown:
            raise CorpusFormatError(
                f"document {doc.id!r}: span label(s) {unknown} are not in the corpus label set "
                f"{sorted(self._labels)} of its sidecar; fix: add them to the label set or map "
                "them with a label mapping",
                path=self.path,
            )


def synthetic_source(
    synthetic: Corpus | str | os.PathLike[str], fmt: str | None = None
) -> SyntheticSource:
    """A source for ``synthetic``: a corpus in memory, or a corpus file (JSONL is streamed;
    other formats are read whole)."""
    if isinstance(synthetic, Corpus):
        return CorpusSource(synthetic)
    path = Path(synthetic)
    if (fmt or detect_format(path)) == "jsonl":
        return JsonlSource(path)
    return CorpusSource(read_corpus(path, fmt))
