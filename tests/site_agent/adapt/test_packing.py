"""Sequence packing: whole windows in rows, and a packed batch trains exactly as the same
windows one by one would (no token sees another window; positions restart per window)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from site_agent.adapt.data import collate, collate_packed, pack_windows
from site_agent.adapt.loss import chunked_causal_lm_loss
from site_agent.models.tiny import tiny_causal_lm

TEXTS = ["Paciente de 45 años ingresa en el hospital por dolor abdominal y fiebre."] * 3
WINDOWS = [[1, 5, 9, 13, 17, 21, 2], [1, 6, 10, 14], [1, 7, 2], [1, 8, 11, 12, 2]]


def test_every_window_lands_whole_in_exactly_one_row_within_the_limit() -> None:
    rng = random.Random(3)
    windows = [[rng.randrange(3, 50) for _ in range(rng.randint(2, 16))] for _ in range(40)]
    rows = pack_windows(windows, 16)
    assert all(sum(len(w) for w in row) <= 16 for row in rows)
    flat = sorted(map(tuple, (w for row in rows for w in row)))
    assert flat == sorted(map(tuple, windows))
    assert len(rows) < len(windows)
    assert len(rows) >= -(-sum(map(len, windows)) // 16)  # no fewer than the token count allows
    assert pack_windows(windows, 16) == rows  # deterministic


def test_a_window_as_long_as_the_limit_gets_its_own_row() -> None:
    rows = pack_windows([[1] * 8, [2] * 3, [3] * 5], 8)
    assert rows == [[[1] * 8], [[3] * 5, [2] * 3]]


def test_packed_labels_never_target_a_window_start_or_padding() -> None:
    batch = collate_packed([[WINDOWS[1], WINDOWS[2]], [WINDOWS[3]]], pad_id=0)
    assert batch["input_ids"].tolist()[0] == [1, 6, 10, 14, 1, 7, 2]
    assert batch["position_ids"].tolist() == [[0, 1, 2, 3, 0, 1, 2], [0, 1, 2, 3, 4, 0, 1]]
    assert batch["labels"].tolist() == [
        [-100, 6, 10, 14, -100, 7, 2],
        [-100, 8, 11, 12, 2, -100, -100],
    ]
    assert "attention_mask" not in batch


def _lora(path: Path, arch: str) -> object:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    targets = ["q_proj", "v_proj"] if arch == "llama" else ["c_attn"]
    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")
    return get_peft_model(base, LoraConfig(r=4, target_modules=targets, init_lora_weights=False))


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize("chunked", [False, True])
def test_a_packed_batch_has_the_loss_and_gradients_of_its_windows_run_alone(
    tmp_path: Path, arch: str, chunked: bool
) -> None:
    model = _lora(tiny_causal_lm(tmp_path / arch, TEXTS, arch=arch), arch)

    def loss_and_grads(batch: dict[str, torch.Tensor], weight: float) -> torch.Tensor:
        if chunked:
            loss = chunked_causal_lm_loss(model, **batch)
        else:
            loss = model(**batch, use_cache=False).loss  # type: ignore[operator]
        (loss * weight).backward()
        return loss.detach()

    def grads() -> list[torch.Tensor]:
        return [p.grad.clone() for p in model.parameters() if p.requires_grad]  # type: ignore[attr-defined]

    # oracle: each window alone, no padding, weighted by its number of targets
    targets = sum(len(w) - 1 for w in WINDOWS)
    model.zero_grad()  # type: ignore[attr-defined]
    alone = (
        sum(
            float(loss_and_grads(collate([w], pad_id=0), (len(w) - 1) / targets)) * (len(w) - 1)
            for w in WINDOWS
        )
        / targets
    )
    expected = grads()
    model.zero_grad()  # type: ignore[attr-defined]
    packed = loss_and_grads(collate_packed(pack_windows(WINDOWS, 12), pad_id=0), 1.0)
    got = grads()
    assert float(packed) == pytest.approx(alone, abs=1e-5)
    assert all(torch.allclose(g, e, atol=1e-5) for g, e in zip(got, expected, strict=True))


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_gemma3_sliding_window_layers_keep_packed_windows_apart(attention: str) -> None:
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,  # sliding-window and global layers both
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=4,  # shorter than the windows, so the sliding mask matters
        max_position_embeddings=128,
    )
    config._attn_implementation = attention
    model = Gemma3ForCausalLM(config).eval()
    targets = sum(len(w) - 1 for w in WINDOWS)
    with torch.no_grad():
        alone = sum(
            float(model(**collate([w], pad_id=0), use_cache=False).loss) * (len(w) - 1)
            for w in WINDOWS
        )
        packed = model(**collate_packed(pack_windows(WINDOWS, 12), pad_id=0), use_cache=False)
    assert float(packed.loss) == pytest.approx(alone / targets, abs=1e-5)
