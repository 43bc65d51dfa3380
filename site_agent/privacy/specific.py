"""Which identifiers are specific enough to point at one person.

A full name, a street, an e-mail address, a record number or a phone number can point at one
record; a date, an age, a sex, a country, a town or a profession is shared by many people
(``shared.label_families.QUASI_IDENTIFIER_FAMILIES``) and identifies only next to more of
the record. The PII echo drops a note only for a specific surface, and the sensitive n-gram
filter only for an n-gram holding much of a specific identifier or of two identifiers at
once, so a random date that shares day and month with a real one after the same form header
is counted, not dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from protocol import Document
from shared.label_families import is_quasi_identifier

_DATE = re.compile(r"^\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}$")
_NAME_WORD = re.compile(r"(?<![^\W\d_])[^\W\d_a-zß-ÿ][^\W\d_]+")


def is_specific(surface: str, label: str | None = None) -> bool:
    """Enough to point at someone: not of a quasi-identifier ``label`` (when given), and two
    capitalised words (a full name, a street, an institution), an e-mail address, or six
    digits that are not just a date (an id, a phone number).

    Common phrases ("dos días", "septiembre de 2000"), single names or towns, postal codes
    and dates on their own are not: a generator reproduces many of them by chance. Needs the
    surface as written (case matters).
    """
    if label is not None and is_quasi_identifier(label):
        return False
    if "@" in surface:
        return True
    digits = sum(c.isdigit() for c in surface)
    if digits >= 6 and not _DATE.match(surface.strip()):
        return True
    return len(_NAME_WORD.findall(surface)) >= 2


def span_specificity(docs: Sequence[Document]) -> np.ndarray:
    """Per gold span, numbered as a real token stream numbers them (document order, then each
    document's spans in order): whether it is specific."""
    flags = [is_specific(d.text[s.start : s.end], s.label) for d in docs for s in d.spans]
    return np.asarray(flags, dtype=bool)


def identifier_flags(docs: Sequence[Document], identifiers: str) -> np.ndarray | None:
    """What ``identifying_columns`` takes for ``[audit.policy.filters]
    sensitive_ngram_identifiers``: the spans' specificity for "specific", None for "all"."""
    return span_specificity(docs) if identifiers == "specific" else None
