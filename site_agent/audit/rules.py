"""Policy rules: a named figure compared with a threshold, before or after filtering, judged
by the one ``shared.judge.judge``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protocol.audit import RuleResult
from shared.judge import FigureKey, Rule, declared, judge, require_known
from site_agent.audit.policy import PolicyRule
from site_agent.audit.registry import declared_figures


def flatten(figures: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Numeric leaves of nested figures under dotted names (``a.b.c``); lists are skipped."""
    out: dict[str, float] = {}
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        elif isinstance(value, bool | int | float) and value is not None:
            out[name] = float(value)
    return out


def rule_of(rule: PolicyRule) -> Rule:
    """A policy rule as the judge reads it: its figure in its view (before/after filtering)."""
    figure = FigureKey(rule.metric, rule.stage)
    return Rule(rule.name, figure, rule.comparison, rule.threshold, rule.required)


def figure_table(
    views: Mapping[str, Mapping[str, float]],
    rules: Sequence[PolicyRule],
    figures: Sequence[str] | None = None,
) -> dict[FigureKey, float | None]:
    """The figures measured in each view, and ``None`` for each figure a rule names that a
    measure declares (``figures``: the registered measures' by default) but this audit did
    not measure. A figure nobody declares stays out: the judge refuses a rule naming it."""
    table: dict[FigureKey, float | None] = {
        FigureKey(name, view): value for view, flat in views.items() for name, value in flat.items()
    }
    known = figures if figures is not None else declared_figures()
    for rule in rules:
        key = rule_of(rule).figure
        if key not in table and declared(key, (FigureKey(name, key.view) for name in known)):
            table[key] = None
    return table


def evaluate(
    rules: Sequence[PolicyRule],
    figures: Mapping[str, Mapping[str, float]],
    declared_names: Sequence[str] | None = None,
) -> tuple[list[RuleResult], list[str]]:
    """(results of the rules that apply, names of optional rules whose declared figure was not
    measured), judged on ``figures`` (view -> dotted name -> value). A rule naming a figure
    no measure declares raises ``UnknownFigureError`` (exit 78)."""
    verdict = judge([rule_of(r) for r in rules], figure_table(figures, rules, declared_names))
    results: list[RuleResult] = []
    for rule in rules:
        judged = verdict.of(rule.name)
        if judged.passed is None:
            continue
        measured = judged.measured
        if measured is None:
            known = ", ".join(sorted(figures[rule.stage])[:40])
            explanation = f"figure {rule.metric!r} was not measured (known: {known})"
        else:
            verdict_word = "holds" if judged.passed else "violated"
            explanation = (
                f"{rule.metric} {rule.stage} filtering = {measured:.6g}; "
                f"required {rule.comparison} {rule.threshold:g}: {verdict_word}"
            )
        results.append(
            RuleResult(
                name=rule.name,
                metric=rule.metric,
                measured=measured,
                threshold=rule.threshold,
                comparison=rule.comparison,
                passed=judged.passed,
                explanation=explanation,
            )
        )
    return results, list(verdict.skipped)


def check_rule_figures(rules: Sequence[PolicyRule]) -> None:
    """Refuse (``UnknownFigureError``, exit 78) a policy whose rules name a figure no measure
    declares, before anything is measured."""
    require_known([rule_of(r) for r in rules], figure_table({}, rules))
