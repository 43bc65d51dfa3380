"""Load the base causal LM per the load plan and wrap it with LoRA adapters."""

from __future__ import annotations

from typing import Any

from shared.safe_models import from_pretrained
from site_agent.adapt.quantization import LoadPlan, load_kwargs
from site_agent.adapt.settings import AdaptSettings
from site_agent.adapt.targets import target_modules_for


def load_base(reference: Any, plan: LoadPlan) -> tuple[Any, Any]:
    """Tokenizer (with a pad token) and base model, 4-bit on CUDA or dense otherwise."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = from_pretrained(AutoTokenizer, reference)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model: Any = from_pretrained(AutoModelForCausalLM, reference, **load_kwargs(plan))
    if plan.quantization == "none" and plan.device == "cuda":
        model.to("cuda")
    return tokenizer, model


def attach_lora(
    model: Any,
    settings: AdaptSettings,
    plan: LoadPlan,
    trainable_tokens: dict[str, list[int]] | None = None,
) -> Any:
    """LoRA on the chosen linear layers, plus the embedding rows of added tokens; k-bit
    preparation first when the base is 4-bit."""
    from peft import get_peft_model, prepare_model_for_kbit_training

    # non-reentrant checkpointing: what torch recommends, and the reentrant default is going
    # away (torch warned on every QLoRA step of the CUDA check, docs/results.md)
    checkpointing = {"use_reentrant": False}
    if plan.quantization == "nf4":
        model = prepare_model_for_kbit_training(
            model,
            use_gradient_checkpointing=settings.gradient_checkpointing,
            gradient_checkpointing_kwargs=checkpointing,
        )
    elif settings.gradient_checkpointing and plan.device == "cuda":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=checkpointing)
        model.enable_input_require_grads()
    return get_peft_model(model, lora_config(model, settings, trainable_tokens))


def lora_config(
    model: Any, settings: AdaptSettings, trainable_tokens: dict[str, list[int]] | None = None
) -> Any:
    """The adapter's ``LoraConfig`` for ``model`` under ``[adapt]``."""
    from peft import LoraConfig

    return LoraConfig(
        r=settings.lora_r,
        lora_alpha=settings.lora_alpha,
        lora_dropout=settings.lora_dropout,
        target_modules=list(target_modules_for(model, settings.target_modules)),
        bias="none",
        task_type="CAUSAL_LM",
        trainable_token_indices=trainable_tokens or None,
    )
