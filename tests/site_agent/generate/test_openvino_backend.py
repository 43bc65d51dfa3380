"""The OpenVINO GenAI backend on a tiny Llama: exported once, cached, samples the requested
rows with the adapter applied at run time; refuses a restricted-vocabulary adapter."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from site_agent.generate.backend import PromptJob, backend_factory
from site_agent.generate.settings import GenerationSettings

MISSING = [
    name
    for name in ("openvino_genai", "optimum.intel")
    if importlib.util.find_spec(name.split(".")[0]) is None
]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"not installed: {MISSING} (pip install 'deid-synth[openvino]')"
)
TEXTS = [f"Paciente de {n} años ingresa en el Hospital {n % 3} con fiebre." for n in range(12)]


@pytest.fixture(scope="module")
def base_and_adapter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from site_agent.adapt.settings import AdaptSettings
    from site_agent.adapt.train import adapt_generator
    from tests.tiny_models import tiny_causal_lm

    root = tmp_path_factory.mktemp("ov")
    base = tiny_causal_lm(root / "lm", TEXTS)
    settings = AdaptSettings(
        base_model=str(base),
        batch_size=4,
        max_steps=8,
        max_length=32,
        quantization="none",
        learning_rate=5e-2,  # far from the base, so the adapter's effect shows
    )
    return base, Path(adapt_generator(TEXTS, base, settings, root / "out").adapter_dir)


def test_samples_every_row_with_the_adapter(
    base_and_adapter: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from site_agent.generate import openvino_backend

    monkeypatch.setattr(openvino_backend, "cache_root", lambda: tmp_path / "models")
    base, adapter = base_and_adapter
    settings = GenerationSettings(
        min_new_tokens=4, cpu_threads=1
    )  # one thread: what crashed OpenVINO 2026.4.1 plain
    backend = backend_factory("openvino")(base, adapter, settings, 6)
    texts = backend.generate([PromptJob("Paciente de", 3, 1), PromptJob("Hospital", 1, 2)])
    assert [len(t) for t in texts] == [3, 1]
    assert backend.tokens_generated >= 4 * 4  # min_new_tokens honoured
    assert backend.adapter is not None  # LoRA applied at run time, not merged
    exported = list((tmp_path / "openvino").iterdir())
    assert len(exported) == 1 and (exported[0] / "provenance.json").is_file()
    backend_factory("openvino")(base, adapter, settings, 6)  # second load: the cached export
    assert list((tmp_path / "openvino").iterdir()) == exported


def test_the_adapter_changes_what_is_written(
    base_and_adapter: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from site_agent.generate import openvino_backend

    monkeypatch.setattr(openvino_backend, "cache_root", lambda: tmp_path / "models")
    base, adapter = base_and_adapter
    greedy = GenerationSettings(
        top_k=1, min_new_tokens=8, cpu_threads=1
    )  # one thread: what crashed OpenVINO 2026.4.1 plain
    jobs = [PromptJob("Paciente de", 1, 1)]
    adapted = backend_factory("openvino")(base, adapter, greedy, 8).generate(jobs)
    plain = backend_factory("openvino")(base, None, greedy, 8).generate(jobs)
    assert adapted != plain


def test_refuses_a_restricted_adapter(tmp_path: Path) -> None:
    from shared.errors import ConfigError
    from site_agent.adapt.output_vocabulary import VOCABULARY_FILE

    (tmp_path / VOCABULARY_FILE).write_text("{}")
    with pytest.raises(ConfigError, match="vocabulary"):
        backend_factory("openvino")(tmp_path, tmp_path, GenerationSettings(), 4)
