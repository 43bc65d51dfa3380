"""The report's tables and Markdown from a small hand-made FederationReport."""

from __future__ import annotations

from datetime import UTC, datetime

from coordinator.report import tables
from coordinator.report.write import markdown_table, to_markdown
from protocol import rounds
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
            SiteSummary(site_id="b", labels=("PER",), test_split=size),
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


def test_markdown_has_one_section_per_table() -> None:
    text = to_markdown(report())
    assert text.count("\n## ") == len(tables.METRICS) + 6
    assert "| pooled | 0.750 [0.700, 0.800] | excluded (no_reply) |" in text
    assert markdown_table([["a|b"], ["x|y"]]) == "| a|b |\n|---|\n| x/y |"
