"""The report's tables and Markdown from a small hand-made FederationReport."""

from __future__ import annotations

from datetime import UTC, datetime

from coordinator.report import tables
from coordinator.report.write import SECTIONS, markdown_table, to_markdown
from protocol import rounds
from protocol.export import QualityOverride
from protocol.rounds import (
    BASELINE,
    CrossSiteCell,
    Estimate,
    Exclusion,
    FederationReport,
    ModelMetrics,
    ReportProvenance,
    SiteSummary,
    TrainedModel,
)

WHEN = datetime(2025, 1, 1, tzinfo=UTC)


def metrics(f1: float, recall: dict[str, float]) -> ModelMetrics:
    return ModelMetrics(
        token_f1=Estimate(value=f1, low=f1 - 0.05, high=f1 + 0.05),
        span_overlap_f1=Estimate(value=f1, low=f1, high=f1),
        document_leakage=Estimate(value=0.1, low=0.0, high=0.2),
        label_recall=recall,
        n_documents=4,
    )


def report() -> FederationReport:
    size = rounds.TestSplitSize(n_documents=4, n_spans=9, n_characters=400)
    return FederationReport(
        sites=(
            SiteSummary(site_id="a", labels=("PER",), test_split=size, audit_passed=True),
            SiteSummary(
                site_id="b",
                labels=("PER",),
                test_split=size,
                quality_override=QualityOverride(
                    findings=("no PII spans",), reason="smoke run, not for use"
                ),
            ),
        ),
        bundles=(),
        models=(
            TrainedModel(
                name="pooled", kind="pooled", trained_on=("a", "b"), n_training_documents=8
            ),
        ),
        matrix=(
            CrossSiteCell(model="pooled", site_id="a", metrics=metrics(0.75, {"PER": 0.5})),
            CrossSiteCell(model="pooled", site_id="b", error="no_reply"),
        ),
        baselines=(
            CrossSiteCell(model=BASELINE, site_id="a", metrics=metrics(0.5, {})),
            CrossSiteCell(model=BASELINE, site_id="b", error="no_reply"),
        ),
        exclusions=(Exclusion(site_id="b", phase="cross_site", reason="no_reply"),),
        labels=("LOC", "PER"),
        provenance=ReportProvenance(
            tool_version="0", versions={}, config_digest="d", started_at=WHEN, finished_at=WHEN
        ),
    )


def test_matrix_rows_show_estimates_and_why_a_cell_is_empty() -> None:
    assert tables.matrix_rows(report(), "token_f1") == [
        ["model", "a", "b"],
        ["pooled", "0.750 [0.700, 0.800]", "excluded (no_reply)"],
        ["site baseline (gold)", "0.500 [0.450, 0.550]", "excluded (no_reply)"],
    ]


def test_delta_recall_and_audit_rows() -> None:
    r = report()
    assert tables.delta_rows(r) == [["model", "a", "b"], ["pooled", "+0.250", "-"]]
    assert tables.recall_rows(r) == [["model", "site", "LOC", "PER"], ["pooled", "a", "-", "0.500"]]
    assert [row[3] for row in tables.audit_rows(r)[1:]] == ["passed", "no export"]
    # a degenerate corpus a site exported anyway is shown with its reason and findings
    assert [row[5] for row in tables.audit_rows(r)[1:]] == [
        "-",
        "smoke run, not for use (no PII spans)",
    ]


def test_markdown_has_one_section_per_table() -> None:
    text = to_markdown(report())
    assert text.count("\n## ") == 1 + len(tables.METRICS) + len(SECTIONS)  # 1: the summary
    assert "| pooled | 0.750 [0.700, 0.800] | excluded (no_reply) |" in text
    assert markdown_table([["a|b"], ["x|y"]]) == "| a\\|b |\n|---|\n| x\\|y |"


def test_generalisation_gap_is_in_site_minus_mean_out_of_site() -> None:
    base = report()
    three = base.model_copy(
        update={
            "sites": (*base.sites, base.sites[0].model_copy(update={"site_id": "c"})),
            "models": (
                TrainedModel(name="site:a", kind="site", trained_on=("a",), n_training_documents=3),
                *base.models,  # pooled: trained at two sites, not a single-site model
            ),
            "matrix": (
                CrossSiteCell(model="site:a", site_id="a", metrics=metrics(0.9, {})),
                CrossSiteCell(model="site:a", site_id="b", metrics=metrics(0.5, {})),
                CrossSiteCell(model="site:a", site_id="c", metrics=metrics(0.3, {})),
            ),
        }
    )
    # out-of-site mean (0.5 + 0.3) / 2 = 0.4; gap 0.9 - 0.4 = 0.5
    assert tables.generalisation_rows(three) == [
        ["model", "trained at", "in-site", "out-of-site (mean)", "gap"],
        ["site:a", "a", "0.900", "0.400", "+0.500"],
    ]


def test_fedavg_rounds_name_who_dropped() -> None:
    played = report().model_copy(
        update={
            "fedavg_rounds": (
                rounds.FedAvgRound(round=1, contributors=("a", "b"), n_examples=8, update_norm=2.0),
                rounds.FedAvgRound(
                    round=2, contributors=("a",), dropped=("b",), n_examples=4, update_norm=0.5
                ),
            )
        }
    )
    assert tables.fedavg_round_rows(played)[1:] == [
        ["1", "weighted-mean", "a, b", "-", "8", "2.0000", "-"],
        ["2", "weighted-mean", "a", "b", "4", "0.5000", "-"],
    ]
    assert tables.fedavg_round_rows(report())[1][1] == "no FedAvg round ran"


def test_the_report_prints_each_sites_privacy_guarantee_and_spend() -> None:
    spend = rounds.PrivacySpend(
        mechanism="gaussian",
        epsilon_budget=8.0,
        delta=1e-6,
        epsilon_spent=3.25,
        epsilon_left=4.75,
        models_scored=9,
        models_left=39,
        epsilon_per_model=1.04,
        noise_sd=0.0356,
    )
    base = report()
    dp_site = base.sites[0].model_copy(update={"privacy": spend})
    rows = tables.evaluation_bound_rows(base.model_copy(update={"sites": (dp_site, base.sites[1])}))
    assert rows[0] == ["site", "privacy guarantee", "evaluation bound"]
    assert rows[1][1] == (
        "(8, 1e-06)-DP per note over the test split's life; spent epsilon 3.25, left 4.75 "
        "(9 models scored, 39 left); noise sd 0.0356 on each figure"
    )
    assert rows[2][1] == "no differential privacy: figures are exact (rounded only)"
