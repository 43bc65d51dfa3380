"""The shipped demo: a small fictitious English corpus and a config that runs in minutes.

``demo_corpus.jsonl`` is written by ``make_demo_corpus.py`` (deterministic; every name,
date, number and place in it is invented), which also writes the other note styles and label
schemes of the three federation demo sites (``sites.py``, ``site-agent demo-sites``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.signing import generate_signing_key
from site_agent.config import SiteConfig, build_site_config
from site_agent.site_setup import key_paths

DEMO_CORPUS = Path(__file__).with_name("demo_corpus.jsonl")
DEMO_SITE_ID = "demo-site"


def demo_site_config(
    work_dir: Path, data: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None
) -> SiteConfig:
    """The demo profile over ``data`` (a site.toml's content, if any), with a local key."""
    private, public = key_paths(work_dir / "keys", DEMO_SITE_ID)
    if not private.exists():
        generate_signing_key(private, public)
    base: dict[str, Any] = {
        "site_id": DEMO_SITE_ID,
        "corpus": {"path": str(DEMO_CORPUS)},
        "work_dir": str(work_dir),
        "signing_key": str(private),
    }
    merged = {**base, **(data or {})}
    return build_site_config(merged, source="--demo", profile="demo", overrides=overrides)
