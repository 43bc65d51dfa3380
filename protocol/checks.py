"""Rules a corpus must satisfy, as plain functions that list every problem found.

The pydantic models call these and raise with all problems at once; ``site-agent validate``
calls them directly so that it can report every problem in a file, not only the first one.
"""

import itertools
from collections.abc import Iterable, Sequence
from typing import Protocol


class SpanLike(Protocol):
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def label(self) -> str: ...


def describe_span(span: SpanLike) -> str:
    return f"[{span.start}, {span.end}) {span.label!r}"


def span_problems(doc_id: str, text: str, spans: Sequence[SpanLike]) -> list[str]:
    """Every rule a document's spans break, one human-readable message each."""
    problems: list[str] = []
    n = len(text)
    where = f"document {doc_id!r}"
    for span in spans:
        if not span.label or not span.label.strip():
            problems.append(
                f"{where}: span {describe_span(span)} has an empty label; "
                "fix: give every span a non-empty label from the corpus label set"
            )
        if span.end <= span.start:
            problems.append(
                f"{where}: span {describe_span(span)} has end <= start; "
                "fix: end is exclusive and must be greater than start"
            )
        if span.start < 0 or span.end > n:
            problems.append(
                f"{where}: span {describe_span(span)} lies outside the text (length {n}); "
                f"fix: offsets are character offsets with 0 <= start < end <= {n}"
            )
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    for left, right in itertools.pairwise(ordered):
        if right.start < left.end:
            problems.append(
                f"{where}: spans {describe_span(left)} and {describe_span(right)} overlap; "
                "fix: keep one of them (e.g. the longest) so that no character has two labels"
            )
    return problems


def duplicate_id_problems(ids: Iterable[str]) -> list[str]:
    """One message per document id that occurs more than once (positions are 1-based)."""
    seen: dict[str, list[int]] = {}
    for position, doc_id in enumerate(ids, start=1):
        seen.setdefault(doc_id, []).append(position)
    return [
        f"duplicate document id {doc_id!r} at documents {', '.join(map(str, where))}; "
        "fix: give every document a unique id"
        for doc_id, where in seen.items()
        if len(where) > 1
    ]
