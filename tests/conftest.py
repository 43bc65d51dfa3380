"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import subprocess
import sys
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


def loaded_after(
    code: str, candidates: tuple[str, ...], prefixes: tuple[str, ...] = ()
) -> list[str]:
    """The ``candidates`` (and modules under ``prefixes``) in ``sys.modules`` after a fresh
    interpreter runs ``code``: what an import really loads, without this process's imports."""
    probe = (
        f"import sys\n{code}\n"
        f"names = [m for m in {candidates!r} if m in sys.modules]\n"
        f"names += [m for m in sys.modules if {prefixes!r} and m.startswith({prefixes!r})]\n"
        "print(' '.join(sorted(names)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return done.stdout.split()
