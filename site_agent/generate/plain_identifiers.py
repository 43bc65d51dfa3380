"""Identifier-like text the generator wrote itself, outside any placeholder or tag.

A generator adapted on marked notes should write a marker where a note has an identifier;
an e-mail address, a numeric date or a long number in plain text is one it wrote unmarked.
The template mode refuses such a note; the early PHI-rate check counts them by kind.
"""

from __future__ import annotations

import re
from collections import Counter

IDENTIFIER_LIKE: dict[str, re.Pattern[str]] = {
    "e-mail address": re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+"),
    "numeric date": re.compile(r"\b\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}\b"),
    "long number": re.compile(r"\d(?:[\d .-]?\d){6,}"),
}
"""Text that looks like an identifier, by kind (checked in this order)."""


def first_identifier_kind(text: str) -> str | None:
    """The first kind of identifier-like text found in ``text``, or None."""
    for kind, pattern in IDENTIFIER_LIKE.items():
        if pattern.search(text):
            return kind
    return None


def identifier_kinds(text: str) -> Counter[str]:
    """How many identifier-like strings of each kind ``text`` holds (a string counted once,
    under the first kind that matches it)."""
    found: Counter[str] = Counter()
    for kind, pattern in IDENTIFIER_LIKE.items():
        hits = pattern.findall(text)
        found.update({kind: len(hits)} if hits else {})
        text = pattern.sub(" ", text)
    return found
