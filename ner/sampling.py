"""What one training epoch sees under sparse PHI: PHI-free chunks down-sampled, entities weighted.

``EpochSampler`` keeps every PHI-bearing chunk and draws ``phi_free_per_phi`` PHI-free chunks
per PHI-bearing one afresh each epoch, so over epochs the model still sees the PHI-free text
(and learns not to tag it) without drowning the few entity words in ``O``. ``tag_weights`` is
the per-tag weight vector of the cross-entropy loss (``O`` 1, entity tags ``entity_weight``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ner.features import EncodedChunk
from shared.ner_tokens import IGNORE, OUTSIDE

if TYPE_CHECKING:
    import torch


def holds_phi(chunk: EncodedChunk, outside: int = 0) -> bool:
    """Whether some token of the chunk is labelled inside an entity."""
    return any(label not in (IGNORE, outside) for label in chunk.labels or ())


class EpochSampler:
    """Every PHI-bearing chunk, plus a fresh draw of PHI-free chunks each epoch."""

    def __init__(self, chunks: Sequence[EncodedChunk], phi_free_per_phi: float | None) -> None:
        self.phi = [c for c in chunks if holds_phi(c)]
        self.free = [c for c in chunks if not holds_phi(c)]
        self.keep = len(self.free)
        if phi_free_per_phi is not None and self.phi:
            self.keep = min(len(self.free), round(phi_free_per_phi * len(self.phi)))
        self.everything = list(chunks) if self.keep == len(self.free) else None

    @property
    def per_epoch(self) -> int:
        return len(self.phi) + self.keep

    def draw(self, rng: random.Random) -> list[EncodedChunk]:
        """The chunks of one epoch (the batches are shuffled later; order does not matter)."""
        if self.everything is not None:
            return self.everything
        return self.phi + rng.sample(self.free, self.keep)


def tag_weights(tags: Sequence[str], entity_weight: float) -> torch.Tensor | None:
    """Loss weight per tag id: 1 for ``O``, ``entity_weight`` for B-/I- tags (None when 1)."""
    import torch

    if entity_weight == 1.0:
        return None
    return torch.tensor([1.0 if t == OUTSIDE else entity_weight for t in tags])
