"""A real deployment on 127.0.0.1: SuperLink + 3 SuperNodes with TLS and SuperNode auth.

Roll call -> collect -> aggregate -> cross-site -> report through `flwr run`; the matrix must
be complete and equal to the metrics computed here directly from the saved models.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from coordinator.deployment.local import run_local_federation
from ner.infer import machine_annotate
from protocol import LabelMapping
from protocol.rounds import FederationReport
from shared.corpus_io import read_corpus
from shared.label_mapping import harmonise
from shared.metrics.model_metrics import evaluate_predictions
from tests.template_sites import prepare_template_federation

SITES = ["site-a", "site-b", "site-c"]


def processes_mentioning(text: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def model_dir(models: Path, name: str) -> Path:
    return models / name.replace(":", "-")


@pytest.mark.slow
@pytest.mark.timeout(480)
def test_loopback_deployment_runs_every_round(tmp_path: Path) -> None:
    work, out = tmp_path / "work", tmp_path / "out"
    sites, settings = prepare_template_federation(work, out, SITES)
    settings = settings.model_copy(
        update={"fedavg_rounds": 1, "train_epochs": 6, "bootstrap": 50, "reply_timeout": 150.0}
    )
    lines: list[str] = []
    started = time.monotonic()
    try:
        report = run_local_federation(work, sites, settings, on_line=lines.append, timeout=400)
    finally:
        leftovers = processes_mentioning(str(work))
    elapsed = time.monotonic() - started
    assert leftovers == [], "processes left running"
    assert any("[phase 5/5] report" in line for line in lines)
    kinds = {"site": 3, "pooled": 1, "fedavg": 1, "export": 3}
    assert {k: sum(m.kind == k for m in report.models) for k in kinds} == kinds
    assert report.exclusions == ()
    assert all(c.metrics is not None for c in report.matrix) and len(report.matrix) == 8 * 3
    assert all(b.metrics is not None for b in report.baselines)
    assert FederationReport.model_validate_json((out / "report.json").read_text()) == report
    assert (out / "report.html").read_text().count("data:image/png;base64,") == 3
    mapping = LabelMapping.model_validate_json(settings.mapping.read_text())  # type: ignore[union-attr]
    for site in sites:
        gold = read_corpus(site.site_dir / "01-split" / "test.jsonl")
        shared_gold = harmonise(gold, mapping, report.labels)
        for model in report.models:
            predicted = machine_annotate(model_dir(out / "models", model.name), shared_gold)
            if model.kind == "export":  # tags in its site's labels
                predicted = harmonise(predicted, mapping, report.labels)
            direct = evaluate_predictions(shared_gold, predicted, None, 50, settings.seed)
            cell = report.cell(model.name, site.site_id)
            assert cell is not None and cell.metrics == direct, (model.name, site.site_id)
    print(f"loopback deployment: {elapsed:.1f} s")
