"""The measuring pass: every enabled measure sees the synthetic notes a chunk at a time.

The real side is built first (:func:`~site_agent.audit.plan.real_plan`), then each measure
is created (building what it needs of the real side), then the chunks are read in corpus
order and given to every measure, and finally each measure finishes (reading notes again if
it must). Timings are summed per stage over the chunks.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from shared.errors import ConfigError, CorpusFormatError
from site_agent.audit.context import AuditContext, SyntheticChunk
from site_agent.audit.ngrams_found import NgramsFound
from site_agent.audit.plan import counted_tables, flagged_tables, needed_tables, real_plan
from site_agent.audit.registry import MeasureResult, MeasureStream, measures
from site_agent.audit.settings import DEFAULT_CHUNK_DOCUMENTS
from site_agent.audit.source import SourceChunk, SyntheticSource
from site_agent.privacy.digest import CorpusDigest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Measured:
    """Every measure's result, the real n-grams the notes hold, and what was read."""

    results: dict[str, MeasureResult]
    found: NgramsFound
    n_documents: int
    sha256: str
    labels: tuple[str, ...]


class Timer:
    """Seconds per stage, summed over chunks."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def add(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - since
        return now

    def rounded(self) -> dict[str, float]:
        return {k: round(v, 3) for k, v in self.seconds.items()}


def _start_measures(
    context: AuditContext, found: NgramsFound, timer: Timer
) -> dict[str, MeasureStream]:
    registry = measures()
    unknown = [m for m in context.policy.measures if m not in registry]
    if unknown:
        raise ConfigError(f"unknown measure(s) {unknown}; known: {sorted(registry)}")
    streams: dict[str, MeasureStream] = {}
    for name in context.policy.measures:
        begun = time.perf_counter()
        stream = registry[name](context, found)
        timer.add(name, begun)
        if stream is not None:
            streams[name] = stream
    return streams


def synthetic_chunks(
    context: AuditContext, pieces: Iterable[SourceChunk], timer: Timer
) -> Iterator[SyntheticChunk]:
    """The source's chunks as :class:`SyntheticChunk`, the reading timed as its own stage."""
    started = time.perf_counter()
    for piece in pieces:
        timer.add("read_synthetic", started)
        yield SyntheticChunk(context, piece.documents, piece.positions)
        started = time.perf_counter()
    timer.add("read_synthetic", started)


def _add_chunk(
    chunk: SyntheticChunk,
    streams: dict[str, MeasureStream],
    found: NgramsFound,
    timer: Timer,
    workers: int,
) -> None:
    begun = time.perf_counter()
    chunk.warm_up(needed_tables(chunk.context), workers)
    found.add(chunk)
    timer.add("tokens_and_ngrams", begun)

    def add(name: str) -> None:
        begun = time.perf_counter()
        streams[name].add(chunk)
        timer.add(name, begun)

    if workers <= 1:
        for name in streams:
            add(name)
        return
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(add, streams))


def _check_ids(context: AuditContext) -> None:
    repeated = context.synthetic_ids.duplicates()
    if repeated:
        problems = [
            f"duplicate document id {doc_id!r} at documents "
            f"{', '.join(str(p + 1) for p in where)}; fix: give every document a unique id"
            for doc_id, where in repeated.items()
        ]
        raise CorpusFormatError(
            f"{len(problems)} problem(s) in the synthetic corpus", problems=problems
        )


def measure_corpus(
    context: AuditContext,
    source: SyntheticSource,
    chunk_documents: int = DEFAULT_CHUNK_DOCUMENTS,
    timer: Timer | None = None,
    workers: int = 1,
) -> Measured:
    """Run every enabled measure over the synthetic notes of ``source``, a chunk at a time."""
    timer = timer or Timer()
    begun = time.perf_counter()
    log.info("audit: building the real side")
    context.prepare(real_plan(context), workers)
    found = NgramsFound(context, counted_tables(context), flagged_tables(context))
    timer.add("real_side", begun)
    streams = _start_measures(context, found, timer)
    context.release_caches()
    digest, labels, count = CorpusDigest(), set[str](), 0
    for chunk in synthetic_chunks(context, source.chunks(chunk_documents), timer):
        log.info("audit: measuring synthetic notes %d-%d", count, count + chunk.n_docs)
        context.synthetic_ids.extend(d.id for d in chunk.documents)
        digest.update(chunk.documents)
        labels |= {s.label for d in chunk.documents for s in d.spans}
        count += chunk.n_docs
        _add_chunk(chunk, streams, found, timer, workers)
    _check_ids(context)

    def reread(positions: np.ndarray) -> Iterator[SyntheticChunk]:
        return synthetic_chunks(context, source.chunks(chunk_documents, positions), timer)

    results: dict[str, MeasureResult] = {}
    for name, stream in streams.items():
        begun = time.perf_counter()
        results[name] = stream.finish(reread)
        timer.add(name, begun)
    declared = source.labels
    return Measured(
        results,
        found,
        count,
        digest.hexdigest(),
        declared if declared is not None else tuple(sorted(labels)),
    )
