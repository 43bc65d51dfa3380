"""Registries of measures and filters: a new measure is a module that registers itself.

A measure is created from the :class:`~site_agent.audit.context.AuditContext` (building what
it needs of the real side then), sees every chunk of synthetic notes once (``add``), and
turns what it kept of them into a result (``finish``) that reports its figures before and
after filtering. A result that counts over the whole corpus rather than per note
(:class:`CountsOverNotes`) has the dropped notes subtracted before its figures after
filtering. A filter turns measure results into a per-document "drop" mask; its name is the
reason counted in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from shared.registry import Registry
from site_agent.audit.context import AuditContext, SyntheticChunk
from site_agent.audit.ngrams_found import NgramsFound


class MeasureResult(Protocol):
    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        """JSON-ready figures over the synthetic documents where ``kept`` is true (all of
        them, or the kept ones after filtering)."""
        ...


@runtime_checkable
class CountsOverNotes(Protocol):
    """A result holding counts over all notes, which the dropped notes are subtracted from
    (read again, a chunk at a time) before its figures after filtering."""

    def subtract(self, chunk: SyntheticChunk, dropped: np.ndarray) -> None: ...


Reread = Callable[[np.ndarray], Iterator[SyntheticChunk]]
"""The synthetic notes at the given sorted positions, read again, in chunks."""


class MeasureStream(Protocol):
    def add(self, chunk: SyntheticChunk) -> None:
        """Measure the next chunk of synthetic notes (chunks come in corpus order)."""
        ...

    def finish(self, reread: Reread) -> MeasureResult:
        """The result over every note added (``reread`` reads notes again, if needed)."""
        ...


Measure = Callable[[AuditContext, NgramsFound], MeasureStream | None]


@dataclass(frozen=True)
class FilterInput:
    """What a filter may read: the run's context, every measure's result, the real n-grams
    the notes hold, and which synthetic documents are still in the export (earlier filters
    may have dropped some)."""

    context: AuditContext
    results: dict[str, MeasureResult]
    ngrams: NgramsFound
    alive: np.ndarray


AuditFilter = Callable[[FilterInput], np.ndarray]


def _builtin_measures() -> None:
    """The built-in measures, in the order they run; each registers itself on import."""
    from site_agent.audit import ngram_recall  # noqa: I001, F401
    from site_agent.audit import nearest_real  # noqa: F401
    from site_agent.audit import duplicates  # noqa: F401
    from site_agent.audit import pii_echo  # noqa: F401
    from site_agent.audit import quasi_identifiers  # noqa: F401
    from site_agent.audit import canary_exposure  # noqa: F401
    from site_agent.audit import membership  # noqa: F401


def _builtin_filters() -> None:
    _builtin_measures()
    from site_agent.audit import filters  # noqa: F401


MEASURES: Registry[Measure] = Registry("audit measure", builtins=_builtin_measures)
FILTERS: Registry[AuditFilter] = Registry("audit filter", builtins=_builtin_filters)

M = TypeVar("M", bound=Callable[[AuditContext, NgramsFound], Any])
F = TypeVar("F", bound=AuditFilter)


FIGURES: dict[str, tuple[str, ...]] = {"corpus": ("input_documents", "kept_documents")}
"""Each measure's declared figures, dotted under its name (a segment may be a ``fnmatch``
pattern: ``rouge_*``, ``*`` for a label or a size): what a policy rule may name. The audit
adds ``corpus``'s own two."""


def register_measure(name: str, figures: tuple[str, ...]) -> Callable[[M], M]:
    """Register a measure under ``name`` with the figures it reports (``figures``: what its
    result's ``figures`` returns, as dotted names; a rule naming another is refused)."""

    def add(measure: M) -> M:
        MEASURES.add(name, measure, replace=True)
        FIGURES[name] = figures
        return measure

    return add


def declared_figures() -> tuple[str, ...]:
    """Every registered measure's figures as dotted names under the measure's name."""
    MEASURES.names()  # the built-in measures register (and declare) on first use
    return tuple(f"{measure}.{name}" for measure, names in FIGURES.items() for name in names)


def register_filter(name: str) -> Callable[[F], F]:
    def add(audit_filter: F) -> F:
        FILTERS.add(name, audit_filter, replace=True)
        return audit_filter

    return add


def measures() -> dict[str, Measure]:
    return MEASURES.entries()


def filters() -> dict[str, AuditFilter]:
    return FILTERS.entries()
