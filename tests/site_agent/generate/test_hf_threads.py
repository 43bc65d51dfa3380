"""The transformers backend reads the thread budget before every batch, only when unset."""

from __future__ import annotations

import pytest


@pytest.mark.usefixtures("torch_threads")
def test_the_hf_backend_sets_threads_per_batch_only_when_unset(tmp_path: object) -> None:
    from pathlib import Path

    from site_agent.generate.backend import PromptJob
    from site_agent.generate.hf_backend import HFBackend
    from site_agent.generate.settings import GenerationSettings
    from site_agent.models.tiny import tiny_causal_lm

    model = tiny_causal_lm(Path(str(tmp_path)) / "lm", ["Paciente de 45 años ingresa."] * 3)
    auto = HFBackend(model, None, GenerationSettings(min_new_tokens=2), max_new_tokens=4)
    auto.generate([PromptJob("Paciente", 2, 1)])
    auto.generate([PromptJob("ingresa", 1, 2)])
    assert len(auto.threads_used) == 2 and all(t >= 1 for t in auto.threads_used)
    fixed = HFBackend(model, None, GenerationSettings(cpu_threads=1), max_new_tokens=4)
    fixed.generate([PromptJob("Paciente", 1, 1)])
    assert fixed.budget is None and fixed.threads_used == []
