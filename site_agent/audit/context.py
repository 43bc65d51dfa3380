"""What every measure and filter sees: the real side, built once, and the synthetic notes one
chunk at a time.

The audit streams the synthetic corpus. :class:`AuditContext` holds the real corpus, the
policy and the indexes built over the real corpus once (token streams, n-gram vocabularies,
which n-grams identify someone); :class:`SyntheticChunk` is a run of synthetic notes with their
token streams and their hits in those indexes, computed once per chunk and shared by every
measure. So the audit's memory grows with the real corpus and the chunk size, and with the
synthetic corpus only through each measure's small per-note results. The real side is built
from a :class:`RealPlan` (what the enabled measures and filters use), one n-gram table at a
time, keeping of each only what lookups and figures read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from scipy import sparse

from protocol import Corpus, Document
from protocol.audit import CanarySet, MembershipCanarySet
from site_agent.audit.document_ids import DocumentIds
from site_agent.audit.policy import AuditPolicy
from site_agent.privacy.grams import GramTable, RealGrams, identifying_columns, lookup_grams
from site_agent.privacy.grams import real_grams as build_real_grams
from site_agent.privacy.rouge import prefix_matrix
from site_agent.privacy.specific import identifier_flags
from site_agent.privacy.subword import Unit, load_tokenizer, unit_stream
from site_agent.privacy.tokens import TokenStream

ExtraSurface = str | tuple[str, str]
Table = tuple[Unit, int]
T = TypeVar("T")
BASE_N = 3  # longer n-grams are only looked up where all their 3-gram windows matched


@dataclass(frozen=True)
class RealPlan:
    """What the enabled measures and filters need of the real side, built once up front."""

    tables: frozenset[Table]
    """(unit, n): the real n-gram vocabularies every chunk of synthetic notes is looked up in"""
    identifying: frozenset[Table] = frozenset()
    """tables whose identifying n-grams are counted or filtered"""
    counts: frozenset[int] = frozenset()
    """word n-gram lengths whose per-document counts ROUGE-N recall reads"""
    prefix: tuple[int, float] | None = None
    """(n, threshold) of the ROUGE filter: the prefixes that find its candidate pairs"""

    def all_tables(self) -> list[Table]:
        """Every table to build, with the 3-gram tables that prune the lookups of longer ones."""
        words: set[Table] = {("words", n) for n in self.counts}
        if self.prefix is not None:
            words.add(("words", self.prefix[0]))
        wanted: set[Table] = {*self.tables, *self.identifying, *words}
        bases: set[Table] = {(u, BASE_N) for u, n in wanted if n > BASE_N}
        return sorted(wanted | bases)


class AuditContext:
    """The inputs of one audit run, with the real side built once by :meth:`prepare`.

    ``synthetic_ids`` holds the ids of the synthetic notes read so far (the run appends each
    chunk's).
    """

    def __init__(
        self,
        real: Corpus,
        policy: AuditPolicy,
        *,
        tokenizer: Any = None,
        extra_pii_surfaces: Iterable[ExtraSurface] = (),
        canaries: CanarySet | None = None,
        membership_canaries: MembershipCanarySet | None = None,
    ) -> None:
        self.real = real
        self.policy = policy
        self.extra_pii_surfaces = tuple(extra_pii_surfaces)
        self.canaries = canaries
        self.membership_canaries = membership_canaries
        self.synthetic_ids = DocumentIds()
        self._tokenizer = tokenizer
        self._streams: dict[Unit, TokenStream] = {}
        self._grams: dict[Table, RealGrams] = {}
        self._identifying: dict[Table, np.ndarray] = {}
        self._prefix: dict[tuple[int, float], sparse.csr_matrix] = {}

    @property
    def units(self) -> tuple[Unit, ...]:
        return ("words", "tokens") if self._tokenizer is not None else ("words",)

    @property
    def tokenizer(self) -> Any:
        if isinstance(self._tokenizer, str | Path):
            self._tokenizer = load_tokenizer(self._tokenizer)
        return self._tokenizer

    def tokenise(self, unit: Unit, docs: Sequence[Document], *, real: bool) -> TokenStream:
        tokenizer = self.tokenizer if unit == "tokens" else None
        return unit_stream(docs, unit, tokenizer, with_pii=real)

    def stream(self, unit: Unit = "words") -> TokenStream:
        """The real corpus's token stream (without its PII flags once prepared)."""
        if unit not in self._streams:
            self._streams[unit] = self.tokenise(unit, self.real.documents, real=True)
        return self._streams[unit]

    def prepare(self, plan: RealPlan, workers: int = 1) -> None:
        """Build the real side of ``plan``: one n-gram table at a time, each with what is
        derived from its occurrences (identifying n-grams, per-document counts, prefixes),
        then without the occurrences, so the peak holds one table's occurrences at most."""
        if "tokens" in self.units:
            _ = self.tokenizer  # load once, before any thread starts
        with ThreadPoolExecutor(max(workers, 1)) as pool:
            for unit, stream in zip(self.units, pool.map(self.stream, self.units), strict=True):
                self._streams[unit] = stream
        filters = self.policy.filters
        share = filters.sensitive_ngram_min_share
        specific = identifier_flags(self.real.documents, filters.sensitive_ngram_identifiers)
        for key in plan.all_tables():
            if key in self._grams:
                continue
            grams = build_real_grams(self.stream(key[0]), key[1])
            if key in plan.identifying:
                real = self.stream(key[0])
                self._identifying[key] = identifying_columns(grams, real, share, specific)
            if key[0] == "words" and key[1] in plan.counts:
                grams = grams.with_counts()
            if plan.prefix is not None and key == ("words", plan.prefix[0]):
                self._prefix[plan.prefix] = prefix_matrix(grams, plan.prefix[1])
            self._grams[key] = grams.slim()
            del grams  # the occurrences go before the next table is built
        self.release_caches()

    def release_caches(self) -> None:
        """Drop the real streams' PII flags and cached per-token arrays (what building the
        real side needed); the measures read their tokens only."""
        for unit, stream in self._streams.items():
            self._streams[unit] = TokenStream(stream.hashes, stream.doc_offsets)

    def real_grams(self, unit: Unit, n: int) -> RealGrams:
        """The real ``unit`` ``n``-grams (vocabulary, PII flags, counts where planned)."""
        return self._planned(self._grams, (unit, n), "n-gram table")

    def identifying(self, unit: Unit, n: int) -> np.ndarray:
        """The real n-grams (columns of the vocabulary) that hold at least the policy's share
        of one identifier: what the sensitive n-gram filter and the gate's recall rules count."""
        return self._planned(self._identifying, (unit, n), "identifying n-grams")

    def prefix(self, n: int, threshold: float) -> sparse.csr_matrix:
        """:func:`~site_agent.privacy.rouge.prefix_matrix` of the real word ``n``-grams."""
        return self._planned(self._prefix, (n, threshold), "ROUGE prefix")

    @staticmethod
    def _planned(built: dict[Any, T], key: Any, what: str) -> T:
        if key not in built:
            raise RuntimeError(  # a measure asked for what the run's real_plan left out
                f"the real side holds no {what} {key}: the plan built from the policy did not "
                "include it"
            )
        return built[key]


class SyntheticChunk:
    """A run of synthetic notes (``positions`` in the corpus) with their token streams and
    their hits in the real n-gram tables, computed on first use and shared by all measures."""

    def __init__(
        self, context: AuditContext, documents: Sequence[Document], positions: np.ndarray
    ) -> None:
        self.context = context
        self.documents = documents
        self.positions = positions
        self._streams: dict[Unit, TokenStream] = {}
        self._tables: dict[tuple[Unit, int], GramTable] = {}

    @property
    def n_docs(self) -> int:
        return len(self.documents)

    def stream(self, unit: Unit = "words") -> TokenStream:
        if unit not in self._streams:
            self._streams[unit] = self.context.tokenise(unit, self.documents, real=False)
        return self._streams[unit]

    def table(self, unit: Unit, n: int) -> GramTable:
        """This chunk's occurrences of the real ``unit`` ``n``-grams (documents chunk-local)."""
        key = (unit, n)
        if key not in self._tables:
            base = self.table(unit, BASE_N) if n > BASE_N else None
            grams = self.context.real_grams(unit, n)
            self._tables[key] = lookup_grams(grams, self.stream(unit), base)
        return self._tables[key]

    def warm_up(self, tables: Iterable[tuple[Unit, int]], workers: int) -> None:
        """Tokenise the chunk and look ``tables`` up on ``workers`` threads, so that measures
        running in threads afterwards only read these caches."""
        with ThreadPoolExecutor(max(workers, 1)) as pool:
            units = self.context.units
            for unit, stream in zip(units, pool.map(self.stream, units), strict=True):
                self._streams[unit] = stream
            keys = sorted(set(tables))
            for unit in sorted({u for u, n in keys if n > BASE_N}):
                self.table(unit, BASE_N)
            for key, table in zip(keys, pool.map(lambda k: self.table(*k), keys), strict=True):
                self._tables[key] = table
