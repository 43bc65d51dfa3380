"""The shipped experiment files (TOML), found as package data: ``quick.toml`` runs every
regime on tiny models in CI; the ``meddocan*.toml`` files are the measured MEDDOCAN studies."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def spec_path(name: str) -> Path:
    """The shipped experiment file ``name`` (``quick.toml``, ``meddocan.toml``, ...)."""
    return Path(str(resources.files(__name__) / name))


def spec_names() -> list[str]:
    return sorted(p.name for p in resources.files(__name__).iterdir() if p.name.endswith(".toml"))
