"""adapt_generator on a tiny Llama: saves a loadable adapter, resumes after interruption."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
import torch
from peft import PeftModel
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

from shared.errors import ConfigError
from site_agent.adapt.settings import AdaptSettings
from site_agent.adapt.train import adapt_generator

TEXTS = [f"Paciente de {n} años ingresa en el Hospital {n % 3} con fiebre." for n in range(24)]
FAST = AdaptSettings(
    base_model="tiny-llama",
    batch_size=4,
    max_steps=4,
    checkpoint_every=2,
    learning_rate=1e-2,
    max_length=32,
)


class Interrupted(Exception):
    pass


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_models import tiny_causal_lm

    return tiny_causal_lm(tmp_path_factory.mktemp("base") / "llama", TEXTS)


@pytest.fixture(scope="module")
def uninterrupted(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("full")
    adapt_generator(TEXTS, base, FAST, out)
    return out


def _weights(out: Path) -> dict[str, torch.Tensor]:
    return load_file(str(out / "adapter" / "adapter_model.safetensors"))


def test_adapter_is_saved_with_provenance_and_loads(base: Path, uninterrupted: Path) -> None:
    record = json.loads((uninterrupted / "adapt.json").read_text())
    assert record["steps"] == 4 and len(record["losses"]) == 4
    assert record["device"] == "cpu" and record["quantization"] == "none"
    assert record["settings"]["lora_r"] == 8
    assert record["provenance"]["config_digest"] == record["run_digest"]
    assert not (uninterrupted / "checkpoints").exists()
    model = PeftModel.from_pretrained(
        AutoModelForCausalLM.from_pretrained(base), uninterrupted / "adapter"
    )
    assert any("lora_A" in name for name, _ in model.named_parameters())
    lora_b = [w for k, w in _weights(uninterrupted).items() if "lora_B" in k]
    assert lora_b and any(w.abs().sum() > 0 for w in lora_b)  # training moved the adapter


def test_packing_fills_rows_with_short_notes_and_counts_real_tokens(
    base: Path, uninterrupted: Path, tmp_path: Path
) -> None:
    packed = json.loads((uninterrupted / "adapt.json").read_text())  # packing is the default
    padded = adapt_generator(TEXTS, base, FAST.model_copy(update={"packing": False}), tmp_path)
    assert packed["training_windows"] == padded.training_windows == len(TEXTS)
    assert packed["training_rows"] < padded.training_rows == len(TEXTS)  # 2+ notes a row
    assert packed["training_tokens"] == padded.training_tokens
    assert packed["tokens_per_second"] > 0 and padded.tokens_per_second is not None


def test_interrupted_run_resumes_from_checkpoint_and_matches(
    base: Path, uninterrupted: Path, tmp_path: Path
) -> None:
    def stop_after_three(done: int, total: int) -> None:
        if done == 3:
            raise Interrupted

    with pytest.raises(Interrupted):
        adapt_generator(TEXTS, base, FAST, tmp_path, progress=stop_after_three)
    assert [p.name for p in (tmp_path / "checkpoints").iterdir()] == ["step-0000002"]
    seen: list[int] = []
    result = adapt_generator(TEXTS, base, FAST, tmp_path, progress=lambda d, t: seen.append(d))
    assert result.resumed_from_step == 2
    assert seen == [3, 4]
    expected = _weights(uninterrupted)
    resumed = _weights(tmp_path)
    assert expected.keys() == resumed.keys()
    for key in expected:
        torch.testing.assert_close(resumed[key], expected[key])
    full = json.loads((uninterrupted / "adapt.json").read_text())["losses"]
    assert result.losses == pytest.approx(full, abs=1e-5)


def test_finished_run_is_not_trained_again(base: Path, uninterrupted: Path) -> None:
    calls: list[int] = []
    result = adapt_generator(
        TEXTS, base, FAST, uninterrupted, progress=lambda d, t: calls.append(d)
    )
    assert calls == [] and result.steps == 4


def test_checkpoint_from_other_settings_is_refused(base: Path, tmp_path: Path) -> None:
    def stop(done: int, total: int) -> None:
        if done == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        adapt_generator(TEXTS, base, FAST, tmp_path, progress=stop)
    changed = FAST.model_copy(update={"learning_rate": 5e-3})
    with pytest.raises(ConfigError, match="other settings"):
        adapt_generator(TEXTS, base, changed, tmp_path)


def test_qlora_path_runs_on_cpu_with_bitsandbytes(base: Path, tmp_path: Path) -> None:
    """The 4-bit path a GPU site takes (NF4 base + LoRA), run on bitsandbytes' CPU backend."""
    pytest.importorskip("bitsandbytes", reason="bitsandbytes is in the dev extra")
    settings = FAST.model_copy(update={"quantization": "nf4", "max_steps": 2})
    adapt_generator(TEXTS, base, settings, tmp_path)
    record = json.loads((tmp_path / "adapt.json").read_text())
    assert (record["quantization"], record["device"]) == ("nf4", "cpu")
    assert record["steps"] == 2 and all(loss == loss for loss in record["losses"])  # no NaN
    lora_b = [w for k, w in _weights(tmp_path).items() if "lora_B" in k]
    assert lora_b and any(w.abs().sum() > 0 for w in lora_b)


class CountingBudget:
    """A thread budget that offers one thread and counts how often it is read."""

    made: ClassVar[list[CountingBudget]] = []

    def __init__(self) -> None:
        self.reads = 0
        CountingBudget.made.append(self)

    def threads(self) -> int:
        self.reads += 1
        return 1


@pytest.mark.usefixtures("torch_threads")
def test_unpinned_cpu_threads_are_read_before_every_step(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unset, the step's threads come from the budget, not from what the last stage left."""
    from site_agent.adapt import train as module

    monkeypatch.setattr(module, "ThreadBudget", CountingBudget)
    CountingBudget.made.clear()
    torch.set_num_threads(2)  # what a previous stage of the same process left behind
    adapt_generator(TEXTS, base, FAST, tmp_path / "free")
    assert [b.reads for b in CountingBudget.made] == [FAST.max_steps]
    assert torch.get_num_threads() == 1
    pinned = FAST.model_copy(update={"cpu_threads": 2})
    adapt_generator(TEXTS, base, pinned, tmp_path / "pinned")
    assert len(CountingBudget.made) == 1 and torch.get_num_threads() == 2
