"""Heavy things built once: a tiny encoder, demo sites with annotators, a registry."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from coordinator.deployment.keys import register_site
from site_agent.models.tiny import tiny_encoder
from tests.template_sites import (
    SITE_CONFIG,
    DemoSite,
    build_site,
    demo_corpus,
    demo_mapping,
    train_site_annotator,
)

# Two shared cores: one intra-op thread avoids oversubscription (10x slower otherwise).
torch.set_num_threads(1)


@dataclass(frozen=True)
class World:
    root: Path
    base_model: Path
    sites: dict[str, DemoSite]
    registry: Path
    mapping: Path


def make_world(root: Path, base: Path, site_ids: list[str], annotated: set[str]) -> World:
    """Demo sites under ``root``, all registered; those in ``annotated`` get a gold-trained
    annotator and export a synthetic-trained encoder in their bundle."""
    sites = {
        s: build_site(root / "sites", s, base_model=base if s in annotated else None)
        for s in site_ids
    }
    registry = root / "registry.json"
    for site in sites.values():
        register_site(registry, site.site_id, site.signing_public_key)
        if site.site_id in annotated:
            train_site_annotator(site, base, epochs=3)
    mapping = root / "mapping.json"
    mapping.write_text(demo_mapping().model_dump_json(), encoding="utf-8")
    return World(root, base, sites, registry, mapping)


@pytest.fixture(scope="session")
def base_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = [
        d.text for s in ("site-a", "site-b", "site-c") for d in demo_corpus(s, 20, 0, "v").documents
    ]
    return tiny_encoder(tmp_path_factory.mktemp("base") / "encoder", texts)


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory, base_model: Path) -> World:
    ids = ["site-a", "site-b", "site-c"]
    return make_world(tmp_path_factory.mktemp("world"), base_model, ids, set(ids))


def node_configs(world: World) -> dict[int, dict[str, str]]:
    return {
        100 + i: {
            "site-id": s.site_id,
            "site-dir": str(s.site_dir),
            "signing-key": str(s.site_dir / "keys" / "signing.key"),
            "site-config": str(s.site_dir / SITE_CONFIG),
        }
        for i, s in enumerate(world.sites.values())
    }


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
