"""Typed placeholders (seed 002): ``{{LABEL:n}}`` where a note had an identifier.

Before the generator sees a note, every span becomes a placeholder of its label, numbered
per label in order of first appearance; the same surface in one note keeps one number, so a
patient named twice is ``{{NOMBRE_SUJETO_ASISTENCIA:1}}`` twice. The generator only ever
reads and writes placeholders, never an identifier. Every placeholder of the training notes
is one token of the adapted generator (``placeholder_tokens``); they are read back from the
decoded text. A label is written as ``label_marks.marker_name`` writes it (any case, any
script; ``{{Date:1}}``, ``{{doctor-name:2}}``) and read back to the corpus's own label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol import Corpus, Document
from site_agent.generate.label_marks import MARK_NAME, label_of, marker_name

PLACEHOLDER = re.compile(rf"\{{\{{({MARK_NAME}):(\d+)\}}\}}")
"""A well-formed placeholder: ``{{`` + a label's marker name + ``:`` + its number + ``}}``."""
BRACES = re.compile(r"\{\{|\}\}")
PLACEHOLDER_LIKE = re.compile(r"\{\{[^{}\n]{0,80}\}\}|\{\{|\}\}")
"""What is left of a placeholder once the well-formed ones are taken out: a pair of braces
around anything else (``{{Date}}``, ``{{Date 1}}``), or a stray ``{{`` or ``}}``."""
CUT_OFF = re.compile(rf"\{{\{{(?:{MARK_NAME}(?::\d*)?)?\}}?$")
"""A placeholder the token budget cut off at the very end of a note (``{{FECHAS:``)."""


def insert_placeholders(doc: Document) -> str:
    """The note's text with every span replaced by its numbered placeholder."""
    numbers: dict[tuple[str, str], int] = {}
    per_label: dict[str, int] = {}
    pieces: list[str] = []
    cursor = 0
    for span in doc.spans:
        key = (span.label, doc.surface(span))
        if key not in numbers:
            per_label[span.label] = per_label.get(span.label, 0) + 1
            numbers[key] = per_label[span.label]
        mark = f"{{{{{marker_name(span.label)}:{numbers[key]}}}}}"
        pieces += [doc.text[cursor : span.start], mark]
        cursor = span.end
    pieces.append(doc.text[cursor:])
    return "".join(pieces)


def placeholder_tokens(train: Corpus) -> tuple[str, ...]:
    """Every placeholder the training notes use (added to the generator's vocabulary)."""
    found = {
        m.group() for doc in train.documents for m in PLACEHOLDER.finditer(insert_placeholders(doc))
    }
    return tuple(sorted(found))


@dataclass(frozen=True)
class Placeholder:
    """One placeholder in a template: where it is and which surrogate it stands for."""

    start: int
    end: int
    label: str
    number: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.label, self.number)


@dataclass(frozen=True)
class Template:
    """A generated note read as a template: its text and placeholders, or why it is refused."""

    text: str
    placeholders: tuple[Placeholder, ...]
    problem: str | None = None


def read_template(generated: str, allowed: frozenset[str]) -> Template:
    """The placeholders of ``generated``; refused (``problem`` set) when one names a label
    outside ``allowed`` or stray braces remain. A placeholder cut off at the end is dropped."""
    text = CUT_OFF.sub("", generated)
    found = tuple(
        Placeholder(m.start(), m.end(), label_of(m.group(1)), int(m.group(2)))
        for m in PLACEHOLDER.finditer(text)
    )
    unknown = sorted({p.label for p in found} - allowed)
    if unknown:
        return Template(text, found, f"placeholder label outside the allow-list: {unknown}")
    if BRACES.search(PLACEHOLDER.sub("", text)):
        return Template(text, found, "malformed placeholder")
    return Template(text, found)
