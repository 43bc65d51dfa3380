"""Which linear layers get LoRA adapters, per architecture (``model.config.model_type``)."""

from __future__ import annotations

from typing import Any

_LLAMA_LIKE = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

TARGET_MODULES: dict[str, tuple[str, ...]] = {
    "llama": _LLAMA_LIKE,
    "mistral": _LLAMA_LIKE,
    "qwen2": _LLAMA_LIKE,
    "qwen3": _LLAMA_LIKE,
    "gemma": _LLAMA_LIKE,
    "gemma2": _LLAMA_LIKE,
    "gemma3": _LLAMA_LIKE,
    "gemma3_text": _LLAMA_LIKE,
    "gpt2": ("c_attn", "c_proj", "c_fc"),
    "bloom": ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"),
    "gpt_neox": ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"),
}

_NEVER = ("lm_head", "embed_out", "wte", "embed_tokens")


def register_target_modules(model_type: str, modules: tuple[str, ...]) -> None:
    TARGET_MODULES[model_type] = modules


def _linear_leaf_names(model: Any) -> tuple[str, ...]:
    """Fallback for unknown architectures: every linear layer except the output head."""
    import torch

    names = {
        name.rsplit(".", 1)[-1]
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear)
    }
    return tuple(sorted(n for n in names if n not in _NEVER))


def target_modules_for(model: Any, requested: tuple[str, ...] | str = "auto") -> tuple[str, ...]:
    if requested != "auto":
        return tuple(requested)
    known = TARGET_MODULES.get(getattr(model.config, "model_type", ""))
    return known if known is not None else _linear_leaf_names(model)
