"""A dropped note's nearest real note, and the runs of words the two share (local only).

Nearness is the number of word trigrams (lower-cased) the notes share, then the number of
words: a copied passage is what got the note dropped, so the real note sharing most runs of
words is the one to put beside it. A word is marked on both sides when it lies in a shared
trigram.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from protocol import Document

WORD = re.compile(r"\w+")
RUN = 3


@dataclass(frozen=True)
class Words:
    """A text's words: their character ranges and lower-cased forms."""

    ranges: tuple[tuple[int, int], ...]
    forms: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Words:
        found = list(WORD.finditer(text))
        return cls(tuple(m.span() for m in found), tuple(m.group().lower() for m in found))

    def runs(self) -> set[tuple[str, ...]]:
        return {self.forms[i : i + RUN] for i in range(len(self.forms) - RUN + 1)}

    def marked(self, shared: set[tuple[str, ...]]) -> list[tuple[int, int]]:
        """The character ranges of the shared runs: consecutive words inside a shared run
        make one range, the text between them included."""
        inside: set[int] = set()
        for i in range(len(self.forms) - RUN + 1):
            if self.forms[i : i + RUN] in shared:
                inside.update(range(i, i + RUN))
        ranges: list[tuple[int, int]] = []
        for i in sorted(inside):
            start, end = self.ranges[i]
            if ranges and i - 1 in inside:
                ranges[-1] = (ranges[-1][0], end)
            else:
                ranges.append((start, end))
        return ranges


@dataclass(frozen=True)
class NearestReal:
    """The real note nearest a dropped one, and the shared words marked on each side."""

    real: Document
    shared_runs: int
    synthetic_marks: list[tuple[int, int]]
    real_marks: list[tuple[int, int]]


class RealIndex:
    """The real notes' words and trigrams, computed once for every dropped note."""

    def __init__(self, real: Sequence[Document]) -> None:
        self.documents = list(real)
        self.words = [Words.of(d.text) for d in self.documents]
        self.runs = [w.runs() for w in self.words]
        self.vocab = [set(w.forms) for w in self.words]

    def nearest(self, text: str) -> NearestReal | None:
        if not self.documents:
            return None
        words = Words.of(text)
        runs, vocab = words.runs(), set(words.forms)
        best = max(
            range(len(self.documents)),
            key=lambda i: (len(runs & self.runs[i]), len(vocab & self.vocab[i]), -i),
        )
        shared = runs & self.runs[best]
        return NearestReal(
            self.documents[best], len(shared), words.marked(shared), self.words[best].marked(shared)
        )
