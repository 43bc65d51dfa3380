"""Evaluation only, on a real loopback deployment (TLS + SuperNode auth): the given model is
scored at every site, nothing is collected or trained, and a node that authenticates with one
site's key but says it is another site is excluded with that reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator.aggregate.trainer import init_token_classifier
from coordinator.deployment.keys import register_site
from coordinator.deployment.local import LocalSite, run_local_federation
from coordinator.given_models import write_models_file
from coordinator.settings import FederationSettings
from shared.corpus_io import read_corpus
from shared.supernode_keys import create_supernode_auth_key
from tests.coordinator.deployment.test_loopback_deployment import processes_mentioning
from tests.template_sites import SITE_CONFIG, build_site, demo_mapping


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_evaluate_scores_given_models_and_excludes_an_impostor(
    tmp_path: Path, base_model: Path
) -> None:
    work, out = tmp_path / "work", tmp_path / "out"
    registry = work / "registry.json"
    sites = []
    for site_id in ("site-a", "site-b", "site-c"):
        site = build_site(work / "sites", site_id)
        auth = create_supernode_auth_key(site.site_dir / "keys" / "supernode.key")
        register_site(registry, site_id, site.signing_public_key, auth)
        # site-c's node holds site-c's key but says it is site-a
        claimed = "site-a" if site_id == "site-c" else site_id
        key, policy = site.site_dir / "keys" / "supernode.key", site.site_dir / SITE_CONFIG
        sites.append(LocalSite(claimed, site.site_dir, key, site_config=policy))
    mapping = work / "mapping.json"
    mapping.write_text(demo_mapping().model_dump_json(), encoding="utf-8")
    given = init_token_classifier(
        base_model, tuple(demo_mapping().coarse_labels), work / "given" / "coarse-init", 0
    )
    models = write_models_file([f"untrained={given}"], registry, work / "given")
    settings = FederationSettings(
        registry=registry,
        base_model=base_model,
        output_dir=out,
        mapping=mapping,
        evaluate_models=models,
        bootstrap=20,
        reply_timeout=120,
    )
    try:
        report = run_local_federation(work, sites, settings, on_line=print, timeout=240)
    finally:
        leftovers = processes_mentioning(str(work))
    assert leftovers == [], "processes left running"
    assert report.mode == "evaluate" and report.bundles == () and report.fedavg_rounds == ()
    assert [(m.name, m.kind) for m in report.models] == [("untrained", "given")]
    assert [s.site_id for s in report.sites] == ["site-a", "site-b"]
    for site_id in ("site-a", "site-b"):
        cell = report.cell("untrained", site_id)
        assert cell is not None and cell.metrics is not None
        test = read_corpus(work / "sites" / site_id / "01-split" / "test.jsonl")
        assert cell.metrics.n_documents == len(test)
    (impostor,) = report.exclusions
    assert (impostor.site_id, impostor.phase, impostor.reason) == (
        "site-c",
        "roll_call",
        "identity_mismatch",
    )
    assert "said it is 'site-a'" in impostor.detail
