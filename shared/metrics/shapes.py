"""Surface shapes and note positions of identifiers: what kind of identifier, never which.

A shape describes a surface without its value, so it may leave the site in the site report:

* ``shape``: each run of upper-case letters becomes one ``X``, of lower-case letters one ``x``,
  of letters without case (e.g. CJK) one ``a``; each digit becomes ``d``, and a run of more
  than four digits is written ``dddd+``; a run of whitespace becomes one space; ASCII
  punctuation stays as it is and any other character becomes ``?``. Combining marks belong
  to the letter before them. A shape longer than 24 characters is cut there and ends with
  ``…``. ``12/03/2019`` is ``dd/dd/dddd``, ``Ana García-Pérez`` is ``Xx Xx-Xx``.
* ``casing``: ``upper`` (every cased letter upper), ``lower``, ``title`` (every letter run
  starts upper and goes on lower), ``mixed`` (anything else), ``uncased`` (letters without
  case only) or ``none`` (no letters).
* ``length``: the surface's character count in buckets ``1-3``, ``4-7``, ``8-15``,
  ``16-31``, ``32+``.
* ``position``: where the identifier stands in its note, by non-blank lines. A note of ``n``
  non-blank lines has ``min(3, n // 4)`` header lines (its first) and ``min(2, n // 4)``
  signature lines (its last); a note under four non-blank lines has neither. A line between
  them, in the first half of the note (or the first line after the header), is a salutation
  when it is short (at most six words) and ends with ``,`` or ``:`` ("Estimado Dr. Ruiz:").
  Everything else is body. The span's line is the one its first character is on.
"""

from __future__ import annotations

import re
import string
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

MAX_DIGIT_RUN = 4
MAX_SHAPE_CHARS = 24
LENGTH_BUCKETS: tuple[tuple[int, str], ...] = ((3, "1-3"), (7, "4-7"), (15, "8-15"), (31, "16-31"))
HEADER_LINES, SIGNATURE_LINES, LINES_PER_PART = 3, 2, 4
SALUTATION_MAX_WORDS = 6
SALUTATION_ENDINGS = (",", ":")
POSITIONS = ("header", "salutation", "signature", "body")
ASCII_PUNCTUATION = frozenset(string.punctuation)
WORD = re.compile(r"\w+")


def _char_class(char: str) -> str:
    """The shape symbol of one character, or ``""`` for a combining mark."""
    if unicodedata.category(char).startswith("M"):
        return ""
    if char.isspace():
        return " "
    if char.isdigit():
        return "d"
    if char.isalpha():
        return "X" if char.isupper() else "x" if char.islower() else "a"
    return char if char in ASCII_PUNCTUATION else "?"


def surface_shape(surface: str) -> str:
    """The shape of ``surface`` (module docstring): letters collapse, digit runs are capped."""
    parts: list[str] = []
    previous, digits = "", 0
    for char in surface:
        symbol = _char_class(char)
        if not symbol:
            continue
        if symbol == "d":
            digits += 1
            if digits <= MAX_DIGIT_RUN:
                parts.append("d")
            elif digits == MAX_DIGIT_RUN + 1:
                parts.append("+")
        else:
            digits = 0
            if symbol != previous or symbol not in "Xxa ":
                parts.append(symbol)
        previous = symbol
    shape = "".join(parts).strip()
    return shape if len(shape) <= MAX_SHAPE_CHARS else shape[: MAX_SHAPE_CHARS - 1] + "…"


def casing(surface: str) -> str:
    """``upper``, ``lower``, ``title``, ``mixed``, ``uncased`` or ``none`` (module docstring)."""
    letters = [c for c in surface if c.isalpha()]
    cased = [c for c in letters if c.isupper() or c.islower()]
    if not letters:
        return "none"
    if not cased:
        return "uncased"
    if all(c.isupper() for c in cased):
        return "upper"
    if all(c.islower() for c in cased):
        return "lower"
    runs = re.findall(r"[^\W\d_]+", surface)
    if all(run[0].isupper() and not any(c.isupper() for c in run[1:]) for run in runs):
        return "title"
    return "mixed"


def length_bucket(n_chars: int) -> str:
    """The bucket (``1-3`` ... ``32+``) of a surface of ``n_chars`` characters."""
    for top, name in LENGTH_BUCKETS:
        if n_chars <= top:
            return name
    return f"{LENGTH_BUCKETS[-1][0] + 1}+"


@dataclass(frozen=True)
class NoteLayout:
    """A note's non-blank lines (start offsets and texts), for :func:`position`."""

    starts: tuple[int, ...]
    lines: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> NoteLayout:
        starts: list[int] = []
        lines: list[str] = []
        offset = 0
        for line in text.split("\n"):
            if line.strip():
                starts.append(offset)
                lines.append(line.strip())
            offset += len(line) + 1
        return cls(tuple(starts), tuple(lines))

    def line_of(self, offset: int) -> int:
        """Index of the non-blank line holding character ``offset``."""
        return max(0, bisect_right(self.starts, offset) - 1)

    def position(self, offset: int) -> str:
        """``header``, ``salutation``, ``signature`` or ``body`` of character ``offset``."""
        n = len(self.lines)
        header = min(HEADER_LINES, n // LINES_PER_PART)
        signature = min(SIGNATURE_LINES, n // LINES_PER_PART)
        k = self.line_of(offset)
        if k < header:
            return "header"
        if k >= n - signature:
            return "signature"
        if k < max(header + 1, n // 2) and _is_salutation(self.lines[k]):
            return "salutation"
        return "body"


def _is_salutation(line: str) -> bool:
    return line.endswith(SALUTATION_ENDINGS) and len(WORD.findall(line)) <= SALUTATION_MAX_WORDS


def note_position(text: str, offset: int) -> str:
    """Where character ``offset`` stands in the note ``text`` (module docstring)."""
    return NoteLayout.of(text).position(offset)


def shape_key(text: str, start: int, end: int, layout: NoteLayout) -> tuple[str, str, str, str]:
    """``(shape, casing, length, position)`` of the surface ``text[start:end]``."""
    surface = text[start:end]
    return (
        surface_shape(surface),
        casing(surface),
        length_bucket(len(surface)),
        layout.position(start),
    )


def sorted_counts(
    counts: Iterable[tuple[tuple[str, ...], int]],
) -> list[tuple[tuple[str, ...], int]]:
    """Most frequent first, ties in key order, so reports are stable."""
    return sorted(counts, key=lambda item: (-item[1], item[0]))
