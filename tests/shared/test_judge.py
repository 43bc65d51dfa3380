"""One verdict: ``shared.judge.judge`` decides for the audit, the export gate and the bundle
verifier, on the same figures; a rule naming a figure no measure declares fails loudly."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import pytest

from protocol.audit import AuditReport, RuleResult
from shared import judge as judge_module
from shared.errors import ExportRefusedError
from shared.judge import FigureKey, Rule, UnknownFigureError, Verdict, judge, report_verdict
from site_agent.audit import rules as audit_rules
from site_agent.audit.policy import AuditPolicy, PolicyRule
from site_agent.audit.rules import evaluate
from site_agent.export.gate import check_verdict
from tests.bundles import good_bundle, site_keys

KEY = FigureKey("pii_echo.identifying_documents", "after")


@pytest.mark.parametrize(
    ("comparison", "measured", "threshold", "expected"),
    [
        ("==", 0.0, 0.0, True),
        ("==", 1e-13, 0.0, True),  # within the equality tolerance
        ("==", 1.0, 0.0, False),
        ("<=", 0.05, 0.05, True),
        ("<", 0.05, 0.05, False),
        (">=", 1.0, 1.0, True),
        (">", 1.0, 1.0, False),
        ("<=", math.nan, 1.0, False),  # not a number never holds
        (">=", math.inf, 1.0, False),  # nor does an infinite one
        ("<=", None, 1.0, False),  # a required figure not measured fails
    ],
)
def test_a_rule_holds_on_a_finite_figure_that_satisfies_it(
    comparison: str, measured: float | None, threshold: float, expected: bool
) -> None:
    verdict = judge([Rule("r", KEY, comparison, threshold)], {KEY: measured})
    assert verdict.of("r").passed is expected and verdict.passed is expected


def test_an_optional_rule_on_a_declared_unmeasured_figure_is_skipped() -> None:
    membership = FigureKey("membership.auc", "after")
    rules = [Rule("auc", membership, "<=", 0.55, required=False), Rule("echo", KEY, "==", 0.0)]
    verdict = judge(rules, {membership: None, KEY: 0.0})
    assert verdict.skipped == ("auc",) and verdict.passed and verdict.failed == ()


def test_a_rule_naming_an_undeclared_figure_fails_loudly() -> None:
    typo = FigureKey("pii_echo.identifyng_documents", "after")
    with pytest.raises(UnknownFigureError) as raised:
        judge([Rule("echo", typo, "==", 0.0, required=False)], {KEY: 0.0})
    assert raised.value.exit_code == 78
    assert "rule 'echo' reads pii_echo.identifyng_documents (after)" in raised.value.problems[0]


def test_the_audit_refuses_an_optional_rule_whose_figure_was_renamed() -> None:
    """Before, an optional rule whose figure was absent was skipped silently: a renamed figure
    switched it off. A figure declared by a measure that did not run is still skipped."""
    figures = {"before": {"corpus.kept_documents": 3.0}, "after": {"corpus.kept_documents": 3.0}}
    renamed = PolicyRule(
        name="gone", metric="membership.auc_renamed", threshold=0.5, required=False
    )
    with pytest.raises(UnknownFigureError, match=r"membership\.auc_renamed"):
        evaluate([renamed], figures)
    unmeasured = renamed.model_copy(update={"metric": "membership.auc"})
    results, skipped = evaluate([unmeasured], figures)
    assert results == [] and skipped == ["gone"]


def _report(rules: list[RuleResult], passed: bool) -> AuditReport:
    return AuditReport.model_construct(rules=tuple(rules), passed=passed, skipped_rules=())


def test_audit_gate_and_verifier_judge_the_same_figures_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real audit, the real export gate and the bundle's self-verification (the verifier the
    coordinator runs): each calls the one judge, on the figures the audit measured."""
    calls: list[tuple[str, Verdict, dict[str, float | None]]] = []
    original = judge_module.judge

    def spy(rules: list[Rule], figures: dict[FigureKey, float | None]) -> Verdict:
        verdict = original(rules, figures)
        callers = [inspect.getmodule(f.frame) for f in inspect.stack()[1:4]]
        caller = next(m.__name__ for m in callers if m is not None and m is not judge_module)
        measured = {j.rule.name: j.measured for j in verdict.judgements}
        calls.append((caller, verdict, measured))
        return verdict

    monkeypatch.setattr(judge_module, "judge", spy)  # through report_verdict: gate, verifier
    monkeypatch.setattr(audit_rules, "judge", spy)  # the audit's policy rules
    good_bundle(tmp_path, "site-a", site_keys(tmp_path))
    callers = {caller for caller, _, _ in calls}
    assert {"site_agent.audit.rules", "site_agent.export.gate", "shared.bundle_verify"} <= callers
    assert all(verdict.passed for _, verdict, _ in calls)
    audited = next(m for c, _, m in calls if c == "site_agent.audit.rules")
    verified = next(m for c, _, m in calls if c == "shared.bundle_verify")
    judged = {name: value for name, value in audited.items() if value is not None}
    assert verified == judged  # the verifier judged the figures the audit measured


def test_a_figure_over_its_threshold_fails_in_the_audit_and_the_gate_alike() -> None:
    policy = AuditPolicy()
    rule = next(r for r in policy.rules if r.name == "identifying_pii_echo")
    figures = {"before": {rule.metric: 2.0}, "after": {rule.metric: 2.0}}
    (result,), _ = evaluate([rule], figures, declared_names=[rule.metric])
    assert result.passed is False and report_verdict([result]).passed is False
    forged = result.model_copy(update={"passed": True})  # a verdict edited by hand
    with pytest.raises(ExportRefusedError, match="the verdict does not follow from its rules"):
        check_verdict(Path("audit.json"), _report([forged], passed=True))
    with pytest.raises(ExportRefusedError, match="failed rule"):
        check_verdict(Path("audit.json"), _report([result], passed=False))
