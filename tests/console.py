"""Run the installed ``site-agent`` console script the way an operator does, in a subprocess."""

from __future__ import annotations

import subprocess
from pathlib import Path


def synthesize_with(site_toml: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Write ``site.toml`` in ``cwd`` and run ``site-agent synthesize`` on it there."""
    (cwd / "site.toml").write_text(site_toml, encoding="utf-8")
    return subprocess.run(
        ["site-agent", "synthesize", "--site-config", "site.toml"],
        cwd=cwd, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
