"""The transformers backend hands its output layer a contiguous input, so a frozen (merged)
layer is one matrix product, not a batched product over per-row copies of the weight."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from site_agent.generate.backend import PromptJob
from site_agent.generate.hf_backend import HFBackend
from site_agent.generate.settings import GenerationSettings
from tests.tiny_models import tiny_causal_lm


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_a_frozen_output_layer_reads_a_contiguous_input(tmp_path: Path, arch: str) -> None:
    model = tiny_causal_lm(tmp_path / "lm", ["Paciente de 45 años ingresa."] * 3, arch=arch)
    settings = GenerationSettings(min_new_tokens=3, cpu_threads=1)
    backend = HFBackend(model, None, settings, max_new_tokens=3)
    for parameter in backend.model.parameters():  # as after merging an adapter
        parameter.requires_grad_(False)
    seen: list[bool] = []
    head = backend.model.get_output_embeddings()
    spy = head.register_forward_pre_hook(lambda _m, args: seen.append(args[0].is_contiguous()))
    job = [PromptJob("Paciente de 45 años ingresa en", 3, 7)]
    with_hook = backend.generate(job)
    assert seen and all(seen)

    # without the hook the prompt step's input is the strided last-position slice
    backend.head_hook.remove()
    seen.clear()
    without = backend.generate(job)
    if arch == "llama":  # scores only the last position (logits_to_keep)
        assert seen[0] is False
    assert with_hook == without  # same samples: only the memory layout changed
    spy.remove()


def test_the_hook_keeps_the_logits(tmp_path: Path) -> None:
    model = tiny_causal_lm(tmp_path / "lm", ["Paciente de 45 años ingresa."] * 3)
    backend = HFBackend(model, None, GenerationSettings(cpu_threads=1), max_new_tokens=2)
    ids = backend.tokenizer(["Paciente de 45", "ingresa"], return_tensors="pt", padding=True)
    with torch.inference_mode():
        hooked = backend.model(**ids, logits_to_keep=1).logits
        backend.head_hook.remove()
        plain = backend.model(**ids, logits_to_keep=1).logits
    torch.testing.assert_close(hooked, plain)
