"""Request building, tested without vLLM or a GPU (the choice: ``test_engine_rule.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from site_agent.generate.hf_backend import hf_generation_kwargs
from site_agent.generate.settings import GenerationSettings
from site_agent.generate.vllm_backend import engine_kwargs, sampling_kwargs


def test_vllm_sampling_params_follow_the_seed_study() -> None:
    kwargs = sampling_kwargs(GenerationSettings(), n=80, max_tokens=612, seed=7)
    assert kwargs == {
        "n": 80,
        "temperature": 1.0,
        "top_p": 0.95,
        "top_k": -1,
        "min_tokens": 10,
        "max_tokens": 612,
        "seed": 7,
    }
    assert sampling_kwargs(GenerationSettings(), 1, 50, 0, top_k_disabled=0)["top_k"] == 0
    assert sampling_kwargs(GenerationSettings(top_k=40), 1, 50, 0)["top_k"] == 40


def _adapter(tmp_path: Path, rank: int) -> Path:
    (tmp_path / "adapter_config.json").write_text(json.dumps({"r": rank}))
    return tmp_path


@pytest.mark.parametrize(("rank", "engine_rank"), [(8, 8), (12, 16), (64, 64)])
def test_vllm_engine_serves_the_adapter_as_lora(
    tmp_path: Path, rank: int, engine_rank: int
) -> None:
    kwargs = engine_kwargs("base", _adapter(tmp_path, rank), GenerationSettings(seed=3), 100)
    assert kwargs["enable_lora"] is True
    assert kwargs["max_lora_rank"] == engine_rank
    assert kwargs["seed"] == 3 and kwargs["model"] == "base"
    assert kwargs["max_model_len"] > 100


def test_vllm_engine_without_lora_when_merged_or_absent(tmp_path: Path) -> None:
    merged = GenerationSettings(lora_mode="merge")
    assert "enable_lora" not in engine_kwargs("m", _adapter(tmp_path, 8), merged, 50)
    assert "enable_lora" not in engine_kwargs("m", None, GenerationSettings(), 50)


def test_hf_sampling_with_the_partial_nucleus_by_default() -> None:
    from site_agent.generate.nucleus import NucleusSampler

    kwargs = hf_generation_kwargs(GenerationSettings(temperature=0.8), max_new_tokens=77)
    (sampler,) = kwargs.pop("logits_processor")
    assert isinstance(sampler, NucleusSampler)
    assert (sampler.top_p, sampler.temperature, sampler.top_k) == (0.95, 0.8, 0)
    assert kwargs == {  # the sampler draws; generate takes its one-token rows greedily
        "do_sample": False,
        "top_p": None,
        "temperature": None,
        "top_k": None,
        "min_new_tokens": 10,
        "max_new_tokens": 77,
    }


def test_hf_sampling_with_the_library_sort_disables_top_k_and_sets_lengths() -> None:
    kwargs = hf_generation_kwargs(GenerationSettings(nucleus="sort"), max_new_tokens=77)
    assert kwargs == {
        "do_sample": True,
        "top_p": 0.95,
        "temperature": 1.0,
        "top_k": 0,
        "min_new_tokens": 10,
        "max_new_tokens": 77,
    }


def test_vllm_is_not_imported_by_the_package() -> None:
    import sys

    import site_agent.generate  # noqa: F401

    assert "vllm" not in sys.modules
