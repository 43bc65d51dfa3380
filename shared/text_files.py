"""Read the text files an operator hands us (corpora, site.toml, mappings) as UTF-8, or say why not.

Every reader goes through :func:`read_text_file` so that a file saved by a spreadsheet or an
old editor ends in one clear error instead of a ``UnicodeDecodeError`` traceback:

- a folder where a file is expected, or a missing file, is named as such;
- a UTF-8 byte-order mark is accepted (and reported, because BRAT offsets count it);
- a UTF-16/UTF-32 byte-order mark is recognised and refused with the ``iconv`` command that
  converts the file (offsets and line numbers are only defined over UTF-8 text here);
- any other byte that is not UTF-8 is located by line, column and byte offset, with a guess
  at the encoding and the conversion command.

The text is returned exactly as decoded (line endings untouched); :func:`text_lines` iterates
it as ``open()`` in text mode would.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shared.errors import CorpusFormatError, ToolkitError

UTF8_BOM = codecs.BOM_UTF8
# Longest first: the UTF-32 LE mark starts with the UTF-16 LE one.
FOREIGN_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
_SNIFF_BYTES = 4096
MAX_TEXT_BYTES = 1 << 30
"""The largest text file read (1 GiB): a corpus, site.toml or mapping beyond it is refused
before it is read, so ``/dev/zero`` or a runaway file cannot exhaust memory."""


@dataclass(frozen=True)
class TextFile:
    """A decoded text file: its text (BOM removed) and whether it started with a UTF-8 BOM."""

    text: str
    had_bom: bool


def _error(
    kind: type[ToolkitError], path: Path, message: str, line: int | None = None
) -> ToolkitError:
    """``kind`` naming ``path`` (and ``line``) whichever way that exception class does."""
    if issubclass(kind, CorpusFormatError):
        return kind(message, path=path, line=line)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    return kind(where + message)


def _iconv(source: str, path: Path) -> str:
    converted = path.with_name(f"{path.stem}.utf8{path.suffix}")
    return f"iconv -f {source} -t UTF-8 {path} > {converted}"


def _foreign_bom(data: bytes) -> str | None:
    for mark, name in FOREIGN_BOMS:
        if data.startswith(mark):
            return name
    return None


def _looks_wide(data: bytes) -> bool:
    """True when NUL bytes are frequent: UTF-16/32 text without a byte-order mark."""
    head = data[:_SNIFF_BYTES]
    return len(head) >= 4 and head.count(0) * 4 >= len(head)


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _undecodable(path: Path, data: bytes, offset: int, what: str) -> str:
    """What is wrong at ``offset`` (its line is named by the caller) and how to convert."""
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    byte = data[offset]
    if _looks_wide(data):
        guess, source = "UTF-16 or UTF-32 without a byte-order mark", "UTF-16LE"
    else:
        guess, source = "Latin-1 (ISO-8859-1) or Windows-1252", "latin1"
    return (
        f"byte 0x{byte:02x} at column {column} (byte offset {offset}) is not UTF-8; the"
        f" {what} must be UTF-8 text and this looks like {guess}; "
        f"fix: convert it, e.g. `{_iconv(source, path)}`"
    )


def decode_text(
    data: bytes,
    path: Path,
    *,
    what: str = "file",
    error: type[ToolkitError] = CorpusFormatError,
    first_line: int = 1,
) -> TextFile:
    """``data`` (the bytes of ``path``) as UTF-8 text, or ``error`` saying how to convert it.

    ``first_line``: the line number of ``data``'s first line in the file (a file decoded a
    line at a time names the line the bad byte is on)."""
    foreign = _foreign_bom(data)
    if foreign is not None:
        raise _error(
            error,
            path,
            f"the {what} is encoded as {foreign} (it starts with a {foreign} byte-order mark); "
            f"only UTF-8 is read; fix: convert it, e.g. `{_iconv(foreign, path)}`",
            line=1,
        )
    had_bom = data.startswith(UTF8_BOM)
    body = data[len(UTF8_BOM) :] if had_bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(UTF8_BOM) if had_bom else 0)
        message = _undecodable(path, data, offset, what)
        line = _line_of(data, offset) + first_line - 1
        raise _error(error, path, message, line=line) from None
    return TextFile(text, had_bom)


def read_text_file(
    path: str | os.PathLike[str],
    *,
    what: str = "file",
    error: type[ToolkitError] = CorpusFormatError,
    max_bytes: int = MAX_TEXT_BYTES,
) -> TextFile:
    """Read ``path`` as UTF-8; every failure is an ``error`` naming the file and the fix.

    ``what`` names the file's role in messages ("corpus file", "site config"). Only a regular
    file of at most ``max_bytes`` is read (a device, pipe or larger file is refused).
    """
    target = Path(path)
    if target.is_dir():
        raise _error(
            error,
            target,
            f"is a folder, but the {what} must be a file; fix: pass the path of the file "
            "itself (not the folder that holds it)",
        )
    try:
        data = _read_capped(target, what, error, max_bytes)
    except FileNotFoundError:
        raise _error(error, target, f"no such file; fix: check the path of the {what}") from None
    except OSError as exc:
        raise _error(
            error, target, f"cannot read the {what} ({exc.strerror}); fix: check its permissions"
        ) from None
    return decode_text(data, target, what=what, error=error)


def _read_capped(path: Path, what: str, error: type[ToolkitError], max_bytes: int) -> bytes:
    """The bytes of a regular file no larger than ``max_bytes`` (read at most that many)."""
    if not stat.S_ISREG(path.stat().st_mode):  # before opening: a FIFO's open would block
        raise _error(
            error,
            path,
            f"is not a regular file (a device, pipe or socket); the {what} must be a file "
            "on disk; fix: pass the path of the file itself",
        )
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _error(
            error,
            path,
            f"is larger than the cap of {max_bytes} bytes for a {what}; fix: check that it is "
            "the right file, or split it",
        )
    return data


def read_text(
    path: str | os.PathLike[str],
    *,
    what: str = "file",
    error: type[ToolkitError] = CorpusFormatError,
) -> str:
    """The text of ``path`` without a UTF-8 BOM (see :func:`read_text_file`)."""
    return read_text_file(path, what=what, error=error).text


def text_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their endings, split as ``open()`` in text mode splits them."""
    return iter(io.StringIO(text, newline=None))
