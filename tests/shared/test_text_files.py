"""The one reader of operator-supplied text files: UTF-8 or a named, fixable error."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from shared.errors import ConfigError, CorpusFormatError
from shared.text_files import decode_text, read_text_file, text_lines

PATH = Path("notes.txt")


@pytest.mark.parametrize(
    ("data", "text", "had_bom"),
    [
        (b"plain\n", "plain\n", False),
        (codecs.BOM_UTF8 + "José\r\n".encode(), "José\r\n", True),
        (b"", "", False),
    ],
)
def test_utf8_decodes_exactly(data: bytes, text: str, had_bom: bool) -> None:
    decoded = decode_text(data, PATH)
    assert (decoded.text, decoded.had_bom) == (text, had_bom)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ("abc\u00e9def".encode("utf-16-le"), None),  # no BOM: found by its NUL bytes
        (codecs.BOM_UTF16_LE + "x".encode("utf-16-le"), "UTF-16"),
        (codecs.BOM_UTF16_BE + "x".encode("utf-16-be"), "UTF-16"),
        (codecs.BOM_UTF32_LE + "x".encode("utf-32-le"), "UTF-32"),
    ],
)
def test_wide_encodings_are_named(data: bytes, named: str | None) -> None:
    with pytest.raises(CorpusFormatError) as caught:
        decode_text(data, PATH, what="corpus file")
    message = str(caught.value)
    assert message.startswith(f"{PATH}:1: ")
    assert ("UTF-16 or UTF-32 without a byte-order mark" if named is None else named) in message
    assert "fix: convert it" in message


def test_latin1_byte_is_located_by_line_column_and_offset() -> None:
    data = "line one\nJosé\n".encode("latin-1")
    with pytest.raises(CorpusFormatError) as caught:
        decode_text(data, PATH)
    assert caught.value.line == 2
    assert "byte 0xe9 at column 4 (byte offset 12)" in str(caught.value)
    assert "iconv -f latin1 -t UTF-8 notes.txt > notes.utf8.txt" in str(caught.value)


def test_offsets_count_a_utf8_bom() -> None:
    with pytest.raises(CorpusFormatError, match="column 4 \\(byte offset 3\\)"):
        decode_text(codecs.BOM_UTF8 + b"\xff", PATH)


def test_error_class_is_the_callers(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder"):
        read_text_file(tmp_path, what="site config", error=ConfigError)
    with pytest.raises(ConfigError, match="no such file"):
        read_text_file(tmp_path / "missing.toml", error=ConfigError)


def test_text_lines_split_like_text_mode() -> None:
    assert list(text_lines("a\r\nb\rc\u2028d\n")) == ["a\n", "b\n", "c\u2028d\n"]
