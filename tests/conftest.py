"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
os.environ.setdefault("FLWR_DISABLE_UPDATE_CHECK", "1")

REPO = Path(__file__).resolve().parents[1]
MEDDOCAN = REPO.parent / "shared" / "data" / "meddocan"


@pytest.fixture(scope="session")
def meddocan_dir() -> Path:
    """The MEDDOCAN JSONL conversion (CC BY 4.0, Marimon et al., IberLEF 2019)."""
    if not (MEDDOCAN / "train.jsonl").exists():
        pytest.skip(f"MEDDOCAN not found at {MEDDOCAN}: the ../shared folder is absent")
    return MEDDOCAN
