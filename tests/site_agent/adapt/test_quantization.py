"""Load-plan policy and the QLoRA config, checked without a GPU."""

from __future__ import annotations

import pytest
import torch

from shared.errors import ConfigError
from site_agent.adapt.quantization import (
    LoadPlan,
    choose_quantization,
    load_kwargs,
    nf4_config_kwargs,
)


@pytest.mark.parametrize(
    ("cuda", "requested", "bnb", "bf16", "expected"),
    [
        (True, "auto", True, True, ("nf4", "cuda", "bfloat16")),
        (True, "nf4", True, True, ("nf4", "cuda", "bfloat16")),
        (True, "none", True, True, ("none", "cuda", "bfloat16")),
        (True, "auto", False, True, ("none", "cuda", "bfloat16")),
        (False, "auto", True, True, ("none", "cpu", "bfloat16")),
        (False, "auto", False, False, ("none", "cpu", "float32")),
        (False, "none", False, True, ("none", "cpu", "bfloat16")),
        (False, "nf4", True, True, ("nf4", "cpu", "bfloat16")),
    ],
)
def test_load_plan_table(
    cuda: bool, requested: str, bnb: bool, bf16: bool, expected: tuple[str, str, str]
) -> None:
    plan = choose_quantization(cuda, requested, bnb, bf16)
    assert (plan.quantization, plan.device, plan.dtype) == expected


@pytest.mark.parametrize("cuda", [False, True])
def test_explicit_nf4_without_bitsandbytes_is_a_clear_error(cuda: bool) -> None:
    with pytest.raises(ConfigError, match="bitsandbytes") as caught:
        choose_quantization(cuda, "nf4", False)
    assert "fix:" in str(caught.value)
    assert "'auto'" in str(caught.value)


def test_unknown_quantization_is_refused() -> None:
    with pytest.raises(ConfigError, match="allowed"):
        choose_quantization(False, "int3")


def test_nf4_plan_builds_a_qlora_bitsandbytes_config() -> None:
    kwargs = load_kwargs(LoadPlan("nf4", "cuda", "bfloat16", "test"))
    config = kwargs["quantization_config"]
    assert config.load_in_4bit and not config.load_in_8bit
    assert config.bnb_4bit_quant_type == "nf4"
    assert config.bnb_4bit_use_double_quant is True
    assert config.bnb_4bit_compute_dtype == torch.bfloat16
    assert kwargs["device_map"] == {"": 0}
    assert load_kwargs(LoadPlan("nf4", "cpu", "bfloat16", "test"))["device_map"] == "cpu"
    assert nf4_config_kwargs()["bnb_4bit_quant_type"] == "nf4"


def test_plain_plan_loads_dense_weights_in_its_dtype() -> None:
    assert load_kwargs(LoadPlan("none", "cpu", "float32", "test")) == {"dtype": torch.float32}


def test_cpu_threads_are_pinned_only_on_cpu_runs() -> None:
    from site_agent.adapt.quantization import apply_cpu_threads

    before = torch.get_num_threads()
    try:
        apply_cpu_threads(1, "cuda")
        assert torch.get_num_threads() == before
        apply_cpu_threads(None, "cpu")
        assert torch.get_num_threads() == before
        apply_cpu_threads(1, "cpu")
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
