"""The one verdict: a rule holds when its figure is a finite number that satisfies its
comparison with its threshold; the whole passes when every rule it judged holds (a caller
that needs at least one rule, as the gate and the verifier do, refuses an empty set itself).

The site's audit, the site's export gate and the coordinator's bundle verifier all call
:func:`judge` (defence in depth: each judges again), none re-implements it. Figures are
named by :class:`FigureKey`: a figure a measure declared but did not measure this run is
``None`` (an optional rule on it is skipped, a required one fails); a rule naming a figure
nobody declared is an error (:class:`UnknownFigureError`, exit 78), never a silent skip, so
renaming a figure cannot switch a rule off.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from protocol.audit import RuleResult
from shared.comparisons import COMPARISONS
from shared.errors import ConfigError


@dataclass(frozen=True, order=True)
class FigureKey:
    """A figure's dotted name (``ngram_recall.words.10.identifying_recall``) in one view of
    the measures (``before`` or ``after`` filtering; empty when there is one view). A
    declared key's segment may be an ``fnmatch`` pattern (``*`` for a label or a size,
    ``rouge_*``), matching one segment."""

    name: str
    view: str = ""

    def __str__(self) -> str:
        return f"{self.name} ({self.view})" if self.view else self.name

    def matches(self, other: FigureKey) -> bool:
        """Whether the declared key ``self`` covers the concrete key ``other``."""
        mine, theirs = self.name.split("."), other.name.split(".")
        return (
            self.view == other.view
            and len(mine) == len(theirs)
            and all(fnmatchcase(b, a) for a, b in zip(mine, theirs, strict=True))
        )


@dataclass(frozen=True)
class Rule:
    """What the judge needs of a rule: its name, the figure it reads, how it compares."""

    name: str
    figure: FigureKey
    comparison: str
    threshold: float
    required: bool = True


@dataclass(frozen=True)
class Judgement:
    """One rule judged: what was measured, and whether it held (None: an optional rule whose
    figure was declared but not measured, skipped)."""

    rule: Rule
    measured: float | None
    passed: bool | None


@dataclass(frozen=True)
class Verdict:
    """Every rule's judgement, in the rules' order."""

    judgements: tuple[Judgement, ...]

    @property
    def judged(self) -> tuple[Judgement, ...]:
        return tuple(j for j in self.judgements if j.passed is not None)

    @property
    def passed(self) -> bool:
        """Every judged rule held."""
        return all(j.passed for j in self.judged)

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(j.rule.name for j in self.judged if not j.passed)

    @property
    def skipped(self) -> tuple[str, ...]:
        return tuple(j.rule.name for j in self.judgements if j.passed is None)

    def of(self, name: str) -> Judgement:
        """The judgement of the rule ``name``."""
        return next(j for j in self.judgements if j.rule.name == name)


class UnknownFigureError(ConfigError):
    """A rule names a figure that no measure declares (exit 78)."""


def holds(comparison: str, measured: float | None, threshold: float) -> bool:
    """True when ``measured`` is a finite number that satisfies the comparison."""
    if measured is None or not math.isfinite(measured):
        return False
    return COMPARISONS[comparison](measured, threshold)


def declared(key: FigureKey, figures: Iterable[FigureKey]) -> bool:
    """Whether ``key`` is one of ``figures`` or covered by a declared pattern among them."""
    return any(known == key or known.matches(key) for known in figures)


def require_known(rules: Iterable[Rule], figures: Mapping[FigureKey, object]) -> None:
    """Raise :class:`UnknownFigureError` naming every rule whose figure is not among
    ``figures`` (the declared ones)."""
    unknown = [r for r in rules if r.figure not in figures]
    if unknown:
        known = ", ".join(sorted(str(k) for k in figures)[:40])
        raise UnknownFigureError(
            f"{len(unknown)} rule(s) name a figure no measure declares",
            problems=[
                f"rule {r.name!r} reads {r.figure}, which is not a declared figure; fix: name "
                f"one of the declared figures (known: {known}) or remove the rule"
                for r in unknown
            ],
        )


def judge(rules: Iterable[Rule], figures: Mapping[FigureKey, float | None]) -> Verdict:
    """Judge ``rules`` on ``figures``: every declared figure, ``None`` where it was not
    measured. A pure function. Raises :class:`UnknownFigureError` naming every rule whose
    figure is not among ``figures``."""
    rules = tuple(rules)
    require_known(rules, figures)
    judgements = []
    for rule in rules:
        measured = figures[rule.figure]
        if measured is None and not rule.required:
            judgements.append(Judgement(rule, None, None))
            continue
        judgements.append(
            Judgement(rule, measured, holds(rule.comparison, measured, rule.threshold))
        )
    return Verdict(tuple(judgements))


def report_verdict(rules: Sequence[RuleResult]) -> Verdict:
    """The verdict of an audit report's rules on the figures the report records for them
    (each rule on its own ``measured``): what the audit wrote, the gate and the verifier
    judge again."""
    keys = [FigureKey(r.metric or r.name, view=f"rule {i}") for i, r in enumerate(rules)]
    judged = [
        Rule(r.name, key, r.comparison, r.threshold) for r, key in zip(rules, keys, strict=True)
    ]
    return judge(judged, {key: r.measured for r, key in zip(rules, keys, strict=True)})
