"""The chunked loss equals transformers' own loss, value and LoRA gradients, on tiny models."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from site_agent.adapt.data import collate
from site_agent.adapt.loss import chunked_causal_lm_loss
from site_agent.models.tiny import tiny_causal_lm

TEXTS = ["Paciente de 45 años ingresa en el hospital por dolor abdominal y fiebre."] * 3


@pytest.mark.parametrize(("arch", "chunk"), [("llama", 7), ("llama", 4096), ("gpt2", 5)])
def test_value_and_lora_gradients_match_the_full_loss(
    tmp_path: Path, arch: str, chunk: int
) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    path = tiny_causal_lm(tmp_path / arch, TEXTS, arch=arch)
    targets = ["q_proj", "v_proj"] if arch == "llama" else ["c_attn"]
    torch.manual_seed(0)
    model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(path),
        LoraConfig(r=4, target_modules=targets, init_lora_weights=False),
    )
    batch = collate([[1, 5, 9, 13, 17, 21, 2], [1, 6, 10, 14], [1, 7, 2]], pad_id=0)

    def grads(loss: torch.Tensor) -> list[torch.Tensor]:
        model.zero_grad()
        loss.backward()
        return [p.grad.clone() for p in model.parameters() if p.requires_grad]

    full = model(**batch).loss
    expected = grads(full)
    chunked = chunked_causal_lm_loss(model, chunk_tokens=chunk, **batch)
    got = grads(chunked)
    assert torch.allclose(chunked, full, atol=1e-6)
    assert all(torch.allclose(g, e, atol=1e-6) for g, e in zip(got, expected, strict=True))
