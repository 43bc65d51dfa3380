"""The SiteConfig for one ``site-agent synthesize`` run: a site.toml, or the shipped demo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.errors import UsageError
from site_agent.config import SiteConfig, load_site_config, read_site_toml

DEFAULT_DEMO_WORK_DIR = Path("runs/demo")


def config_for_run(
    site_config: Path | None,
    *,
    demo: bool = False,
    profile: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> SiteConfig:
    """``--demo`` runs the demo corpus and profile (over a site.toml, if one is given too)."""
    overrides = overrides or {}
    if demo:
        from site_agent.demo import demo_site_config

        data: dict[str, Any] = {}
        if site_config is not None:
            data = read_site_toml(site_config)
        work_dir = Path(overrides.get("work_dir", DEFAULT_DEMO_WORK_DIR))
        return demo_site_config(work_dir, data, overrides)
    if site_config is None:
        raise UsageError("no --site-config; fix: pass --site-config site.toml or --demo")
    return load_site_config(site_config, profile=profile, overrides=overrides)
