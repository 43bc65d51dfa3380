"""The report answers first: best model per site and overall, the gap to gold, exclusions,
audits; then the matrices. Also the fixture ``three_site_report`` the screenshot is taken of."""

from __future__ import annotations

import pytest

from coordinator.report import answers
from coordinator.report.write import to_html, to_markdown
from protocol import rounds
from protocol.rounds import (
    BASELINE,
    CrossSiteCell,
    Exclusion,
    FederationReport,
    SiteSummary,
    TrainedModel,
)
from tests.coordinator.report.test_tables import WHEN, metrics

SITES = ("site-a", "site-b", "site-c")
# token F1 of each model at each site; None: the cell was not scored
F1 = {
    "site:site-a": (0.70, 0.40, 0.35),
    "site:site-b": (0.45, 0.66, 0.41),
    "pooled": (0.72, 0.61, 0.58),
    "fedavg": (0.62, 0.55, None),
}
GOLD = (0.86, 0.80, 0.74)


def three_site_report(
    exclusions: tuple[Exclusion, ...] = (), audit_c: bool | None = True
) -> FederationReport:
    size = rounds.TestSplitSize(n_documents=29, n_spans=120, n_characters=9000)
    sites = tuple(
        SiteSummary(
            site_id=s,
            labels=("PER",),
            test_split=size,
            synthetic_documents=300,
            audit_passed=audit_c if s == "site-c" else True,
        )
        for s in SITES
    )
    cells = tuple(
        CrossSiteCell(model=m, site_id=s, metrics=metrics(f1, {"PER": f1}))
        if f1 is not None
        else CrossSiteCell(model=m, site_id=s, error="site_excluded")
        for m, row in F1.items()
        for s, f1 in zip(SITES, row, strict=True)
    )
    kinds = {"pooled": "pooled", "fedavg": "fedavg"}
    models = tuple(
        TrainedModel(
            name=m,
            kind=kinds.get(m, "site"),
            trained_on=SITES if m in kinds else (m[5:],),
            n_training_documents=300,
        )
        for m in F1
    )
    return FederationReport(
        sites=sites, bundles=(), models=models, matrix=cells,
        baselines=tuple(
            CrossSiteCell(model=BASELINE, site_id=s, metrics=metrics(g, {}))
            for s, g in zip(SITES, GOLD, strict=True)
        ),
        exclusions=exclusions, labels=("PER",),
        provenance=rounds.ReportProvenance(
            tool_version="0", versions={}, config_digest="d", started_at=WHEN, finished_at=WHEN
        ),
    )  # fmt: skip


def test_best_model_per_site_and_overall() -> None:
    report = three_site_report()
    best = {b.site_id: (b.model, b.f1, b.gold) for b in answers.best_per_site(report)}
    assert best == {
        "site-a": ("pooled", 0.72, 0.86),
        "site-b": ("site:site-b", 0.66, 0.80),
        "site-c": ("pooled", 0.58, 0.74),
    }
    # fedavg was scored at two sites only: a model scored everywhere wins
    assert answers.best_overall(report) == ("pooled", pytest.approx((0.72 + 0.61 + 0.58) / 3), 3)


def test_summary_states_the_gap_in_words_and_numbers() -> None:
    points = answers.summary_points(three_site_report())
    assert points[0] == "Best model overall: pooled, mean token F1 0.637 over 3 of 3 site(s)."
    assert (
        "site-a: best is pooled, token F1 0.720 [0.670, 0.770], 0.140 below the site's "
        "gold-trained baseline (0.860)." in points
    )
    assert any(
        p.startswith("Synthetic vs gold: the best synthetic-trained model is on average 0.147 "
                     "below the gold-trained baselines (mean gap -0.147 token F1 over 3 site(s))")
        for p in points
    )  # fmt: skip


@pytest.mark.parametrize(
    ("exclusions", "audit_c", "expected"),
    [
        ((), True, ["Exclusions: none;", "Privacy audits: all 3 passed."]),
        (
            (Exclusion(site_id="site-c", phase="collect", reason="audit_failed"),),
            False,
            ["Exclusions (1): site-c at collect (audit_failed).", "FAILED at site-c"],
        ),
        ((), None, ["NOT all passed: 2 of 3 passed; no export from site-c."]),
    ],
)
def test_summary_names_exclusions_and_audit_verdicts(
    exclusions: tuple[Exclusion, ...], audit_c: bool | None, expected: list[str]
) -> None:
    text = " ".join(answers.summary_points(three_site_report(exclusions, audit_c)))
    assert all(part in text for part in expected)


@pytest.mark.parametrize(
    ("render", "matrix_heading"), [(to_markdown, "## Token F1"), (to_html, "<h2>Token F1</h2>")]
)
def test_summary_comes_before_the_matrices(render: object, matrix_heading: str) -> None:
    page = render(three_site_report())  # type: ignore[operator]
    first_matrix = page.index(matrix_heading)
    assert page.index("Summary") < page.index("Best model overall") < first_matrix
    assert page.index("Privacy audits: all 3 passed.") < first_matrix
