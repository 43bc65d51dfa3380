"""Policy rules: a named figure compared with a threshold, before or after filtering."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protocol.audit import RuleResult
from shared.comparisons import COMPARISONS
from site_agent.audit.policy import PolicyRule


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


def evaluate(
    rules: Sequence[PolicyRule], figures: Mapping[str, Mapping[str, float]]
) -> tuple[list[RuleResult], list[str]]:
    """(results of the rules that apply, names of optional rules whose figure is absent)."""
    results: list[RuleResult] = []
    skipped: list[str] = []
    for rule in rules:
        measured = figures[rule.stage].get(rule.metric)
        if measured is None and not rule.required:
            skipped.append(rule.name)
            continue
        if measured is None:
            known = ", ".join(sorted(figures[rule.stage])[:40])
            explanation = f"figure {rule.metric!r} was not measured (known: {known})"
            passed = False
        else:
            passed = COMPARISONS[rule.comparison](measured, rule.threshold)
            verdict = "holds" if passed else "violated"
            explanation = (
                f"{rule.metric} {rule.stage} filtering = {measured:.6g}; "
                f"required {rule.comparison} {rule.threshold:g}: {verdict}"
            )
        results.append(
            RuleResult(
                name=rule.name,
                metric=rule.metric,
                measured=measured,
                threshold=rule.threshold,
                comparison=rule.comparison,
                passed=passed,
                explanation=explanation,
            )
        )
    return results, skipped
