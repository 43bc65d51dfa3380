"""Fixtures of the pipeline tests: MEDDOCAN slices, tiny models, a signing key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MEDDOCAN, REPO

# A git worktree sits one level deeper than the main checkout; look beside both.
_CANDIDATES = (MEDDOCAN, REPO.parent.parent / "shared" / "data" / "meddocan")


@pytest.fixture(scope="session")
def meddocan_dir() -> Path:
    """MEDDOCAN JSONL (CC BY 4.0, Marimon et al., IberLEF 2019); skips when absent."""
    for candidate in _CANDIDATES:
        if (candidate / "train.jsonl").exists():
            return candidate
    pytest.skip(f"MEDDOCAN not found at any of {[str(c) for c in _CANDIDATES]}")
