"""``coordinator demo``: three small built-in sites federated on this machine, end to end.

Builds a tiny encoder and three sites (test split, gold-trained annotator, signed export
bundle, Ed25519 signing key and SuperNode auth key), registers them, then runs the real
deployment (SuperLink with TLS and SuperNode authentication, one SuperNode per site, the app
submitted with ``flwr run``) and leaves ``report.{json,md,html}`` in ``out_dir``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coordinator.demo_sites import (
    STYLES,
    build_site,
    demo_corpus,
    demo_mapping,
    train_site_annotator,
)
from coordinator.deployment.keys import register_site
from coordinator.deployment.local import LocalSite, run_local_federation
from coordinator.settings import FederationSettings
from protocol.rounds import FederationReport
from shared.atomic import atomic_write_text
from shared.supernode_keys import create_supernode_auth_key
from site_agent.models.tiny import tiny_encoder


def prepare_demo(
    work: Path, output_dir: Path, site_ids: list[str]
) -> tuple[list[LocalSite], FederationSettings]:
    """Sites, keys, registry, mapping and base encoder for a local run."""
    texts = [d.text for s in site_ids for d in demo_corpus(s, 20, 0, "vocab").documents]
    base = tiny_encoder(work / "base-encoder", texts)
    registry = work / "registry.json"
    sites = []
    for site_id in site_ids:
        site = build_site(work / "sites", site_id, base_model=base)
        train_site_annotator(site, base)
        auth_public = create_supernode_auth_key(site.site_dir / "keys" / "supernode.key")
        register_site(registry, site_id, site.signing_public_key, auth_public)
        sites.append(LocalSite(site_id, site.site_dir, site.site_dir / "keys" / "supernode.key"))
    mapping = work / "mapping.json"
    atomic_write_text(mapping, demo_mapping().model_dump_json(indent=2))
    settings = FederationSettings(
        registry=registry,
        base_model=base,
        output_dir=output_dir,
        mapping=mapping,
        fedavg_rounds=3,
        train_epochs=12,
        local_epochs=4,
        learning_rate=1e-3,
        batch_size=4,
        bootstrap=100,
        reply_timeout=300,
    )
    return sites, settings


def run_demo(
    output_dir: Path, on_line: Callable[[str], None] = print, secure: bool = True
) -> FederationReport:
    output_dir = output_dir.resolve()
    work = output_dir / "demo-work"
    sites, settings = prepare_demo(work, output_dir, sorted(STYLES))
    return run_local_federation(work, sites, settings, on_line=on_line, secure=secure)
