"""Which linear layers get LoRA adapters, per architecture (``model.config.model_type``)."""

from __future__ import annotations

from typing import Any

from shared.registry import Registry

_LLAMA_LIKE = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

TARGET_MODULES: Registry[tuple[str, ...]] = Registry("LoRA target table")
"""``model.config.model_type`` -> the linear layers that get LoRA adapters."""
for _model_type in ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3"):
    TARGET_MODULES.add(_model_type, _LLAMA_LIKE)
TARGET_MODULES.add("gemma3_text", _LLAMA_LIKE)
TARGET_MODULES.add("gpt2", ("c_attn", "c_proj", "c_fc"))
TARGET_MODULES.add("bloom", ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"))
TARGET_MODULES.add("gpt_neox", ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"))

_NEVER = ("lm_head", "embed_out", "wte", "embed_tokens")


def register_target_modules(model_type: str, modules: tuple[str, ...]) -> None:
    TARGET_MODULES.add(model_type, modules, replace=True)


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
    model_type = getattr(model.config, "model_type", "")
    return (
        TARGET_MODULES.get(model_type)
        if model_type in TARGET_MODULES
        else (_linear_leaf_names(model))
    )
