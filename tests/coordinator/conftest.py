"""Heavy things built once: a tiny encoder, demo sites with annotators, a registry."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from coordinator.demo_models import tiny_encoder
from coordinator.demo_sites import DemoSite, build_site, demo_corpus, demo_mapping, train_site_annotator
from coordinator.keys import register_site


@dataclass(frozen=True)
class World:
    root: Path
    base_model: Path
    sites: dict[str, DemoSite]
    registry: Path
    mapping: Path


def make_world(root: Path, site_ids: list[str], annotators: bool = True) -> World:
    texts = [d.text for s in ("site-a", "site-b", "site-c") for d in demo_corpus(s, 20, 0, "vocab").documents]
    base = tiny_encoder(root / "base-encoder", texts)
    sites = {s: build_site(root / "sites", s) for s in site_ids}
    registry = root / "registry.json"
    for site in sites.values():
        register_site(registry, site.site_id, site.signing_public_key)
        if annotators:
            train_site_annotator(site, base, epochs=3)
    mapping = root / "mapping.json"
    mapping.write_text(demo_mapping().model_dump_json(), encoding="utf-8")
    return World(root, base, sites, registry, mapping)


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("world"), ["site-a", "site-b", "site-c"])


def node_configs(world: World) -> dict[int, dict[str, str]]:
    return {
        100 + i: {"site-id": s.site_id, "site-dir": str(s.site_dir)}
        for i, s in enumerate(world.sites.values())
    }


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
