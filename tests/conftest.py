"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
os.environ.setdefault("FLWR_DISABLE_UPDATE_CHECK", "1")

REPO = Path(__file__).resolve().parents[1]
MEDDOCAN = REPO.parent / "shared" / "data" / "meddocan"
# A git worktree may sit one level deeper than the main checkout; look beside both.
MEDDOCAN_CANDIDATES = (MEDDOCAN, REPO.parent.parent / "shared" / "data" / "meddocan")


@pytest.fixture(scope="session")
def meddocan_dir() -> Path:
    """The MEDDOCAN JSONL conversion (CC BY 4.0, Marimon et al., IberLEF 2019); skips when
    the ``../shared`` folder is absent."""
    for candidate in MEDDOCAN_CANDIDATES:
        if (candidate / "train.jsonl").exists():
            return candidate
    pytest.skip(f"MEDDOCAN not found at any of {[str(c) for c in MEDDOCAN_CANDIDATES]}")


@pytest.fixture
def torch_threads() -> Any:
    """Give torch's global CPU thread count back as it was (stages set it)."""
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)
