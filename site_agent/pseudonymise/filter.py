"""Filter mode: drop every sentence that holds PII, keep the rest with spans re-offset.

Sentences end at ``.``/``!``/``?`` followed by white space, or at a line break. A span never
straddles a kept and a dropped sentence: sentences that one span touches are merged first.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from protocol import Document, Span

_BOUNDARY = re.compile(r"(?<=[.!?])\s+|\n+")


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """Half-open ranges that tile ``text``; each range keeps its trailing white space."""
    bounds: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.end() > start:
            bounds.append((start, match.end()))
            start = match.end()
    if start < len(text):
        bounds.append((start, len(text)))
    return bounds


def _merge_straddled(
    bounds: list[tuple[int, int]], spans: tuple[Span, ...]
) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in bounds:
        straddles = merged and any(s.start < merged[-1][1] < s.end for s in spans)
        if straddles:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def filter_document(doc: Document, labels: Collection[str] = ()) -> tuple[Document | None, int]:
    """The document without PII sentences (None if nothing is left) and how many were dropped.

    ``labels`` restricts which labels make a sentence go; empty means every label.
    """
    bounds = _merge_straddled(sentence_bounds(doc.text), doc.spans)
    risky = [s for s in doc.spans if not labels or s.label in labels]
    pieces: list[str] = []
    spans: list[Span] = []
    dropped = 0
    length = 0
    for start, end in bounds:
        if any(s.start < end and start < s.end for s in risky):
            dropped += 1
            continue
        shift = length - start
        spans.extend(
            Span(start=s.start + shift, end=s.end + shift, label=s.label)
            for s in doc.spans
            if start <= s.start and s.end <= end
        )
        pieces.append(doc.text[start:end])
        length += end - start
    text = "".join(pieces)
    if not text.strip():
        return None, dropped
    kept = doc.model_dump()
    kept.update(text=text, spans=[s.model_dump() for s in spans])
    return Document.model_validate(kept), dropped
