"""What the aggregate phase hands on: a model folder and what the report says about it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from protocol.rounds import TrainedModel


@dataclass(frozen=True)
class BuiltModel:
    """A trained model folder and what the report says about it."""

    info: TrainedModel
    model_dir: Path
