"""Resumable annotator training: the state after each finished epoch, saved atomically.

On full MEDDOCAN the gold annotator trains for about half an hour and the synthetic one for
one and a half hours on a 2-core CPU; a run stopped in between (a session that ends, a
reboot, the kernel) used to start the stage over. After every epoch that is not the last,
``EpochCheckpoint.save`` writes the weights, the optimiser and scheduler, both random
generators, the epoch records and the best epoch's weights so far into one file; the next
call of ``train_annotator`` with the same settings, corpora, base model and tags resumes after
that epoch and ends with the weights an unbroken run would have (tested). A checkpoint made
for anything else is set aside, not mixed in: the run starts over. The checkpoint folder is
removed once the model is saved.
"""

from __future__ import annotations

import pickle
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from protocol.annotator import EpochRecord
from shared.atomic import atomic_directory

STATE_FILE = "state.pt"


@dataclass
class EpochState:
    """Where training stood after ``epoch``: enough to go on as if never stopped."""

    epoch: int
    restarts: int
    left: int  # optimiser steps still planned
    epochs: list[EpochRecord]
    best_score: float
    best_epoch: int
    model: dict[str, torch.Tensor]
    best: dict[str, torch.Tensor]  # the best epoch's weights (``model`` when it is this one)
    optimizer: dict[str, Any]
    scheduler: dict[str, Any]
    python_rng: Any
    torch_rng: torch.Tensor

    def restore(self, model: Any, optimizer: Any, scheduler: Any, rng: random.Random) -> None:
        """Put the weights, optimiser, scheduler and generators back as they were saved."""
        model.load_state_dict(self.model)
        optimizer.load_state_dict(self.optimizer)
        scheduler.load_state_dict(self.scheduler)
        rng.setstate(self.python_rng)
        torch.set_rng_state(self.torch_rng)


class EpochCheckpoint:
    """The checkpoint folder of one training run, keyed by ``digest`` (settings, corpora,
    base model, tags): state from another run is never resumed."""

    def __init__(self, root: Path, digest: str) -> None:
        self.root = root
        self.digest = digest

    def save(self, state: EpochState) -> None:
        """Write the state after an epoch; the previous one is replaced only once this is
        complete (a kill while writing leaves the last complete checkpoint)."""
        best_is_current = state.best_epoch == state.epoch
        payload = {
            "digest": self.digest,
            "epoch": state.epoch,
            "restarts": state.restarts,
            "left": state.left,
            "epochs": [e.model_dump_json() for e in state.epochs],
            "best_score": state.best_score,
            "best_epoch": state.best_epoch,
            "model": {k: v.detach().cpu() for k, v in state.model.items()},
            "best": None if best_is_current else state.best,
            "optimizer": state.optimizer,
            "scheduler": state.scheduler,
            "python_rng": state.python_rng,
            "torch_rng": state.torch_rng,
        }
        with atomic_directory(self.root) as tmp:
            torch.save(payload, tmp / STATE_FILE)

    def load(self) -> EpochState | None:
        """The saved state, or None when there is none or it belongs to another run (then
        it is removed, so the run starts over cleanly)."""
        path = self.root / STATE_FILE
        if not path.is_file():
            return None
        try:
            saved = torch.load(path, weights_only=True, map_location="cpu")
        except (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError):
            saved = None
        if not isinstance(saved, dict) or saved.get("digest") != self.digest:
            self.discard()
            return None
        return EpochState(
            epoch=int(saved["epoch"]),
            restarts=int(saved["restarts"]),
            left=int(saved["left"]),
            epochs=[EpochRecord.model_validate_json(e) for e in saved["epochs"]],
            best_score=float(saved["best_score"]),
            best_epoch=int(saved["best_epoch"]),
            model=saved["model"],
            best=saved["best"] if saved["best"] is not None else saved["model"],
            optimizer=saved["optimizer"],
            scheduler=saved["scheduler"],
            python_rng=saved["python_rng"],
            torch_rng=saved["torch_rng"],
        )

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
