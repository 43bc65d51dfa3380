"""A JSONL corpus read a line at a time (``iter_jsonl``) gives what ``read_jsonl`` gives, and
refuses a bad line naming it."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from protocol import Document, Span
from shared.corpus_io import read_corpus
from shared.corpus_io.jsonl import document_line, iter_jsonl
from shared.errors import CorpusFormatError

DOCS = (
    Document(id="a", text="Ana Ruiz, 70 años.", spans=(Span(start=0, end=8, label="PER"),)),
    Document(id="b", text='Línea con\nsalto y «comillas» "dobles".'),
    Document(id="c", text="Fin.", source="x", meta={"k": "v"}),
)


def _file(tmp_path: Path, lines: list[str], prefix: bytes = b"", end: str = "\n") -> Path:
    path = tmp_path / "c.jsonl"
    path.write_bytes(prefix + end.join(lines).encode() + end.encode())
    return path


@pytest.mark.parametrize(
    ("prefix", "end", "blank"),
    [(b"", "\n", False), (codecs.BOM_UTF8, "\r\n", True), (b"", "\r", True)],
)
def test_streamed_documents_equal_the_whole_file_read(
    tmp_path: Path, prefix: bytes, end: str, blank: bool
) -> None:
    lines = [document_line(d).rstrip("\n") for d in DOCS]
    if blank:
        lines.insert(1, "   ")
    path = _file(tmp_path, lines, prefix, end)
    streamed = list(iter_jsonl(path))
    assert [p for p, _ in streamed] == [0, 1, 2]
    assert tuple(d for _, d in streamed) == read_corpus(path).documents
    assert [d.id for _, d in iter_jsonl(path, only={0, 2})] == ["a", "c"]


def test_written_lines_are_the_files_lines(tmp_path: Path) -> None:
    path = _file(tmp_path, [document_line(d).rstrip("\n") for d in DOCS])
    assert "".join(document_line(d) for _, d in iter_jsonl(path)) == path.read_text()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"id": "x", "text": ', "not valid JSON"),
        ('{"id": "x"}', "text"),
        ('{"id": "x", "text": "ab", "spans": [{"start": 0, "end": 9, "label": "P"}]}', "9"),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, bad: str, message: str) -> None:
    path = _file(tmp_path, [document_line(DOCS[0]).rstrip("\n"), "", bad])
    reader = iter_jsonl(path)
    assert next(reader)[1] == DOCS[0]
    with pytest.raises(CorpusFormatError) as error:
        next(reader)
    assert f"{path}:3:" in "\n".join(error.value.problems) and message in str(error.value.problems)


def test_bytes_that_are_not_utf8_are_located(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(document_line(DOCS[0]).encode() + b'{"id": "x", "text": "caf\xe9"}\n')
    with pytest.raises(CorpusFormatError, match="0xe9") as error:
        list(iter_jsonl(path))
    assert error.value.line == 2
