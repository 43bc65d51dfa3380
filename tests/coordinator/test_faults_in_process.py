"""Bad bundles and a site that stops: the run completes and the report says who and why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coordinator.server_app import run_federation
from protocol.rounds import FederationReport
from site_agent.client_app import app as client_app
from tests.bundles import forge
from tests.coordinator.conftest import make_world, node_configs
from tests.coordinator.fake_grid import InProcessGrid
from tests.coordinator.test_rounds_in_process import settings_for

SITES = ["site-a", "site-b", "tamper", "unknown", "audit", "stopper", "dropper"]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory, base_model: Path) -> FederationReport:
    root = tmp_path_factory.mktemp("faulty")
    world = make_world(root, base_model, SITES, {"site-a", "site-b"})
    tampered = next((world.sites["tamper"].site_dir / "outbox").glob("*/synthetic.jsonl"))
    with tampered.open("a") as f:
        f.write('{"id": "planted", "text": "x", "spans": []}\n')
    registry = world.registry.read_text()
    world.registry.write_text(registry.replace('"unknown"', '"someone-else"'))
    audit = world.sites["audit"]
    signed = next((audit.site_dir / "outbox").glob("*/manifest.json")).parent
    failed = shutil.copytree(signed, audit.site_dir / "outbox" / "signed-despite-failed-audit")
    forge(
        failed,
        lambda m: m.update(
            created_at="2100-01-01T00:00:00Z",
            audit={**m["audit"], "passed": False, "rules_failed": ["ngram_recall"]},
        ),
        audit.site_dir / "keys" / "signing.key",
    )
    configs = node_configs(world)
    node = {c["site-id"]: n for n, c in configs.items()}
    stops = {node["stopper"]: "evaluate.cross_site", node["dropper"]: "train.fedavg"}
    grid = InProcessGrid(client_app, configs, stop_at=stops)
    return run_federation(grid, settings_for(world, root / "out", fedavg_rounds=1, mapping=None))


def reasons(report: FederationReport, site: str) -> set[tuple[str, str]]:
    return {(e.phase, e.reason) for e in report.exclusions if e.site_id == site}


@pytest.mark.parametrize(
    ("site", "expected"),
    [
        # an honest site verifies its own bundle first and sends a code instead
        ("tamper", ("collect", "site_error")),
        ("unknown", ("collect", "unknown_site_key")),
        ("audit", ("collect", "site_error")),
        ("stopper", ("cross_site", "no_reply")),
        ("dropper", ("aggregate", "no_reply")),
    ],
)
def test_fault_is_named_in_the_report(
    faulty: FederationReport, site: str, expected: tuple[str, str]
) -> None:
    assert expected in reasons(faulty, site)


def test_round_completes_with_the_good_sites(faulty: FederationReport) -> None:
    accepted = {b.site_id for b in faulty.bundles}
    assert accepted == {"site-a", "site-b", "stopper", "dropper"}
    assert {m.name for m in faulty.models} == {
        "export:site-a",
        "export:site-b",
        "site:site-a",
        "site:site-b",
        "site:stopper",
        "site:dropper",
        "pooled",
        "fedavg",
    }
    for model in faulty.models:
        for site in ("site-a", "site-b", "tamper", "unknown", "audit"):
            cell = faulty.cell(model.name, site)
            assert cell is not None and cell.metrics is not None, (model.name, site)
        for gone in ("stopper", "dropper"):
            stopped = faulty.cell(model.name, gone)
            assert stopped is not None and stopped.metrics is None, (model.name, gone)


def test_a_site_that_drops_mid_round_is_marked_and_the_round_completes(
    faulty: FederationReport,
) -> None:
    (played,) = faulty.fedavg_rounds
    assert played.dropped == ("dropper",)
    assert played.contributors == ("site-a", "site-b", "stopper")
    fedavg = next(m for m in faulty.models if m.name == "fedavg")
    assert fedavg.rounds == 1 and "dropper" not in fedavg.trained_on


def test_sites_without_annotator_report_a_code_not_text(faulty: FederationReport) -> None:
    baseline = faulty.baseline("tamper")
    assert baseline is not None and baseline.error == "annotator_missing"
    assert faulty.baseline("site-a") is not None and faulty.baseline("site-a").metrics is not None  # type: ignore[union-attr]


def test_audit_column_is_the_verified_bundles(faulty: FederationReport) -> None:
    """The site names a failed-audit manifest at roll call and its bundle is not accepted: the
    audit column says nothing was verified (it used to repeat the unverified manifest)."""
    audit = next(s for s in faulty.sites if s.site_id == "audit")
    assert audit.audit_passed is None and audit.bundle_sha256 is None
    accepted = next(s for s in faulty.sites if s.site_id == "site-a")
    assert accepted.audit_passed is True


def test_markdown_report_names_each_exclusion_and_reason(faulty: FederationReport) -> None:
    from coordinator.report.write import to_markdown

    markdown = to_markdown(faulty)
    for site, reason in [("tamper", "bundle_unverified"), ("unknown", "unknown_site_key"),
                         ("audit", "bundle_unverified"), ("stopper", "no_reply")]:  # fmt: skip
        assert f"| {site} |" in markdown and reason in markdown
