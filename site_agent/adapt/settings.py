"""Domain-adaptation settings; defaults are the QLoRA hyperparameters of the seed study."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from protocol.base import ProtocolModel

Quantization = Literal["auto", "nf4", "none"]


class AdaptSettings(ProtocolModel):
    """LoRA/QLoRA fine-tuning of the generator as a causal language model.

    ``batch_size`` documents go through the model per forward pass; the optimiser steps every
    ``gradient_accumulation`` passes (effective batch = product). ``max_steps`` caps the run
    for demo profiles; ``checkpoint_every`` optimiser steps a resumable checkpoint is saved.
    """

    lora_r: int = Field(8, gt=0)
    lora_alpha: int = Field(32, gt=0)
    lora_dropout: float = Field(0.05, ge=0.0, lt=1.0)
    weight_decay: float = Field(0.1, ge=0.0)
    learning_rate: float = Field(1e-4, gt=0.0)
    lr_scheduler: Literal["linear", "cosine", "constant"] = "linear"
    warmup_steps: int = Field(0, ge=0)
    batch_size: int = Field(16, gt=0)
    gradient_accumulation: int = Field(1, gt=0)
    epochs: int = Field(6, gt=0)
    max_length: int = Field(512, ge=8)
    max_steps: int | None = Field(None, gt=0)
    target_modules: tuple[str, ...] | Literal["auto"] = "auto"
    quantization: Quantization = "auto"
    gradient_checkpointing: bool = True
    checkpoint_every: int = Field(50, gt=0)
    keep_checkpoints: int = Field(2, gt=0)
    cpu_threads: int | None = Field(None, gt=0, description="torch threads on CPU; None=default")
    seed: int = 0

    @model_validator(mode="after")
    def _targets_named(self) -> AdaptSettings:
        if self.target_modules != "auto" and not self.target_modules:
            raise ValueError(
                "target_modules is empty; fix: name module suffixes such as ('q_proj', 'v_proj') "
                "or use 'auto'"
            )
        return self
