"""Turn the lines of an IOB2 token file back into documents with character spans.

A small state machine: comment, ``-DOCSTART-``, blank and token lines each move it on. Every
problem is recorded as ``file:line: message; fix: ...`` and reading goes on, so one run
reports all of them. See :mod:`shared.corpus_io.conll` for the layout.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol import Document, Span
from shared.validation_messages import validation_lines

DOCSTART = "-DOCSTART-"
_COMMENT = re.compile(r"^#\s*(\w+)\s*=\s?(.*)$")
_ID_COMMENT = re.compile(r"^#\s*id\s*=")
_TAG = re.compile(r"^(?:O|([BI])-(\S+))$")


@dataclass
class Draft:
    """A document being read: its text so far, closed spans, and the entity still open."""

    line: int
    id: str | None = None
    source: str | None = None
    meta: dict[str, Any] | None = None
    pieces: list[str] = field(default_factory=list)
    length: int = 0
    spans: list[Span] = field(default_factory=list)
    n_tokens: int = 0
    implicit_gap: bool = False
    sentence_break: bool = False
    previous_tag: str | None = None
    open_label: str | None = None
    open_start: int = 0
    last_end: int = 0

    def append(self, piece: str) -> None:
        self.pieces.append(piece)
        self.length += len(piece)

    def close_entity(self) -> None:
        if self.open_label is not None:
            self.spans.append(Span(start=self.open_start, end=self.last_end, label=self.open_label))
            self.open_label = None


class ConllReader:
    """Reads one file; ``documents`` and ``problems`` hold the result."""

    def __init__(self, path: Path, lines: list[str]) -> None:
        self.path = path
        self.blocks_are_documents = not any(
            line.startswith(DOCSTART) or _ID_COMMENT.match(line) for line in lines
        )
        self.documents: list[Document] = []
        self.problems: list[str] = []
        self.draft: Draft | None = None
        self.n_started = 0
        self.tags: dict[str, tuple[str, str] | None] = {}
        self.gaps: dict[str, str] = {'" "': " ", '""': "", '"\\n"': "\n"}

    def problem(self, number: int, message: str) -> None:
        self.problems.append(f"{self.path}:{number}: {message}")

    def start(self, number: int, doc_id: str | None = None) -> Draft:
        self.finish()
        self.n_started += 1
        self.draft = Draft(line=number, id=doc_id)
        return self.draft

    def current(self, number: int) -> Draft:
        return self.draft if self.draft is not None else self.start(number)

    def finish(self) -> None:
        draft, self.draft = self.draft, None
        if draft is None:
            return
        draft.close_entity()
        doc_id = draft.id if draft.id is not None else f"{self.path.stem}-{self.n_started}"
        try:
            self.documents.append(
                Document(
                    id=doc_id,
                    text="".join(draft.pieces),
                    spans=draft.spans,
                    source=draft.source,
                    meta=draft.meta,
                )
            )
        except ValidationError as exc:
            for message in validation_lines(exc):
                self.problem(draft.line, message)

    def read(self, lines: list[str]) -> None:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                self.blank()
            elif line.startswith("#") and "\t" not in line:
                self.comment(number, line)
            elif line.startswith(DOCSTART) and line.split(maxsplit=1)[0] == DOCSTART:
                self.start(number)
            else:
                self.token(number, line)
        self.finish()

    def blank(self) -> None:
        if self.blocks_are_documents:
            self.finish()
        elif self.draft is not None:
            self.draft.close_entity()
            self.draft.sentence_break = True
            self.draft.previous_tag = None

    def comment(self, number: int, line: str) -> None:
        match = _COMMENT.match(line)
        if not match:
            return
        key, value = match[1], match[2]
        if key == "id":
            draft = self.draft
            if draft is None or draft.id is not None or draft.n_tokens:
                draft = self.start(number)
            draft.id = value
        elif key == "source":
            self.current(number).source = value
        elif key == "meta":
            self.meta(number, value)
        elif key == "lead":
            self.lead(number, value)

    def meta(self, number: int, value: str) -> None:
        try:
            meta = json.loads(value)
        except json.JSONDecodeError:
            meta = None
        if not isinstance(meta, dict):
            self.problem(number, "'# meta =' is not a JSON object; fix: write '# meta = {...}'")
            return
        self.current(number).meta = meta

    def lead(self, number: int, value: str) -> None:
        draft = self.current(number)
        try:
            lead = json.loads(value)
        except json.JSONDecodeError:
            lead = None
        if not isinstance(lead, str) or lead.strip() or draft.n_tokens:
            self.problem(
                number,
                "'# lead =' must be a JSON string of whitespace before the first token; "
                "fix: write e.g. '# lead = \"\\n\"' above the tokens of the document",
            )
            return
        draft.append(lead)

    def token(self, number: int, line: str) -> None:
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) not in (2, 3) or not fields[0]:
            self.problem(
                number,
                f"expected 2 or 3 tab-separated columns (token, tag, optional whitespace "
                f"after as JSON), found {len(fields)}; fix: write 'token<TAB>tag' lines",
            )
            return
        gap = self.gap(number, fields[2]) if len(fields) == 3 else None
        draft = self.current(number)
        if draft.implicit_gap:
            draft.append("\n" if draft.sentence_break else " ")
        start = draft.length
        draft.append(fields[0] + gap if gap is not None else fields[0])
        draft.implicit_gap = gap is None
        draft.sentence_break = False
        self.tag(number, draft, fields[1], start, start + len(fields[0]))
        draft.n_tokens += 1

    def gap(self, number: int, column: str) -> str | None:
        if column in self.gaps:
            return self.gaps[column]
        try:
            gap = json.loads(column)
        except json.JSONDecodeError:
            gap = None
        if not isinstance(gap, str) or gap.strip():
            self.problem(
                number,
                f"third column {column!r} is not a JSON string of whitespace; "
                'fix: write the whitespace after the token, e.g. " " or "\\n" or ""',
            )
            return None
        self.gaps[column] = gap
        return gap

    def parse_tag(self, tag: str) -> tuple[str, str] | None:
        """``(prefix, label)``: ``("", "")`` for O, ``("B"|"I", label)``; None if invalid."""
        if tag not in self.tags:
            match = _TAG.match(tag)
            self.tags[tag] = (match[1] or "", match[2] or "") if match else None
        return self.tags[tag]

    def tag(self, number: int, draft: Draft, tag: str, start: int, end: int) -> None:
        parsed = self.parse_tag(tag)
        if parsed is None:
            self.problem(
                number,
                f"tag {tag!r} is not O, B-<label> or I-<label>; "
                "fix: use IOB2 tags (B- starts an entity, I- continues it, O is outside)",
            )
            draft.close_entity()
        elif parsed[0] == "I" and draft.open_label != parsed[1]:
            after = repr(draft.previous_tag) if draft.previous_tag else "the sentence start"
            self.problem(
                number,
                f"tag {tag!r} follows {after}, so no {parsed[1]} entity is open (IOB2); "
                f"fix: start the entity with 'B-{parsed[1]}'",
            )
            draft.close_entity()
            draft.open_label, draft.open_start = parsed[1], start
        elif parsed[0] != "I":
            draft.close_entity()
            if parsed[0] == "B":
                draft.open_label, draft.open_start = parsed[1], start
        draft.last_end = end
        draft.previous_tag = tag


def read_documents(path: Path, lines: list[str]) -> tuple[list[Document], list[str]]:
    """Documents read from ``lines`` of ``path`` and every problem found."""
    reader = ConllReader(path, lines)
    reader.read(lines)
    return reader.documents, reader.problems
