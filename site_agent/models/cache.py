"""Where fetched models live: ``$DEID_SYNTH_CACHE/models/<name>``.

``$DEID_SYNTH_CACHE`` defaults to ``~/.cache/deid-synth``.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "DEID_SYNTH_CACHE"


def cache_root(override: str | os.PathLike[str] | None = None) -> Path:
    """The per-user models cache; ``override`` or ``$DEID_SYNTH_CACHE`` move it."""
    if override is not None:
        return Path(override).expanduser()
    base = os.environ.get(CACHE_ENV)
    root = Path(base).expanduser() if base else Path.home() / ".cache" / "deid-synth"
    return root / "models"


def model_dir(name: str, cache: str | os.PathLike[str] | None = None) -> Path:
    return cache_root(cache) / name
