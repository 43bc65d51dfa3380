"""Synthesis settings; defaults follow the seed study (nucleus p=0.95, t=1.0, 4x corpus)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from protocol.base import ProtocolModel


class GenerationSettings(ProtocolModel):
    """How many notes to sample, from which prompts, and with which sampler.

    The corpus size is ``samples_per_prompt`` per prompt when set, else ``size_multiple``
    times the training corpus (4.0 in the seed study; 0.05 and 1.0 for ablations), spread
    evenly over the prompts. ``max_new_tokens=None`` means "the longest validation document
    in tokens, but at least ``min_max_new_tokens``".
    """

    backend: str = Field("auto", description="'auto' or a registered backend: 'hf', 'vllm'")
    prompt_words: int = Field(3, gt=0)
    samples_per_prompt: int | None = Field(None, gt=0)
    size_multiple: float = Field(4.0, gt=0.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    temperature: float = Field(1.0, gt=0.0)
    top_k: int = Field(0, ge=0, description="0 disables top-k filtering")
    min_new_tokens: int = Field(10, ge=0)
    max_new_tokens: int | None = Field(None, gt=0)
    min_max_new_tokens: int = Field(50, gt=0)
    batch_size: int = Field(8, gt=0, description="documents generated (and saved) per batch")
    cpu_threads: int | None = Field(None, gt=0, description="torch threads on CPU; None=default")
    seed: int = 0
    lora_mode: Literal["request", "merge"] = "request"
    vllm_gpu_memory_utilization: float = Field(0.85, gt=0.0, le=1.0)
