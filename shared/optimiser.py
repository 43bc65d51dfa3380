"""AdamW with the fused kernel wherever torch has one for the parameters.

torch's default AdamW on CPU is the per-tensor loop (it picks ``foreach`` on CUDA only). For
the demo's MiniLM encoder (10.9 M trainable parameters, embeddings fixed) the fused kernel's
step is about 4.5 times faster on one thread, which shortens a demo-size annotator training by
about 5% on an idle machine (under the demo federation's load the per-tensor loop was a third
of the coordinator's training samples). Figures and command in docs/results.md, "The
federation demo's phases" (``benchmarks/optimiser_step.py``). The fused kernel computes the
same update. torch checks a fused optimiser's parameters only at its first step, so they are
checked here: the devices and floating-point types torch documents a fused AdamW for; any
other parameter gets the default loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

FUSED_DEVICES = frozenset({"cpu", "cuda", "xpu", "mps"})
"""Device types torch ships a fused AdamW kernel for (float64, float32, float16, bfloat16)."""


def _tensors(groups: list[Any]) -> list[Any]:
    tensors = []
    for group in groups:
        tensors += list(group["params"]) if isinstance(group, dict) else [group]
    return tensors


def fusable(tensors: Iterable[Any]) -> bool:
    """Whether a fused AdamW can step every one of ``tensors``."""
    import torch

    kinds = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
    return all(t.device.type in FUSED_DEVICES and t.dtype in kinds for t in tensors)


def adamw(params: Iterable[Any], **kwargs: Any) -> Any:
    """``torch.optim.AdamW(params, **kwargs)``, fused where every parameter allows it."""
    import torch

    groups = list(params)
    return torch.optim.AdamW(groups, fused=fusable(_tensors(groups)) or None, **kwargs)
