"""The vLLM backend for GPU sites: one ``LLM`` engine, the adapter served as a LoRA request.

vLLM is imported only when this backend is constructed. Request building is split into
plain functions (``sampling_kwargs``, ``engine_kwargs``) that are tested without vLLM.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from site_agent.adapt.output_vocabulary import read_vocabulary
from site_agent.generate.backend import PromptJob
from site_agent.generate.merge import adds_tokens, merge_adapter
from site_agent.generate.settings import GenerationSettings

SUPPORTED_LORA_RANKS = (8, 16, 32, 64, 128, 256, 320, 512)
LORA_NAME = "site-adapter"


def sampling_kwargs(
    settings: GenerationSettings,
    n: int,
    max_tokens: int,
    seed: int,
    top_k_disabled: int = -1,
    allowed: Sequence[int] | None = None,
) -> dict[str, Any]:
    """``SamplingParams`` arguments; ``top_k_disabled`` is the installed vLLM's "off" value;
    ``allowed``: the adapter's restricted output vocabulary (``vocabulary.json``). vLLM keeps
    the full output layer and masks every other token before its softmax, which is the
    restricted model's distribution (the kept rows are the adapter's; merged when it adds
    tokens)."""
    restricted = {"allowed_token_ids": list(allowed)} if allowed is not None else {}
    return {
        **restricted,
        "n": n,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "top_k": settings.top_k if settings.top_k > 0 else top_k_disabled,
        "min_tokens": settings.min_new_tokens,
        "max_tokens": max_tokens,
        "seed": seed,
    }


def adapter_rank(adapter: Path) -> int:
    return int(json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))["r"])


def lora_mode(adapter: Path | None, settings: GenerationSettings) -> str | None:
    """How vLLM gets the adapter: None without one; ``merge`` when it adds tokens (vLLM's
    per-request LoRA cannot grow the vocabulary), else ``[generation] lora_mode``."""
    if adapter is None:
        return None
    return "merge" if adds_tokens(adapter) else settings.lora_mode


def engine_kwargs(
    model: str | Path, adapter: Path | None, settings: GenerationSettings, max_new_tokens: int
) -> dict[str, Any]:
    """``vllm.LLM`` arguments: LoRA enabled at the smallest supported rank that fits."""
    kwargs: dict[str, Any] = {
        "model": str(model),
        "seed": settings.seed,
        "dtype": "auto",
        "gpu_memory_utilization": settings.vllm_gpu_memory_utilization,
        "max_model_len": max_new_tokens + 256,
    }
    if adapter is not None and lora_mode(adapter, settings) == "request":
        rank = adapter_rank(adapter)
        kwargs["enable_lora"] = True
        kwargs["max_loras"] = 1
        kwargs["max_lora_rank"] = next((r for r in SUPPORTED_LORA_RANKS if r >= rank), rank)
    return kwargs


class VLLMBackend:
    name = "vllm"

    def __init__(
        self,
        model: str | Path,
        adapter: Path | None,
        settings: GenerationSettings,
        max_new_tokens: int,
    ) -> None:
        import tempfile

        import vllm

        self._tmp = None
        mode = lora_mode(adapter, settings)
        if adapter is not None and mode == "merge":
            self._tmp = tempfile.TemporaryDirectory(prefix="deid-merged-")
            model = merge_adapter(model, adapter, Path(self._tmp.name))
        self.llm = vllm.LLM(**engine_kwargs(model, adapter, settings, max_new_tokens))
        self.lora_request = None
        if mode == "request":
            from vllm.lora.request import LoRARequest

            self.lora_request = LoRARequest(LORA_NAME, 1, str(adapter))
        self.settings = settings
        self.max_new_tokens = max_new_tokens
        self.top_k_disabled = vllm.SamplingParams().top_k
        vocabulary = read_vocabulary(adapter)
        self.allowed = vocabulary.ids if vocabulary is not None else None
        self.tokens_generated = 0

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]:
        import vllm

        params = [
            vllm.SamplingParams(
                **sampling_kwargs(
                    self.settings,
                    job.n,
                    self.max_new_tokens,
                    job.seed,
                    self.top_k_disabled,
                    self.allowed,
                )
            )
            for job in jobs
        ]
        outputs = self.llm.generate(
            [job.prompt for job in jobs], params, lora_request=self.lora_request, use_tqdm=False
        )
        self.tokens_generated += sum(len(c.token_ids) for o in outputs for c in o.outputs)
        return [[c.text for c in out.outputs] for out in outputs]

    def close(self) -> None:
        del self.llm
        if self._tmp is not None:
            self._tmp.cleanup()
