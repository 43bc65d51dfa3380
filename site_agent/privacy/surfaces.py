"""Finding known strings (gold PII surfaces, canaries) in a corpus as whole-word sequences,
with an Aho-Corasick automaton (pyahocorasick).

Every text is rewritten as its words (the audit's word unit: lower-cased runs of letters,
marks and digits, see ``tokens.py``) joined by single spaces and padded with one space on
each side: "ANA  Ruiz, de la 70." becomes " ana ruiz de la 70 ". The surfaces, rewritten the
same way, are the keys of one automaton, which then reads every rewritten document once:
" ana ruiz " can only match whole words, and case, punctuation and spacing do not matter.

The rewriting is numpy over the UTF-8 bytes of a chunk of documents (the same byte rule as the
word tokenizer), with the documents of a chunk separated by a newline, which no key contains.
The automaton reads those bytes as Latin-1 text, one character per byte, so a match position
is a byte offset and maps back to its document by a binary search. A match starts and ends at
a space, which is ASCII, so it can never start or end inside a multi-byte character.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ahocorasick
import numpy as np

from site_agent.privacy.tokens import HasText, chunked, lower_keep_length, word_bytes

_SPACE, _NEWLINE = 0x20, 0x0A
_CHUNK_CHARS = 4_000_000


def spaced_words(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every text as " word word ... word " (UTF-8 bytes), joined by newlines; and the
    offsets of those newlines (text ``i`` ends before newline ``i``)."""
    encoded = [lower_keep_length(t).encode("utf-8", "surrogatepass") for t in texts]
    data = np.frombuffer(b" " + b" \n ".join(encoded) + b" ", dtype=np.uint8)
    separator = np.zeros(len(data), dtype=bool)
    separator[np.cumsum([len(e) + 3 for e in encoded], dtype=np.int64)[:-1] - 1] = True
    kept = word_bytes(data) | separator
    gap = ~kept
    first_of_gap = gap & ~np.concatenate([[False], gap[:-1]])
    spaced = np.where(kept, data, np.uint8(_SPACE))[kept | first_of_gap]
    return spaced, np.flatnonzero(spaced == _NEWLINE)


def surface_keys(texts: Sequence[str]) -> list[str]:
    """The automaton key of every text (" ana ruiz "); a text without words gives " "."""
    if not texts:
        return []
    spaced, _ = spaced_words(texts)
    return spaced.tobytes().decode("latin-1").split("\n")


def has_words(key: str) -> bool:
    return len(key) > 1


_SEPARATORS = re.compile(r"[\W_]+")


def normalise_surface(text: str) -> str:
    """Lower-cased words joined by single spaces (for lengths and for reading)."""
    return _SEPARATORS.sub(" ", text.lower()).strip()


@dataclass(frozen=True)
class SurfaceMatcher:
    """An automaton over the keys of some surfaces; a match names the surface's position."""

    automaton: Any
    n_keys: int

    @classmethod
    def build(cls, texts: Sequence[str]) -> SurfaceMatcher:
        """Index ``texts``; a repeated word sequence reports its first text."""
        return cls.from_keys(surface_keys(texts))

    @classmethod
    def from_keys(cls, keys: Sequence[str]) -> SurfaceMatcher:
        """Index keys made by :func:`surface_keys` (keys without words are skipped)."""
        automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        for index, key in enumerate(keys):
            if has_words(key) and key not in automaton:
                automaton.add_word(key, index)
        if len(automaton):
            automaton.make_automaton()
        return cls(automaton, len(automaton))

    def match(
        self, docs: Sequence[HasText], chunk_chars: int = _CHUNK_CHARS
    ) -> tuple[np.ndarray, np.ndarray]:
        """(document, surface) for every occurrence of every surface in ``docs``."""
        found_docs: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        found: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        first = 0
        for chunk in chunked(docs, chunk_chars) if self.n_keys else ():
            spaced, newlines = spaced_words([d.text for d in chunk])
            text = spaced.tobytes().decode("latin-1")
            hits = np.fromiter(
                itertools.chain.from_iterable(self.automaton.iter(text)), dtype=np.int64
            ).reshape(-1, 2)
            found_docs.append(first + np.searchsorted(newlines, hits[:, 0]))
            found.append(hits[:, 1])
            first += len(chunk)
        return np.concatenate(found_docs), np.concatenate(found)
