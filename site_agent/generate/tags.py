"""In-text PHI tags (seed 003): ``<LABEL>surface</LABEL>`` around every identifier.

The generator is adapted on notes whose spans are wrapped in tags, so the notes it writes
carry their own labels. Reading a generated note strips the tags and records each tagged
surface as a span at its exact offset in the stripped text. Each tag is one token of the
adapted generator (``tag_tokens``, added by ``site_agent.adapt.vocabulary``); parsing works
on the decoded text, so offsets do not depend on tokens at all.

Malformed tags are repaired by dropping them (their text stays, unlabelled): a closing tag
with no open one, an open tag never closed or followed by another open tag, a closing tag
of another label, an empty pair, and a tag cut off at the end of the note (a lone tag of any
name, ``<br>`` too). :class:`TagReading` counts them so the rate can be reported; a caller may
reject the note instead of keeping the repair. A well-formed pair naming a label outside the
allow-list is counted apart, per label (``unknown``): the text between its tags is an
identifier the scheme has no label for, so the tagged mode drops such a note whatever
``tag_errors`` says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from protocol import Document, Span
from site_agent.generate.label_marks import MARK_NAME, label_of, marker_name

TAG = re.compile(rf"<(/?)({MARK_NAME})>")
"""An open (``<Label>``) or closing (``</Label>``) tag; the label as ``marker_name`` writes it."""
CUT_OFF_TAG = re.compile(rf"(?:</(?:{MARK_NAME})?|<{MARK_NAME})$")
"""A tag the token budget cut off at the very end of a note (``<NOMBRE_SUJ``)."""


def insert_tags(doc: Document) -> str:
    """The note's text with every span wrapped in its label's tags."""
    pieces: list[str] = []
    cursor = 0
    for span in doc.spans:
        name = marker_name(span.label)
        pieces += [doc.text[cursor : span.start], f"<{name}>", doc.surface(span), f"</{name}>"]
        cursor = span.end
    pieces.append(doc.text[cursor:])
    return "".join(pieces)


def tag_tokens(labels: frozenset[str]) -> tuple[str, ...]:
    """The open and closing tag of every label (added to the generator's vocabulary)."""
    names = sorted(marker_name(label) for label in labels)
    return tuple(tag for name in names for tag in (f"<{name}>", f"</{name}>"))


@dataclass
class TagReading:
    """A generated note with its tags stripped: text, spans, and how many tags were bad."""

    text: str
    spans: list[Span] = field(default_factory=list)
    well_formed: int = 0
    malformed: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    """Well-formed pairs naming a label outside the allow-list, per label."""

    @property
    def tags(self) -> int:
        """Tags seen: two per well-formed pair (of any label) plus every malformed tag."""
        return 2 * (self.well_formed + sum(self.unknown.values())) + self.malformed


@dataclass
class _Open:
    label: str
    start: int  # offset in the stripped text


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the whitespace the generator put inside its tags."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def read_tags(tagged: str, allowed: frozenset[str]) -> TagReading:
    """Strip the tags of ``tagged`` and keep the well-formed pairs with allowed labels as spans."""
    body = tagged
    reading = TagReading(text="")
    cut = CUT_OFF_TAG.search(body)
    if cut is not None:
        body = body[: cut.start()]
        reading.malformed += 1
    out: list[str] = []
    length = 0
    cursor = 0
    current: _Open | None = None
    for match in TAG.finditer(body):
        piece = body[cursor : match.start()]
        out.append(piece)
        length += len(piece)
        cursor = match.end()
        closing, label = match.group(1) == "/", label_of(match.group(2))
        if not closing:
            if current is not None:
                reading.malformed += 1  # the earlier open tag was never closed
            current = _Open(label, length)
            continue
        if current is None or current.label != label:
            reading.malformed += 1 + (current is not None)  # stray close (and its open tag)
            current = None
            continue
        text_so_far = "".join(out)
        start, end = _trimmed(text_so_far, current.start, length)
        if end <= start:
            reading.malformed += 2  # an empty pair
        elif label in allowed:
            reading.spans.append(Span(start=start, end=end, label=label))
            reading.well_formed += 1
        else:
            reading.unknown[label] = reading.unknown.get(label, 0) + 1
        current = None
    out.append(body[cursor:])
    if current is not None:
        reading.malformed += 1  # still open at the end of the note
    reading.text = "".join(out)
    return reading
