"""``coordinator demo --sites DIR``: federate the site folders of one machine (the demo's).

``DIR`` holds one folder per site, each with the ``site.toml`` its pipeline ran with (its
``[federation]`` table says how it joins) and its ``label-mapping.toml``, and a
``federation.toml`` naming the base encoder (and, in ``[settings]``, run settings). ``site-agent
demo-sites`` writes the demo's; studies/meddocan_sites.py writes the MEDDOCAN study's.

The coordinator's side of the demo, as in a real deployment: it registers each site's export
signing key (the ``signer.pub.pem`` its export left) and SuperNode auth key, merges the sites'
label mappings into the shared scheme, starts a SuperLink with TLS and SuperNode
authentication, has every site join with ``site-agent join --site-config site.toml``, runs the
rounds and leaves ``report.{json,md,html}`` in the output folder. It never reads a site's notes:
everything it learns arrives through the rounds, in the bundles the site pipelines signed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coordinator.deployment.keys import register_site
from coordinator.deployment.local import LOCAL_RUN_TIMEOUT_S, JoiningSite, run_local_federation
from coordinator.mappings import merge_mappings
from coordinator.settings import FederationSettings
from protocol.rounds import FederationReport
from shared.atomic import atomic_write_text
from shared.config_files import read_toml, resolve_paths
from shared.errors import ConfigError
from shared.label_mapping import load_label_mapping

SITE_CONFIG = "site.toml"
LABEL_MAPPING = "label-mapping.toml"
FEDERATION_TOML = "federation.toml"  # base-model, and [settings] over the demo's settings
SIGNER_PUBLIC_KEY = "signer.pub.pem"  # what a site's export leaves beside its bundles
SITES_FIX = "fix: run `site-agent demo-sites --out DIR` first and pass that DIR"


def read_site(config: Path) -> tuple[JoiningSite, Path, Path]:
    """The site's joining command, signing public key and SuperNode auth public key."""
    table = read_toml(config, what="site config").get("federation")
    if not isinstance(table, dict) or "site-id" not in table or "work-dir" not in table:
        raise ConfigError(f"{config}: no [federation] site-id and work-dir; {SITES_FIX}")
    paths = resolve_paths(
        table, ("work-dir", "auth-private-key", "root-certificates"), config.parent
    )
    signing = Path(paths["work-dir"]) / "outbox" / SIGNER_PUBLIC_KEY
    auth = Path(str(paths.get("auth-private-key", "")) + ".pub")
    for needed in (signing, auth):
        if not needed.is_file():
            raise ConfigError(f"{config}: {needed} is missing; {SITES_FIX}")
    ca = paths.get("root-certificates")
    site = JoiningSite(str(table["site-id"]), config, Path(ca) if ca else None)
    return site, signing, auth


# Small enough for the demo's minutes; a sites folder's federation.toml [settings] overrides.
DEMO_SETTINGS: dict[str, object] = {
    "fedavg-rounds": 2,
    "fedavg-start": "exported",
    "train-epochs": 3,
    # the demo notes are dense and learn in 3 epochs (as in the sites' demo profile)
    "train-min-steps": 0,
    "local-epochs": 1,
    "learning-rate": 3e-4,
    "batch-size": 4,
    "bootstrap": 200,
    "reply-timeout": 300.0,
}


def demo_settings(work: Path, output_dir: Path, sites_dir: Path) -> FederationSettings:
    demo = read_toml(sites_dir / FEDERATION_TOML, what="sites' federation file", fix=SITES_FIX)
    mapping = merge_mappings(
        [load_label_mapping(p) for p in sorted(sites_dir.glob(f"*/{LABEL_MAPPING}"))]
    )
    atomic_write_text(work / "mapping.json", mapping.model_dump_json(indent=2))
    values = {
        **DEMO_SETTINGS,
        **demo.get("settings", {}),
        "registry": str(work / "registry.json"),
        "base-model": str(demo.get("base-model", "")),
        "output-dir": str(output_dir),
        "mapping": str(work / "mapping.json"),
    }
    return FederationSettings.from_run_config(values)


def prepare_demo(
    sites_dir: Path, work: Path, output_dir: Path
) -> tuple[list[JoiningSite], FederationSettings]:
    """Register the sites' keys and write the shared mapping; the sites and run settings."""
    configs = sorted(sites_dir.glob(f"*/{SITE_CONFIG}"))
    if not configs:
        raise ConfigError(f"{sites_dir}: no */{SITE_CONFIG}; {SITES_FIX}")
    work.mkdir(parents=True, exist_ok=True)
    registry = work / "registry.json"
    registry.unlink(missing_ok=True)
    sites = []
    for config in configs:
        site, signing, auth = read_site(config)
        register_site(registry, site.site_id, signing, auth)
        sites.append(site)
    return sites, demo_settings(work, output_dir, sites_dir)


def run_demo(
    sites_dir: Path,
    output_dir: Path,
    on_line: Callable[[str], None] = print,
    secure: bool = True,
    timeout: float = LOCAL_RUN_TIMEOUT_S,
) -> FederationReport:
    output_dir = output_dir.resolve()
    work = output_dir / "coordinator-work"
    sites, settings = prepare_demo(sites_dir.resolve(), work, output_dir)
    return run_local_federation(
        work, sites, settings, on_line=on_line, secure=secure, timeout=timeout
    )
