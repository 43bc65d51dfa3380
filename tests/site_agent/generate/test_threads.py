"""Generation threads follow the cores other processes leave idle (psutil readings faked)."""

from __future__ import annotations

import pytest

from site_agent.generate import threads as module
from site_agent.generate.threads import ThreadBudget


class FakeProcess:
    def __init__(self, own: float) -> None:
        self.own = own

    def cpu_percent(self, interval: object = None) -> float:
        return self.own


@pytest.mark.parametrize(
    ("system_percent", "own_percent", "cores", "expected"),
    [
        (0.0, 0.0, 2, 2),  # idle machine: every core
        (100.0, 200.0, 2, 2),  # all of it was this process
        (50.0, 0.0, 2, 1),  # another job holds one of two cores
        (100.0, 0.0, 2, 1),  # both busy with others: still one thread
        (75.0, 100.0, 4, 2),  # 3 cores busy, one of them ours: 2 left
        (12.5, 0.0, 8, 7),
    ],
)
def test_threads_are_the_idle_cores(
    monkeypatch: pytest.MonkeyPatch,
    system_percent: float,
    own_percent: float,
    cores: int,
    expected: int,
) -> None:
    monkeypatch.setattr(module.psutil, "cpu_percent", lambda interval=None: system_percent)
    monkeypatch.setattr(module.psutil, "cpu_count", lambda: cores)
    monkeypatch.setattr(module.psutil, "Process", lambda: FakeProcess(own_percent))
    assert ThreadBudget(cores=cores).threads() == expected


@pytest.fixture
def torch_threads() -> object:
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)  # the backend sets torch's global thread count


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
