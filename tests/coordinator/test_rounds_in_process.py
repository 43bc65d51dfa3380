"""Every round of the protocol through the real ClientApp, with an in-process Grid."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from coordinator.server_app import run_federation
from coordinator.settings import FederationSettings
from ner.infer import machine_annotate
from protocol import LabelMapping
from protocol.rounds import FedAvgUpdate, FederationReport
from shared import wire
from shared.corpus_io import read_corpus
from shared.label_mapping import harmonise
from shared.metrics.model_metrics import evaluate_predictions
from site_agent.client_app import app as client_app
from tests.coordinator.conftest import World, node_configs
from tests.coordinator.fake_grid import InProcessGrid


def settings_for(world: World, out: Path, **overrides: object) -> FederationSettings:
    values = {
        "registry": world.registry,
        "base_model": world.base_model,
        "output_dir": out,
        "mapping": world.mapping,
        "fedavg_rounds": 2,
        "train_epochs": 6,
        "train_min_steps": 0,
        "learning_rate": 1e-3,
        "batch_size": 4,
        "bootstrap": 30,
        **overrides,
    }
    return FederationSettings.model_validate(values)


@pytest.fixture(scope="module")
def happy(
    world: World, tmp_path_factory: pytest.TempPathFactory
) -> tuple[FederationReport, InProcessGrid, Path]:
    out = tmp_path_factory.mktemp("happy")
    grid = InProcessGrid(client_app, node_configs(world))
    return run_federation(grid, settings_for(world, out)), grid, out


def test_every_round_sends_its_message_type(
    happy: tuple[FederationReport, InProcessGrid, Path],
) -> None:
    report, grid, _ = happy
    types = [m.metadata.message_type for m in grid.sent]
    assert types.count("query.roll_call") == 3
    assert types.count("query.collect") == 3
    assert types.count("train.fedavg") == 3 * 2
    assert types.count("evaluate.cross_site") == 3  # tiny models: one message holds them all
    assert len(report.models) == 8


def test_fedavg_replies_leave_out_the_tensors_training_kept(
    happy: tuple[FederationReport, InProcessGrid, Path],
) -> None:
    """Each FedAvg reply's sent and unchanged tensors add up to the global model, none sent as
    it was received, and the coordinator rebuilt every reply into a whole model (all three
    sites contributed). The tiny encoder trains its embeddings, so nothing is left out here;
    tests/site_agent/federation/test_client_app.py leaves fixed embeddings out."""
    report, grid, _ = happy
    sent = [m for m in grid.sent if m.metadata.message_type == "train.fedavg"]
    replies = [r for r in grid.replies if r.metadata.message_type == "train.fedavg"]
    assert len(replies) == len(sent) == 3 * 2
    for message, reply in zip(sent, replies, strict=True):
        received = wire.model_weights(message.content, wire.GLOBAL_MODEL)
        back = wire.model_weights(reply.content, wire.GLOBAL_MODEL)
        update = wire.unpack(reply.content, FedAvgUpdate)
        assert received is not None and back is not None
        assert set(back.keys()) | set(update.unchanged) == set(received.keys())
        assert not set(back.keys()) & set(update.unchanged)
        for name in back:  # nothing sent back as it was received
            assert back[name].data != received[name].data, name
    assert [len(r.contributors) for r in report.fedavg_rounds] == [3, 3]


def test_matrix_is_complete_with_site_pooled_and_fedavg_models(
    happy: tuple[FederationReport, InProcessGrid, Path],
) -> None:
    report, _, _ = happy
    names = {m.name for m in report.models}
    exported = {"export:site-a", "export:site-b", "export:site-c"}
    assert names == {"site:site-a", "site:site-b", "site:site-c", "pooled", "fedavg", *exported}
    assert len(report.matrix) == 8 * 3
    assert all(cell.metrics is not None for cell in report.matrix), report.matrix
    assert all(b.metrics is not None for b in report.baselines)
    assert report.exclusions == ()
    assert report.labels == ("ID", "LOC", "ORG", "PER", "TIME")


def test_coordinator_training_follows_train_epochs_and_min_steps(
    happy: tuple[FederationReport, InProcessGrid, Path],
) -> None:
    import json

    _, _, out = happy
    for name in ("pooled", "site-site-a"):
        record = json.loads((out / "models" / name / "annotator.json").read_text())
        assert record["settings"]["min_steps"] == 0
        assert record["settings"]["epochs"] == 6
        assert len(record["epochs"]) <= 6


def test_matrix_cell_equals_metrics_computed_directly(
    world: World, happy: tuple[FederationReport, InProcessGrid, Path]
) -> None:
    report, _, out = happy
    site = world.sites["site-b"]
    gold = read_corpus(site.site_dir / "01-split" / "test.jsonl")
    mapping = LabelMapping.model_validate_json(world.mapping.read_text())
    gold_shared = harmonise(gold, mapping, report.labels)
    predicted = machine_annotate(out / "models" / "pooled", gold_shared)
    direct = evaluate_predictions(gold_shared, predicted, None, n_bootstrap=30, seed=13)
    cell = report.cell("pooled", "site-b")
    assert cell is not None and cell.metrics == direct


def test_exported_encoder_is_scored_through_the_label_mapping(
    world: World, happy: tuple[FederationReport, InProcessGrid, Path]
) -> None:
    """site-a's exported encoder tags PATIENT/CITY/...; at site-c it is scored in PER/LOC/..."""
    report, _, out = happy
    site = world.sites["site-c"]
    mapping = LabelMapping.model_validate_json(world.mapping.read_text())
    gold = harmonise(read_corpus(site.site_dir / "01-split" / "test.jsonl"), mapping, report.labels)
    predicted = machine_annotate(out / "models" / "export-site-a", gold)
    assert set(predicted.labels) <= set(mapping.mapping) - set(mapping.coarse_labels)
    mapped = harmonise(predicted, mapping, report.labels)
    direct = evaluate_predictions(gold, mapped, None, n_bootstrap=30, seed=13)
    cell = report.cell("export:site-a", "site-c")
    assert cell is not None and cell.metrics == direct


def test_report_files_are_written_and_typed(
    happy: tuple[FederationReport, InProcessGrid, Path],
) -> None:
    report, _, out = happy
    assert FederationReport.model_validate_json((out / "report.json").read_text()) == report
    markdown = (out / "report.md").read_text()
    assert "Span overlap F1" in markdown and "site-c" in markdown
    stated = {site.site_id: site.evaluation_bound for site in report.sites}
    assert all("evaluation bound per run" in bound for bound in stated.values())
    assert "no differential privacy: figures are exact" in markdown  # the sites' mechanism
    assert "What each site's evaluation policy lets a run learn" in markdown
    page = (out / "report.html").read_text()
    assert all(html.escape(bound, quote=False) in page for bound in stated.values()), stated
    assert page.count("data:image/png;base64,") == 3
    assert "<script" not in page and "http" not in page.split("<body>")[1].split("Provenance")[0]


MODEL_FOLDERS = {"pooled": "pooled", "fedavg": "fedavg"}


def _folder(name: str) -> str:
    """``site:site-a`` -> ``site-site-a``; ``export:site-a`` -> ``export-site-a``."""
    return MODEL_FOLDERS.get(name) or name.replace(":", "-", 1)


def test_every_built_model_folder_has_a_card_whose_figures_are_the_report(
    happy: tuple[FederationReport, InProcessGrid, Path],
) -> None:
    from transformers import pipeline

    from tests.site_agent.export.test_model_card import split_card

    report, _, out = happy
    for model in report.models:
        folder = out / "models" / _folder(model.name)
        meta, body = split_card((folder / "README.md").read_text())
        assert meta["pipeline_tag"] == "token-classification" and meta["license"]
        scored = {r["dataset"]["name"]: r["metrics"] for r in meta["model-index"][0]["results"]}
        for site in report.sites:
            cell = report.cell(model.name, site.site_id)
            assert cell is not None and cell.metrics is not None
            metrics = {m["name"]: m["value"] for m in scored[f"{site.site_id} test split"]}
            assert metrics == {
                "token F1": cell.metrics.token_f1.value,
                "span overlap F1": cell.metrics.span_overlap_f1.value,
                "document leakage": cell.metrics.document_leakage.value,
            }
            ci = cell.metrics.token_f1
            assert f"| token F1 | {ci.value:.4f} | [{ci.low:.4f}, {ci.high:.4f}] |" in body
        for site in model.trained_on:  # training data: amount and audit verdict per site
            summary = next(s for s in report.sites if s.site_id == site)
            assert f"| {site} | not reported | {summary.synthetic_documents} | passed |" in body
        bundles = {b.site_id: b.manifest_sha256 for b in report.bundles}
        assert all(bundles[site] in body for site in model.trained_on)
    tagger = pipeline("token-classification", model=str(out / "models" / "pooled"), device="cpu")
    assert isinstance(tagger("Paciente Ana Ruiz."), list)
