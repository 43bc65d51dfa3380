"""The utility cost of the audit gate: training on the unfiltered or the audited synthetic
corpus, the privacy figures of the corpus each run trained on, and the privacy-utility curve."""

from __future__ import annotations

import pytest

from shared.metrics.repeats import summarise_repeats
from studies.report import (
    _point_label,
    gate_cost,
    is_privacy_study,
    membership_table,
    per_label_table,
    plot_privacy_utility,
)
from studies.results import ConditionSummary, privacy_figures
from studies.spec import Condition, Study
from studies.stages import RunKnobs, experiment_stages
from tests.studies.test_results import report


def _train_inputs(source: str) -> tuple[str, ...]:
    knobs = RunKnobs(
        condition=Condition(synthetic_source=source),  # type: ignore[arg-type]
        seed=0,
        subset_seed=0,
        bootstrap_resamples=0,
        max_test_documents=None,
    )
    (train,) = [s for s in experiment_stages(knobs) if s.name == "train-evaluate"]
    return train.inputs


def test_the_unfiltered_source_trains_on_the_annotated_corpus_before_the_audit() -> None:
    assert "audit.corpus" in _train_inputs("audited")
    unfiltered = _train_inputs("unfiltered")
    assert "annotate.corpus" in unfiltered and "audit.corpus" not in unfiltered
    assert Condition(synthetic_source="unfiltered").label() == "synthetic_source=unfiltered"


def test_privacy_figures_describe_the_corpus_the_run_trained_on() -> None:
    audit = report(
        {
            "membership": {
                "before": {"auc": 0.9, "secrets_reproduced": 4},
                "after": {"auc": 0.6, "secrets_reproduced": 0},
            }
        },
        passed=False,
    )
    after, before = privacy_figures(audit), privacy_figures(audit, "before")
    assert after["membership_auc"] == 0.6 and after["membership_secrets_reproduced"] == 0
    assert before["membership_auc"] == 0.9 and before["membership_secrets_reproduced"] == 4
    assert (after["kept_documents"], before["kept_documents"]) == (8.0, 10.0)
    # what the generator wrote is reported whichever corpus the run trained on
    assert after["membership_secrets_written"] == before["membership_secrets_written"] == 4


def test_membership_table_shows_the_attack_of_each_condition() -> None:
    figures = {
        "members": 500, "non_members": 500, "secrets_reproduced": 0, "members_reproduced": 0,
        "auc": 0.52, "auc_ci_low": 0.48, "auc_ci_high": 0.55, "tpr_at_1pct_fpr": 0.012,
        "tpr_at_0_1pct_fpr": 0.002,
        "exposure": {"members_mean": 3.1, "non_members_mean": 2.9, "max_possible": 13.3},
    }  # fmt: skip
    written = {**figures, "secrets_reproduced": 3, "members_reproduced": 2}
    audit = report({"membership": {"before": written, "after": figures}}, passed=False)
    privacy = privacy_figures(audit)
    study = Study(name="memo", vary={"adapt.max_steps": [24, 96]})
    condition = Condition.model_validate({"adapt.max_steps": 96})
    row = ConditionSummary(
        study="memo",
        condition=condition.model_dump(mode="json"),
        condition_label=condition.label(),
        n_runs=2,
        n_failed=0,
        metrics={name: summarise_repeats([value] * 2) for name, value in privacy.items()},
    )
    header, _, line = membership_table(study, [row])
    assert header.startswith("| adapt.max_steps | canaries planted / kept out")
    assert line == (
        "| 96 | 500 / 500 | 3 (2) | 0 | 0.520 [0.480, 0.550] | 0.012 / 0.002 | 3.10 / 2.90 (13.3) |"
    )
    no_canaries = row.model_copy(update={"metrics": {"token_f1": summarise_repeats([0.5])}})
    assert membership_table(study, [no_canaries]) == []


def _row(source: str, threshold: float, f1: list[float], auc: float) -> ConditionSummary:
    condition = Condition.model_validate(
        {"synthetic_source": source, "audit.policy.filters.rouge_threshold": threshold}
    )
    return ConditionSummary(
        study="gate",
        condition=condition.model_dump(mode="json"),
        condition_label=condition.label(),
        n_runs=len(f1),
        n_failed=0,
        metrics={
            "token_f1": summarise_repeats(f1),
            "membership_auc": summarise_repeats([auc] * len(f1)),
        },
    )


def test_gate_cost_pairs_conditions_that_differ_only_in_the_source() -> None:
    rows = [
        _row("unfiltered", 0.3, [0.70, 0.72], 0.8),
        _row("audited", 0.3, [0.66, 0.68], 0.5),
        _row("audited", 0.5, [0.69], 0.6),  # no unfiltered twin: no line
    ]
    (line,) = gate_cost(rows)
    assert "0.710 on the unfiltered vs 0.670 on the audited" in line
    assert "+4.00 points" in line and "rouge_threshold=0.3" in line


def test_privacy_utility_curve_is_drawn_for_studies_that_move_the_gate() -> None:
    study = Study(name="curve", vary={"audit.policy.filters.rouge_threshold": [0.1, 0.3, 1.0]})
    assert is_privacy_study(study)
    assert not is_privacy_study(Study(name="data", vary={"data_fraction": [0.5, 1.0]}))
    rows = [_row("audited", t, [f], a) for t, f, a in ((0.1, 0.6, 0.5), (1.0, 0.7, 0.8))]
    png = plot_privacy_utility(study, rows)
    assert png is not None and png[:4] == b"\x89PNG"
    without = [r.model_copy(update={"metrics": {"token_f1": r.metrics["token_f1"]}}) for r in rows]
    assert plot_privacy_utility(study, without) is None


@pytest.mark.parametrize("source", ["filtered", ""])
def test_an_unknown_source_is_refused(source: str) -> None:
    with pytest.raises(ValueError, match="synthetic_source"):
        Condition.model_validate({"synthetic_source": source})


def test_per_label_columns_name_every_knob_a_condition_sets() -> None:
    study = Study(
        name="memo",
        conditions=[
            {"adapt.max_steps": 24, "adapt.learning_rate": 1e-4},
            {"adapt.max_steps": 24, "adapt.learning_rate": 1e-3},
            {"adapt.max_steps": 96},
        ],
    )
    rows = []
    for condition in study.expand({}):
        rows.append(
            ConditionSummary(
                study="memo",
                condition=condition.model_dump(mode="json"),
                condition_label=condition.label(),
                n_runs=1,
                n_failed=0,
                per_label={"FECHAS": summarise_repeats([0.5])},
            )
        )
    header, _, line = per_label_table(study, rows)
    assert header == (
        "| label | adapt.max_steps=24, adapt.learning_rate=0.0001 "
        "| adapt.max_steps=24, adapt.learning_rate=0.001 | adapt.max_steps=96 |"
    )
    assert line == "| FECHAS | 0.50 | 0.50 | 0.50 |"
    # the privacy-utility curve names each point by the knobs it sets, shortened
    assert [_point_label(study.varied(), row) for row in rows] == [
        "max_steps=24\nlearning_rate=0.0001",
        "max_steps=24\nlearning_rate=0.001",
        "max_steps=96",
    ]
    assert _point_label(["adapt.max_steps"], rows[2]) == "96"
