"""The real corpus's identifying n-grams as an index other notes can be checked against.

The sensitive n-gram filter drops a synthetic note that shares with the real training notes
an n-gram holding at least ``sensitive_ngram_min_share`` of one specific identifier or of two
(``sensitive_ngram_identifiers``; ``grams``:
:func:`~site_agent.privacy.grams.identifying_columns`), in words and in the generator's tokens.
This index holds those n-grams' hashes, so a caller can count, before the audit runs, the
n-grams it would drop a note for. The template filler uses it: a random surrogate that
shares an identifier's context with a real one (with ``all`` identifiers: a date's day and
month after the same form header) is a chance collision that another draw removes. The
audit itself still decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from protocol import Document
from site_agent.privacy.grams import identifying_columns, iter_ngrams, real_grams
from site_agent.privacy.specific import identifier_flags
from site_agent.privacy.subword import Unit, load_tokenizer, unit_stream


class SensitiveNgramFilter(Protocol):
    """What the index follows of the audit's sensitive n-gram filter (its ``FilterSettings``,
    ``[audit.policy.filters]``): the n-gram length and an identifier's minimum share."""

    @property
    def sensitive_ngram_n(self) -> int: ...

    @property
    def sensitive_ngram_min_share(self) -> float: ...

    @property
    def sensitive_ngram_identifiers(self) -> str: ...


@dataclass(frozen=True)
class IdentifyingIndex:
    """Per unit (words, and the generator's tokens when a tokenizer is given), the sorted
    hashes of the real n-grams the sensitive n-gram filter counts."""

    n: int
    hashes: dict[Unit, np.ndarray]
    tokenizer: Any = None

    @classmethod
    def build(
        cls, real: Sequence[Document], filters: SensitiveNgramFilter, tokenizer: Any = None
    ) -> IdentifyingIndex:
        """Index ``real`` (gold spans) with the filter's n and share; ``tokenizer``: a loaded
        fast tokenizer or the generator's folder (None: words only)."""
        if isinstance(tokenizer, str | Path):
            tokenizer = load_tokenizer(tokenizer)
        n = filters.sensitive_ngram_n
        specific = identifier_flags(real, filters.sensitive_ngram_identifiers)
        hashes: dict[Unit, np.ndarray] = {}
        units: tuple[Unit, ...] = ("words", "tokens") if tokenizer is not None else ("words",)
        for unit in units:
            stream = unit_stream(real, unit, tokenizer, with_pii=True)
            table = real_grams(stream, n)
            chosen = identifying_columns(table, stream, filters.sensitive_ngram_min_share, specific)
            hashes[unit] = table.vocab[chosen]  # the vocabulary is sorted, so is this
        return cls(n=n, hashes=hashes, tokenizer=tokenizer)

    def hits(self, docs: Sequence[Document]) -> np.ndarray:
        """Per document, how many of its n-grams (words and tokens, with repetition) are
        identifying real n-grams: 0 where the filter would not drop it for one."""
        counts = np.zeros(len(docs), dtype=np.int64)
        for unit, wanted in self.hashes.items():
            if not len(wanted) or not len(docs):
                continue
            stream = unit_stream(docs, unit, self.tokenizer, with_pii=False)
            for piece in iter_ngrams(stream, self.n):
                where = np.minimum(np.searchsorted(wanted, piece.hashes), len(wanted) - 1)
                found = wanted[where] == piece.hashes
                counts += np.bincount(piece.docs[found], minlength=len(docs))
        return counts
