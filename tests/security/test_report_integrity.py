"""What a hostile site can put into the coordinator's report and logs: one table per channel.

Site ids are checked at roll call with the pattern used everywhere (``SITE_ID_PATTERN``);
labels and reasons that reach a log line are escaped so that one record stays one line;
report.md cells are inert Markdown; the audit column comes from the verified bundle. Before
the fix every row here held (ids accepted, raw lines logged and written, the audit column
read from the unverified roll-call manifest).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flwr.app import ConfigRecord, RecordDict

from coordinator.report.build import site_summaries
from coordinator.report.write import to_markdown
from coordinator.roll_call import roll_call
from protocol.export import ExportManifest
from protocol.rounds import Exclusion, FederationReport, ReportProvenance, SiteSummary
from protocol.rounds import TestSplitSize as SplitSize
from shared import wire
from tests.coordinator.state import run_state
from tests.security.hostile import HostileGrid


def roll_call_json(site_id: str, labels: list[str]) -> str:
    return json.dumps(
        {
            "site_id": site_id,
            "labels": labels,
            "manifest": None,
            "test_split": {"n_documents": 3, "n_spans": 3, "n_characters": 30},
            "has_baseline": False,
        }
    )


def answering(text: str) -> Any:
    return lambda *_: RecordDict({wire.PAYLOAD: ConfigRecord({"json": text})})


def run_roll_call(tmp_path: Path, replies: dict[int, str]) -> Any:
    state = run_state(tmp_path, {})
    grid = HostileGrid(
        None, {n: {} for n in replies}, {n: answering(r) for n, r in replies.items()}
    )
    roll_call(grid, state)
    return state


BAD_IDS = [
    ("mathtext", "$\\mathdefault{x}^{y}$"),
    ("newline and ANSI", "site-a\n\x1b[31mINFO forged line"),
    ("path", "../../etc"),
    ("empty", ""),
    ("too long", "s" * 65),
]


@pytest.mark.parametrize(("case", "site_id"), BAD_IDS, ids=[c[0] for c in BAD_IDS])
def test_roll_call_refuses_site_ids_off_the_pattern(
    tmp_path: Path, case: str, site_id: str
) -> None:
    state = run_roll_call(
        tmp_path, {1: roll_call_json("site-a", ["PER"]), 2: roll_call_json(site_id, ["PER"])}
    )
    assert set(state.roll) == {"site-a"}, case
    assert ("node-2", "roll_call") in {(e.site_id, e.phase) for e in state.exclusions}


LOG_FORGERIES = [
    ("newline", "PER\nINFO :      forged: bundle accepted"),
    ("ANSI escape", "PER\x1b[2J\x1b[1;1H"),
    ("carriage return", "PER\rINFO forged"),
    ("unicode line separator", "PER\u2028forged"),
]


@pytest.mark.parametrize(("case", "label"), LOG_FORGERIES, ids=[c[0] for c in LOG_FORGERIES])
def test_a_label_cannot_forge_a_coordinator_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, case: str, label: str
) -> None:
    """Issue 50 made labels data by type (``protocol.corpus.LabelName``): a label with a line
    break or an escape is refused with the reply, which is excluded with a named reason, and
    the log line that says so is still one line."""
    with caplog.at_level(logging.INFO, logger="flwr"):
        state = run_roll_call(tmp_path, {1: roll_call_json("site-a", [label])})
    assert "site-a" not in state.roll
    assert ("node-1", "roll_call") in {(e.site_id, e.phase) for e in state.exclusions}
    lines = [r.getMessage() for r in caplog.records]
    assert any("node-1" in line for line in lines)
    for line in lines:
        assert not any(c in line for c in "\n\r\x1b\u2028"), (case, line)


STARTED = datetime(2026, 1, 1, tzinfo=UTC)


def report(detail: str, label: str) -> FederationReport:
    size = SplitSize(n_documents=1, n_spans=1, n_characters=1)
    return FederationReport(
        sites=(SiteSummary(site_id="site-a", labels=(label,), test_split=size),),
        bundles=(),
        models=(),
        matrix=(),
        baselines=(),
        exclusions=(
            Exclusion(site_id="site-a", phase="collect", reason="site_error", detail=detail),
        ),
        labels=(label,),
        provenance=ReportProvenance(
            tool_version="t", versions={}, config_digest="c", started_at=STARTED
        ),
    )


MARKDOWN = [
    ("raw HTML", "<script>alert(1)</script>", "PER"),
    ("newline breaks the table", "one\n| forged | row |\n", "PER"),
    ("pipe in a label", "x", "PER|ORG"),
    ("image beacon", "<img src=https://example.org/x.png>", "PER"),
]


@pytest.mark.parametrize(("case", "detail", "label"), MARKDOWN, ids=[c[0] for c in MARKDOWN])
def test_report_md_cells_are_inert(case: str, detail: str, label: str) -> None:
    text = to_markdown(report(detail, label))
    assert "<script" not in text and "<img" not in text, case
    for line in text.splitlines():
        if line.startswith("|"):
            cells = line.replace("\\|", "").count("|")
            header = next(h for h in _tables(text) if line in h)
            assert cells == header[0].replace("\\|", "").count("|"), (case, line)


def _tables(text: str) -> list[list[str]]:
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return [*tables, current] if current else tables


def test_audit_column_comes_from_the_verified_bundle(tmp_path: Path) -> None:
    """A site names a passing manifest at roll call, then its bundle is excluded: the report
    must not say "passed"."""
    state = run_state(tmp_path, {1: "site-a"})
    claimed = ExportManifest.model_validate(
        {"site_id": "site-a", "tool_version": "t", "config_digest": "c", "artifacts": [],
         "audit": {"report_sha256": "0" * 64, "corpus_sha256": "0" * 64, "passed": True}}
    )  # fmt: skip
    state.roll["site-a"] = state.roll["site-a"].model_copy(update={"manifest": claimed})
    state.exclude("site-a", "collect", "audit_failed", "the audit report says failed")
    (summary,) = site_summaries(state)
    assert summary.audit_passed is None and summary.bundle_sha256 is None
