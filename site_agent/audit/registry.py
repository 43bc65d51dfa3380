"""Registries of measures and filters: a new measure is a module that registers itself.

A measure turns an :class:`~site_agent.audit.context.AuditContext` into a result that can
report its figures for any subset of kept synthetic documents (before and after filtering).
A filter turns measure results into a per-document "drop" mask; its name is the reason
counted in the report.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from site_agent.audit.context import AuditContext


class MeasureResult(Protocol):
    def figures(self, kept: np.ndarray) -> dict[str, Any]:
        """JSON-ready figures over the synthetic documents where ``kept`` is true."""
        ...


Measure = Callable[[AuditContext], MeasureResult | None]


@dataclass(frozen=True)
class FilterInput:
    """What a filter may read: the run's context, every measure's result, and which
    synthetic documents are still in the export (earlier filters may have dropped some)."""

    context: AuditContext
    results: dict[str, MeasureResult]
    alive: np.ndarray


AuditFilter = Callable[[FilterInput], np.ndarray]

_MEASURES: dict[str, Measure] = {}
_FILTERS: dict[str, AuditFilter] = {}
_MEASURE_MODULES = (
    "ngram_recall",
    "nearest_real",
    "duplicates",
    "pii_echo",
    "canary_exposure",
    "membership",
)
_FILTER_MODULES = ("filters",)


M = TypeVar("M", bound=Callable[[AuditContext], Any])
F = TypeVar("F", bound=AuditFilter)


def register_measure(name: str) -> Callable[[M], M]:
    def add(measure: M) -> M:
        _MEASURES[name] = measure
        return measure

    return add


def register_filter(name: str) -> Callable[[F], F]:
    def add(audit_filter: F) -> F:
        _FILTERS[name] = audit_filter
        return audit_filter

    return add


def _load(modules: tuple[str, ...]) -> None:
    for module in modules:
        importlib.import_module(f"site_agent.audit.{module}")


def measures() -> dict[str, Measure]:
    _load(_MEASURE_MODULES)
    return dict(_MEASURES)


def filters() -> dict[str, AuditFilter]:
    _load(_MEASURE_MODULES + _FILTER_MODULES)
    return dict(_FILTERS)
