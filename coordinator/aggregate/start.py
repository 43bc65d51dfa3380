"""Where FedAvg starts: the base encoder, or the sites' exported encoders averaged.

An exported encoder was trained on its site's synthetic corpus and tags in that site's own
labels, so only the encoder body is averaged (weighted by each site's synthetic documents,
capped relative to the other sites); the classification head stays the seeded head over the
shared labels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from coordinator.aggregate.weighted_mean import weighted_mean

WEIGHTS = "model.safetensors"


def average_into(initial: Path, encoders: list[tuple[Path, float]]) -> list[str]:
    """Overwrite the body tensors of ``initial`` with the weighted mean of ``encoders``;
    returns the tensor names replaced (those every encoder has with the same shape)."""
    target = load_file(str(initial / WEIGHTS))
    loaded = [(load_file(str(folder / WEIGHTS)), n) for folder, n in encoders if n > 0]
    total = sum(n for _, n in loaded)
    if not loaded or total <= 0:
        return []
    replaced = []
    for name, tensor in target.items():
        if name.startswith("classifier") or not np.issubdtype(tensor.dtype, np.floating):
            continue
        found = [(w[name], n) for w, n in loaded if name in w and w[name].shape == tensor.shape]
        if len(found) != len(loaded):
            continue
        target[name] = weighted_mean(found, tensor.dtype)
        replaced.append(name)
    save_file(target, str(initial / WEIGHTS), metadata={"format": "pt"})
    return replaced
