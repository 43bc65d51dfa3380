"""Continuous batching over the model's cache: a note is the note it would be alone.

Oracle: transformers' own ``generate`` on one prompt at a time (greedy), and the same note
sampled with ``rows = 1`` (its own seed); the refill loop splices rows of different lengths
into one cache, so any error in masks, positions or the sliding window shows as a different
note."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
import torch

from site_agent.generate.nucleus import RowNucleusSampler
from site_agent.generate.refill import NoteRequest, refill_generate

EOS = list(range(1, 31, 2))  # many end tokens, so greedy notes end at many different lengths


def _greedy(scores: torch.Tensor, _generators: Sequence[torch.Generator]) -> torch.Tensor:
    return scores.argmax(dim=-1)


def _model(arch: str) -> Any:
    from transformers import (
        Gemma3ForCausalLM,
        Gemma3TextConfig,
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
    )

    torch.manual_seed(0)
    if arch == "llama":
        config: Any = LlamaConfig(
            vocab_size=50,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=256,
        )
        return LlamaForCausalLM(config).eval()
    if arch == "gpt2":  # learned absolute positions: wrong position ids show at once
        config = GPT2Config(vocab_size=50, n_embd=32, n_layer=2, n_head=2, n_positions=256)
        return GPT2LMHeadModel(config).eval()
    config = Gemma3TextConfig(  # sliding-window and global layers; notes outgrow the window
        vocab_size=50,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=6,
        max_position_embeddings=256,
    )
    config._attn_implementation = arch.split("-")[1]
    return Gemma3ForCausalLM(config).eval()


def _requests(count: int, seed: int = 1) -> list[NoteRequest]:
    rng = random.Random(seed)
    return [
        NoteRequest(i, [rng.randrange(12, 50) for _ in range(rng.randint(1, 9))], 100 + i)
        for i in range(count)
    ]


def _alone_with_generate(model: Any, request: NoteRequest, max_new: int) -> list[int]:
    ids = torch.tensor([list(request.prompt_ids)])
    out = model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=max_new,
        do_sample=False,
        eos_token_id=EOS,
        pad_token_id=0,
    )
    tokens = out[0, ids.shape[1] :].tolist()
    ends = [i for i, t in enumerate(tokens) if t in EOS]
    return tokens[: ends[0]] if ends else tokens


@pytest.mark.parametrize("arch", ["llama", "gpt2", "gemma3-eager", "gemma3-sdpa"])
def test_each_note_equals_generate_on_its_prompt_alone(arch: str) -> None:
    model = _model(arch)
    requests = _requests(14)
    expected = {r.key: _alone_with_generate(model, r, 16) for r in requests}
    assert len({len(t) for t in expected.values()}) > 3  # notes end at different lengths
    for rows in (1, 3, 6):
        got = list(
            refill_generate(
                model,
                requests,
                rows=rows,
                max_new_tokens=16,
                min_new_tokens=0,
                eos=EOS,
                pad_id=0,
                sample=_greedy,
            )
        )
        assert sorted(key for key, _ in got) == [r.key for r in requests]  # each note once
        assert dict(got) == expected, f"rows={rows}"


def test_a_sampled_note_is_the_same_alone_and_in_a_full_batch() -> None:
    model = _model("llama")
    requests = _requests(10, seed=2)
    sampler = RowNucleusSampler(top_p=0.9, temperature=1.0)

    def notes(rows: int, chosen: list[NoteRequest]) -> dict[int, list[int]]:
        return dict(
            refill_generate(
                model,
                chosen,
                rows=rows,
                max_new_tokens=20,
                min_new_tokens=0,
                eos=EOS,
                pad_id=0,
                sample=sampler,
            )
        )

    together = notes(5, requests)
    alone = {k: v for r in requests for k, v in notes(1, [r]).items()}
    assert together == alone
    reseeded = notes(5, [NoteRequest(r.key, r.prompt_ids, r.seed + 1) for r in requests])
    assert reseeded != together  # the seed, not the batch, decides the note


def test_no_note_ends_before_min_new_tokens_and_none_passes_the_budget() -> None:
    model = _model("gemma3-sdpa")
    got = dict(
        refill_generate(
            model,
            _requests(12, seed=3),
            rows=4,
            max_new_tokens=9,
            min_new_tokens=5,
            eos=EOS,
            pad_id=0,
            sample=RowNucleusSampler(top_p=1.0),
        )
    )
    assert len(got) == 12
    assert all(5 <= len(tokens) <= 9 for tokens in got.values())
    assert not any(set(tokens) & set(EOS) for tokens in got.values())


def test_the_batch_keeps_no_column_that_no_row_uses() -> None:
    from site_agent.generate.refill import RefillBatch

    model = _model("llama")
    batch = RefillBatch(model, EOS, _greedy)
    with torch.inference_mode():
        batch.admit([NoteRequest(0, [20] * 9, 0)], pad_id=0)
        batch.last = torch.tensor([21])
        for _ in range(3):
            batch.step()
        batch.admit([NoteRequest(1, [22, 23], 1)], pad_id=0)
        batch.last = torch.tensor([21, 24])
        assert batch.width == 12 and batch.mask.sum(dim=1).tolist() == [12, 2]
        batch.drop([0])  # the long note ends: only the short one's two columns stay
        assert batch.width == 2 and batch.mask.tolist() == [[1, 1]]
        assert all(layer.keys.shape[2] == 2 for layer in batch.cache.layers)
