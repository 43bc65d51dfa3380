"""The federation over bundles the real site pipeline made: two demo sites (own note style and
label scheme) run every stage with tiny models, then the coordinator's rounds run through the
real ClientApp. What the coordinator accepts must be exactly what each site's export signed."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator.deployment.keys import register_site
from coordinator.mappings import merge_mappings
from coordinator.server_app import run_federation
from coordinator.settings import FederationSettings
from protocol import LabelMapping
from protocol.rounds import FederationReport
from shared.provenance import sha256_file
from shared.signing import generate_signing_key
from site_agent.client_app import app as client_app
from site_agent.config import build_site_config
from site_agent.demo.make_demo_corpus import SHARED, build_corpus, scheme_mapping, write_corpus
from site_agent.stages.pipeline import run_pipeline
from tests.coordinator.fake_grid import InProcessGrid
from tests.template_sites import OPEN_EVALUATION, SITE_CONFIG
from tests.tiny_models import tiny_causal_lm, tiny_encoder

SITES = {"ward-site": ("ward", "ward"), "radiology-site": ("radiology", "coarse")}


def run_site(root: Path, site_id: str, style: str, scheme: str, models: tuple[Path, Path]) -> Path:
    corpus = write_corpus(root / site_id / "corpus.jsonl", build_corpus(24, 5, style, scheme))
    private = root / site_id / "keys" / "site.pem"
    generate_signing_key(private, private.with_name("site.pub.pem"))
    config = build_site_config(
        {
            "site_id": site_id,
            "language": "en",
            "device": "cpu",
            "work_dir": str(root / site_id / "work"),
            "signing_key": str(private),
            "corpus": {"path": str(corpus)},
            "split": {"validation_fraction": 0.2, "test_fraction": 0.25, "group_by_source": False},
            "pseudonymise": {"locale": "en_US"},
            "annotator": {
                "base_model": str(models[0]),
                "min_validation_recall": 0.0,
                "training": {"epochs": 1, "batch_size": 8, "num_threads": 1, "min_steps": 0},
            },
            "adapt": {
                "base_model": str(models[1]),
                "batch_size": 2,
                "max_steps": 2,
                "max_length": 64,
                "quantization": "none",
                "cpu_threads": 1,
            },
            "generation": {
                "mode": "annotate",  # tiny generators write no placeholders; the annotator labels
                "samples_per_prompt": 2,
                "max_new_tokens": 24,
                "max_documents": 8,
                "cpu_threads": 1,
            },
            # tiny models learn next to nothing: issue 15's degenerate-export refusal, accepted
            "export": {"accept_degenerate": "tiny test models"},
        }
    )
    run_pipeline(config)
    return config.work_dir


@pytest.fixture(scope="module")
def federated(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[FederationReport, dict[str, Path]]:
    root = tmp_path_factory.mktemp("pipeline-sites")
    texts = [str(row["text"]) for s, _ in SITES.values() for row in build_corpus(24, 5, s, "ward")]
    models = (tiny_encoder(root / "encoder", texts), tiny_causal_lm(root / "generator", texts))
    work = {site: run_site(root, site, *style, models) for site, style in SITES.items()}
    registry = root / "registry.json"
    for site, folder in work.items():  # the public key each export left for the coordinator
        register_site(registry, site, folder / "outbox" / "signer.pub.pem")
    mapping = merge_mappings(
        [
            LabelMapping(name="shared", coarse_labels=tuple(SHARED.values()), mapping=m)
            for m in (scheme_mapping(scheme) for _, scheme in SITES.values())
        ]
    )
    (root / "mapping.json").write_text(mapping.model_dump_json(), encoding="utf-8")
    settings = FederationSettings(
        registry=registry,
        base_model=models[0],
        output_dir=root / "out",
        mapping=root / "mapping.json",
        fedavg_rounds=1,
        fedavg_start="exported",
        train_epochs=1,
        train_min_steps=0,
        batch_size=8,
        bootstrap=10,
    )
    open_policy = root / SITE_CONFIG
    open_policy.write_text(OPEN_EVALUATION, encoding="utf-8")
    configs = {
        100 + i: {
            "site-id": site,
            "site-dir": str(folder),
            "signing-key": str(folder.parent / "keys" / "site.pem"),
            "site-config": str(open_policy),
        }
        for i, (site, folder) in enumerate(sorted(work.items()))
    }
    return run_federation(InProcessGrid(client_app, configs), settings), work


def test_accepted_manifests_are_the_ones_the_site_runs_signed(
    federated: tuple[FederationReport, dict[str, Path]],
) -> None:
    report, work = federated
    signed = {
        site: [sha256_file(m) for m in (folder / "outbox").glob("*/manifest.json")]
        for site, folder in work.items()
    }
    assert all(len(hashes) == 1 for hashes in signed.values())
    accepted = {b.site_id: b.manifest_sha256 for b in report.bundles}
    assert accepted == {site: hashes[0] for site, hashes in signed.items()}
    assert report.exclusions == ()


def test_every_model_is_scored_at_both_sites_in_the_shared_labels(
    federated: tuple[FederationReport, dict[str, Path]],
) -> None:
    report, _ = federated
    assert set(report.labels) == set(SHARED.values())
    assert {m.kind for m in report.models} >= {"site", "pooled", "export", "fedavg"}
    assert all(cell.metrics is not None for cell in report.matrix), report.matrix
    (played,) = report.fedavg_rounds
    assert played.contributors == tuple(sorted(SITES)) and played.update_norm > 0
