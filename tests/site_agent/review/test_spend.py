"""The review page's privacy spend: read from the evaluation accountant's ledger as it is."""

from __future__ import annotations

from pathlib import Path

from site_agent.federation.accountant import Ledger
from site_agent.federation.policy import EvaluationPolicy
from site_agent.review.spend import evaluation_spend


def test_the_spend_is_the_ledgers(tmp_path: Path) -> None:
    policy = EvaluationPolicy()
    (empty,) = evaluation_spend(tmp_path)["evaluation accountant"]
    assert empty.value == "empty" and "nothing spent" in empty.meaning
    ledger = Ledger(tmp_path / policy.ledger)
    ledger.charge("a" * 64, policy, 12)
    charged = ledger.charge("a" * 64, policy, 12)
    lines = {line.figure: line for line in evaluation_spend(tmp_path)["evaluation accountant"]}
    spent = lines[f"test split {'a' * 12}: epsilon spent"]
    assert spent.value == f"{charged.epsilon_spent:.3f} of {policy.epsilon:g}"
    models = lines[f"test split {'a' * 12}: models scored"]
    assert models.value == f"2 ({charged.models_left} left)"
    assert "the default [federation.evaluation]" in spent.meaning


def test_an_unreadable_ledger_is_said_so(tmp_path: Path) -> None:
    policy = EvaluationPolicy()
    (tmp_path / policy.ledger).parent.mkdir(parents=True)
    (tmp_path / policy.ledger).write_text("{not json")
    (line,) = evaluation_spend(tmp_path)["evaluation accountant"]
    assert line.value == "unreadable" and "refused" in line.meaning
