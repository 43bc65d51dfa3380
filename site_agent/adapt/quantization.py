"""How the base model is loaded: 4-bit NF4 on CUDA (QLoRA) or plain bf16/fp32 weights (LoRA).

``choose_quantization`` is a pure policy over facts about the machine so that the GPU path
can be tested without a GPU; ``load_kwargs`` turns the plan into ``from_pretrained`` arguments
through a small registry keyed by quantization.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from shared.cpu_features import cpu_bf16_supported
from shared.errors import ConfigError

__all__ = ["LoadPlan", "choose_quantization", "cpu_bf16_supported", "load_kwargs"]


@dataclass(frozen=True)
class LoadPlan:
    """What to load the base model as, and why (recorded in ``adapt.json``)."""

    quantization: Literal["nf4", "none"]
    device: Literal["cuda", "cpu"]
    dtype: Literal["bfloat16", "float32"]
    reason: str


def bitsandbytes_importable() -> bool:
    return importlib.util.find_spec("bitsandbytes") is not None


def choose_quantization(
    cuda_available: bool,
    requested: str = "auto",
    bnb_importable: bool = False,
    bf16_supported: bool = True,
) -> LoadPlan:
    """The load plan for ``requested`` ("auto" | "nf4" | "none") on this machine.

    ``auto`` picks NF4 only on CUDA with bitsandbytes and falls back to plain LoRA otherwise.
    An explicit ``nf4`` also runs on CPU when bitsandbytes is installed (its CPU backend, since
    0.46: slow, but the same QLoRA code path a GPU site runs); without bitsandbytes it is a
    ConfigError naming the fix.
    """
    if requested not in ("auto", "nf4", "none"):
        raise ConfigError(
            f"quantization {requested!r} is not supported; allowed: 'auto', 'nf4', 'none'"
        )
    if requested != "none" and cuda_available and bnb_importable:
        return LoadPlan("nf4", "cuda", "bfloat16", "CUDA and bitsandbytes present: QLoRA")
    if requested == "nf4" and bnb_importable:
        return LoadPlan("nf4", "cpu", "bfloat16", "nf4 requested: QLoRA on bitsandbytes' CPU")
    if requested == "nf4":
        raise ConfigError(
            "quantization 'nf4' (QLoRA) needs the bitsandbytes package, which is not installed; "
            "fix: set quantization to 'auto' (falls back to plain LoRA) or 'none', or install "
            "the GPU extra with `pip install 'deid-synth[gpu]'`"
        )
    device: Literal["cuda", "cpu"] = "cuda" if cuda_available else "cpu"
    dtype: Literal["bfloat16", "float32"] = "bfloat16" if bf16_supported else "float32"
    why = "requested" if requested == "none" else "no CUDA or no bitsandbytes"
    return LoadPlan("none", device, dtype, f"{why}: plain LoRA on {device} in {dtype}")


def apply_cpu_threads(threads: int | None, device: str) -> None:
    """Pin torch's intra-op threads on CPU runs (``None`` keeps torch's default).

    On a machine shared with other jobs, fewer threads than cores is often much faster:
    measured 15x for SmolLM2 on 2 oversubscribed cores with 1 thread instead of 2.
    """
    if threads is not None and device == "cpu":
        import torch

        torch.set_num_threads(threads)


def nf4_config_kwargs() -> dict[str, Any]:
    """QLoRA's storage format: NF4 weights, double quantization, bf16 compute."""
    import torch

    return {
        "load_in_4bit": True,
        "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": True,
        "bnb_4bit_compute_dtype": torch.bfloat16,
    }


def _nf4_kwargs(plan: LoadPlan) -> dict[str, Any]:
    import torch
    from transformers import BitsAndBytesConfig

    return {
        "quantization_config": BitsAndBytesConfig(**nf4_config_kwargs()),
        "dtype": torch.bfloat16,
        "device_map": {"": 0} if plan.device == "cuda" else "cpu",
    }


def _plain_kwargs(plan: LoadPlan) -> dict[str, Any]:
    import torch

    return {"dtype": getattr(torch, plan.dtype)}


_LOADERS: dict[str, Callable[[LoadPlan], dict[str, Any]]] = {
    "nf4": _nf4_kwargs,
    "none": _plain_kwargs,
}


def load_kwargs(plan: LoadPlan) -> dict[str, Any]:
    """``from_pretrained`` keyword arguments for ``plan``."""
    return _LOADERS[plan.quantization](plan)
