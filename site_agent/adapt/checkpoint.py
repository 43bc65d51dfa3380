"""Resumable training: adapter weights, optimiser, scheduler, RNG and step, saved atomically.

A checkpoint carries the digest of the settings and training data that produced it; resuming
under different settings is refused rather than silently mixing two runs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.atomic import atomic_directory
from shared.errors import ConfigError

STATE_FILE = "state.pt"
WEIGHTS_FILE = "adapter.safetensors"


@dataclass
class Resumed:
    step: int
    losses: list[float]
    path: Path


def _step_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("step-*") if (p / STATE_FILE).is_file())


def save_checkpoint(
    root: Path,
    step: int,
    model: Any,
    optimizer: Any,
    scheduler: Any,
    losses: list[float],
    digest: str,
    keep: int,
) -> Path:
    import torch
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    target = root / f"step-{step:07d}"
    with atomic_directory(target) as tmp:
        weights = {
            k: v.detach().cpu().contiguous()
            for k, v in get_peft_model_state_dict(model, save_embedding_layers=False).items()
        }
        save_file(weights, str(tmp / WEIGHTS_FILE))
        state = {
            "step": step,
            "losses": losses,
            "digest": digest,
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng_cpu": torch.get_rng_state(),
            "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        }
        torch.save(state, tmp / STATE_FILE)
    for old in _step_dirs(root)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return target


def resume_latest(
    root: Path, model: Any, optimizer: Any, scheduler: Any, digest: str
) -> Resumed | None:
    """Restore the newest checkpoint under ``root`` into the objects; None when there is none."""
    found = _step_dirs(root)
    if not found:
        return None
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    path = found[-1]
    state = torch.load(path / STATE_FILE, weights_only=True)
    if state["digest"] != digest:
        raise ConfigError(
            f"{path}: checkpoint was made with other settings or training data; fix: use a new "
            f"output folder, or delete {root} to start over"
        )
    set_peft_model_state_dict(model, load_file(str(path / WEIGHTS_FILE)))
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng_cpu"])
    if state["rng_cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["rng_cuda"])
    return Resumed(step=int(state["step"]), losses=list(state["losses"]), path=path)
