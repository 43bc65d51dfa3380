"""What every measure and filter sees: the two corpora, the policy, and cached token arrays.

Tokenising 100k documents is the most expensive step, so each (corpus, unit) stream and each
(unit, n) :class:`GramTable` is computed once, on first use, and shared by all measures.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np

from protocol import Corpus, Document
from protocol.audit import CanarySet, MembershipCanarySet
from site_agent.audit.policy import AuditPolicy
from site_agent.privacy.grams import GramTable, build_gram_table, identifying_columns
from site_agent.privacy.subword import Unit, load_tokenizer, unit_stream
from site_agent.privacy.tokens import TokenStream, concat_streams

Side = Literal["real", "synthetic"]
ExtraSurface = str | tuple[str, str]
_BASE_N = 3  # longer n-grams are only looked up where all their 3-gram windows matched


def _halves(docs: Sequence[Document], parts: int) -> list[Sequence[Document]]:
    size = max(1, -(-len(docs) // parts))
    return [docs[i : i + size] for i in range(0, len(docs), size)] or [docs]


class AuditContext:
    """The inputs of one audit run, with lazily computed, cached token streams and n-grams."""

    def __init__(
        self,
        real: Corpus,
        synthetic: Corpus,
        policy: AuditPolicy,
        *,
        tokenizer: Any = None,
        extra_pii_surfaces: Iterable[ExtraSurface] = (),
        canaries: CanarySet | None = None,
        membership_canaries: MembershipCanarySet | None = None,
    ) -> None:
        self.real = real
        self.synthetic = synthetic
        self.policy = policy
        self.extra_pii_surfaces = tuple(extra_pii_surfaces)
        self.canaries = canaries
        self.membership_canaries = membership_canaries
        self._tokenizer = tokenizer
        self._streams: dict[tuple[Side, Unit], TokenStream] = {}
        self._tables: dict[tuple[Unit, int], GramTable] = {}
        self._identifying: dict[tuple[Unit, int], np.ndarray] = {}

    @property
    def units(self) -> tuple[Unit, ...]:
        return ("words", "tokens") if self._tokenizer is not None else ("words",)

    @property
    def tokenizer(self) -> Any:
        if isinstance(self._tokenizer, str | Path):
            self._tokenizer = load_tokenizer(self._tokenizer)
        return self._tokenizer

    def corpus(self, side: Side) -> Corpus:
        return self.real if side == "real" else self.synthetic

    def _tokenise(self, side: Side, unit: Unit, docs: Sequence[Document]) -> TokenStream:
        tokenizer = self.tokenizer if unit == "tokens" else None
        return unit_stream(docs, unit, tokenizer, with_pii=side == "real")

    def stream(self, side: Side, unit: Unit = "words") -> TokenStream:
        key = (side, unit)
        if key not in self._streams:
            self._streams[key] = self._tokenise(side, unit, self.corpus(side).documents)
        return self._streams[key]

    def warm_up(self, tables: Iterable[tuple[Unit, int]], workers: int) -> None:
        """Compute the token streams and the given n-gram tables on ``workers`` threads.

        Threads overlap only where numpy, scipy and pandas release the GIL (much of the
        tokenising holds it), so the gain depends on the machine. Measures afterwards only
        read these caches.
        """
        if workers <= 1:
            return
        if "tokens" in self.units:
            _ = self.tokenizer  # load once, before the threads start
        sides: tuple[Side, ...] = ("real", "synthetic")
        with ThreadPoolExecutor(workers) as pool:
            parts = {
                (side, unit): [
                    pool.submit(self._tokenise, side, unit, piece)
                    for piece in _halves(self.corpus(side).documents, workers)
                ]
                for unit in self.units
                for side in sides
            }
            for key, futures in parts.items():
                self._streams[key] = concat_streams([f.result() for f in futures])
            wanted = sorted(set(tables))
            self._build_tables(pool, [key for key in wanted if key[1] <= _BASE_N])
            self._build_tables(pool, [key for key in wanted if key[1] > _BASE_N])

    def _build_tables(self, pool: ThreadPoolExecutor, keys: list[tuple[Unit, int]]) -> None:
        for unit in {u for u, _ in keys}:
            if (unit, _BASE_N) not in self._tables and any(
                n > _BASE_N for u, n in keys if u == unit
            ):
                self.gram_table(unit, _BASE_N)
        futures = {
            (unit, n): pool.submit(
                build_gram_table,
                self.stream("real", unit),
                self.stream("synthetic", unit),
                n,
                self._tables.get((unit, _BASE_N)) if n > _BASE_N else None,
            )
            for unit, n in keys
            if (unit, n) not in self._tables
        }
        for key, future in futures.items():
            self._tables[key] = future.result()

    def gram_table(self, unit: Unit, n: int) -> GramTable:
        key = (unit, n)
        if key not in self._tables:
            base = self.gram_table(unit, _BASE_N) if n > _BASE_N else None
            self._tables[key] = build_gram_table(
                self.stream("real", unit), self.stream("synthetic", unit), n, base
            )
        return self._tables[key]

    def identifying(self, unit: Unit, n: int) -> np.ndarray:
        """The real n-grams (columns of the table) that hold at least the policy's share of one
        identifier: what the sensitive n-gram filter and the gate's recall rules count."""
        key = (unit, n)
        if key not in self._identifying:
            self._identifying[key] = identifying_columns(
                self.gram_table(unit, n),
                self.stream("real", unit),
                self.policy.filters.sensitive_ngram_min_share,
            )
        return self._identifying[key]
