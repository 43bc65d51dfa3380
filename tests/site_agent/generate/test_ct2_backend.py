"""The CTranslate2 backend on a tiny Llama: converted once (cached with provenance), seeded,
``n`` samples per prompt, prompt text excluded, and the full-vocabulary nucleus by default."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ctranslate2")

from site_agent.generate.backend import PromptJob
from site_agent.generate.ct2_backend import PROVENANCE, CT2Backend, converted_model
from site_agent.generate.settings import GenerationSettings
from site_agent.models.tiny import tiny_causal_lm

TEXTS = ["Paciente de 45 años ingresa en el hospital por dolor abdominal."] * 4


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_causal_lm(tmp_path_factory.mktemp("lm") / "tiny", TEXTS)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DEID_SYNTH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_conversion_is_cached_with_its_provenance(model: Path, cache: Path) -> None:
    first = converted_model(model, None)
    assert (first / PROVENANCE).is_file() and (first / "model.bin").is_file()
    stamp = (first / "model.bin").stat().st_mtime_ns
    assert converted_model(model, None) == first
    assert (first / "model.bin").stat().st_mtime_ns == stamp
    assert cache in first.parents


def test_samples_per_job_seeded_and_without_the_prompt(model: Path, cache: Path) -> None:
    settings = GenerationSettings(min_new_tokens=3, cpu_threads=1, seed=5)
    backend = CT2Backend(model, None, settings, max_new_tokens=8)
    jobs = [PromptJob("Paciente de", 2, seed=5), PromptJob("ingresa en", 1, seed=5)]
    first = backend.generate(jobs)
    assert [len(texts) for texts in first] == [2, 1]
    assert first[0][0] != first[0][1]  # two samples, not one copied
    again = CT2Backend(model, None, settings, max_new_tokens=8)
    assert again.generate(jobs) == first  # the run is reproducible from [generation] seed
    assert backend.tokens_generated >= 2 * 3 * 3
    kwargs = backend.sampling_kwargs()
    assert kwargs["sampling_topk"] == 0 and kwargs["sampling_topp"] == 0.95
    assert kwargs["include_prompt_in_result"] is False


def test_the_adapter_is_merged_and_names_its_own_conversion(
    model: Path, cache: Path, tmp_path: Path
) -> None:
    import json

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    peft_model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(model),
        LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False),
    )
    adapter = tmp_path / "adapter"
    peft_model.save_pretrained(adapter)
    plain, adapted = converted_model(model, None), converted_model(model, adapter)
    assert plain != adapted
    record = json.loads((adapted / PROVENANCE).read_text())
    assert record["adapter_sha256"] and record["quantization"] == "int8"
    assert (plain / "model.bin").read_bytes() != (adapted / "model.bin").read_bytes()
